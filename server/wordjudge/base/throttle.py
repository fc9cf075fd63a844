"""Throttles: how often an actor may do something, counted in memory.

Three shapes: a :class:`RateLimit` (a token bucket: so many per minute, with a burst
of the same size) for challenges, a :class:`FailureLimit` (at most so many
failures in a sliding window) for logins and pairing codes, where only wrong
guesses count, and a :class:`Pace` (one at a time, so many seconds apart) that
slows guessing down without refusing anyone. Each counts on the monotonic clock unless a test gives
one it can move, and forgets idle keys so that many clients cannot make it grow without bound. A
restart forgets every count, which is acceptable: a restart is rare and visible to the TD.

Every per-address limit (sign-ins, the kiosk's TD check, pairing codes, connections, requests) counts a
client under :func:`client_key`: an IPv6 client by its /64.
"""

from __future__ import annotations

import ipaddress
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Hashable

Clock = Callable[[], float]
_PRUNE_AT = 10_000  # keys held before idle ones are dropped


def client_key(host: str) -> str:
    """The client a per-address limit counts ``host`` as: IPv4 as it is, IPv6 by its /64 (one host on a LAN
    may take any address in its /64 at will), an IPv4-mapped IPv6 address as the IPv4 one."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


class RateLimit:
    """At most ``per_minute`` actions a minute per key, in bursts of up to ``per_minute``; 0 means no limit."""

    def __init__(self, per_minute: int, *, clock: Clock = time.monotonic) -> None:
        self.per_minute = per_minute
        self._clock = clock
        self._buckets: dict[Hashable, tuple[float, float]] = {}  # key -> (tokens, when counted)

    def take(self, key: Hashable) -> float:
        """Spend one action for ``key``: 0.0 if allowed, else the seconds until one is allowed again."""
        if self.per_minute <= 0:
            return 0.0
        now = self._clock()
        tokens = self._tokens(key, now)
        if tokens < 1:
            self._buckets[key] = (tokens, now)
            return (1 - tokens) * 60 / self.per_minute
        self._buckets[key] = (tokens - 1, now)
        if len(self._buckets) > _PRUNE_AT:
            self._prune(now)
        return 0.0

    def give_back(self, key: Hashable) -> None:
        """Return an action taken with :meth:`take` that turned out not to count (a retry, a refused input)."""
        if self.per_minute > 0 and key in self._buckets:
            tokens, when = self._buckets[key]
            self._buckets[key] = (min(self.per_minute, tokens + 1), when)

    def _tokens(self, key: Hashable, now: float) -> float:
        tokens, when = self._buckets.get(key, (self.per_minute, now))
        return min(self.per_minute, tokens + (now - when) * self.per_minute / 60)

    def _prune(self, now: float) -> None:
        full = [key for key in self._buckets if self._tokens(key, now) >= self.per_minute]
        for key in full:
            del self._buckets[key]


class FailureLimit:
    """At most ``limit`` failures per key in any ``window`` seconds; beyond that, the key must wait.

    With ``max_keys``, at most that many keys are held: a failure for a new key beyond it forgets the key
    whose latest failure is the oldest (for keys a client makes up at will, such as the names it types).
    """

    def __init__(
        self, limit: int, window: float, *, clock: Clock = time.monotonic, max_keys: int | None = None
    ) -> None:
        self.limit = limit
        self.window = window
        self.max_keys = max_keys
        self._clock = clock
        self._failures: OrderedDict[Hashable, deque[float]] = OrderedDict()  # oldest latest failure first

    def wait(self, key: Hashable) -> float:
        """0.0 if ``key`` may try now, else the seconds until it may."""
        now = self._clock()
        failures = self._recent(key, now)
        if len(failures) < self.limit:
            return 0.0
        return failures[0] + self.window - now

    def fail(self, key: Hashable) -> None:
        """Count a failure for ``key``."""
        now = self._clock()
        self._recent(key, now, keep=True).append(now)
        self._failures.move_to_end(key)
        while self.max_keys is not None and len(self._failures) > self.max_keys:
            self._failures.popitem(last=False)
        if len(self._failures) > _PRUNE_AT:
            for idle in [k for k, times in self._failures.items() if not times or times[-1] <= now - self.window]:
                del self._failures[idle]

    def clear(self, key: Hashable) -> None:
        """Forget ``key``'s failures (after a success)."""
        self._failures.pop(key, None)

    def undo(self, key: Hashable) -> None:
        """Take back the latest failure counted for ``key`` (an attempt counted before it was known to succeed)."""
        failures = self._failures.get(key)
        if failures:
            failures.pop()

    def count(self, key: Hashable) -> int:
        """How many failures ``key`` has in the window now."""
        return len(self._recent(key, self._clock()))

    def _recent(self, key: Hashable, now: float, *, keep: bool = False) -> deque[float]:
        """``key``'s failures in the window; a key without any is held only if ``keep`` (to count one)."""
        failures = self._failures.get(key)
        if failures is None:
            failures = deque()
            if keep:
                self._failures[key] = failures
        while failures and failures[0] <= now - self.window:
            failures.popleft()
        return failures


class Pace:
    """Spaces events of one key at least ``interval`` seconds apart: each caller books the next free slot.

    For slowing a guesser down without refusing anyone: a caller waits for its slot; only a caller
    whose slot is more than ``max_wait`` seconds away is refused (:meth:`book` returns None).
    """

    def __init__(self, interval: float, max_wait: float, *, clock: Clock = time.monotonic) -> None:
        self.interval = interval
        self.max_wait = max_wait
        self._clock = clock
        self._next: dict[Hashable, float] = {}  # key -> when its next slot is free

    def book(self, key: Hashable) -> float | None:
        """Book ``key``'s next slot: the seconds to wait for it, or None if that is over ``max_wait``."""
        now = self._clock()
        slot = max(now, self._next.get(key, now))
        if slot - now > self.max_wait:
            return None
        self._next[key] = slot + self.interval
        if len(self._next) > _PRUNE_AT:
            self._next = {k: t for k, t in self._next.items() if t > now}
        return slot - now
