"""Lookups by key that requests make at the same time, made together in one call off the event loop.

A device's token is checked against the access store on every request. In PostgreSQL that check is a
round trip to the database, and made on the event loop it held the loop while it waited: on the verdict
path with a synchronous standby, more than half of the loop's time (issue 21, docs/bench-postgres.md).
:class:`Coalesced` makes such lookups in a worker thread, one call for every key asked for meanwhile:

- a lookup asked for while no call runs starts one in the same turn of the event loop, once the requests
  already ready have asked too (an idle server adds no delay, and a burst of requests is one call);
- a lookup asked for while a call runs waits for the next call, which starts as that one ends. So every
  answer comes from a call that started after it was asked for: a token revoked before a request arrived
  is seen as revoked by that request, exactly as with one query a request.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable, Collection, Mapping
from typing import Generic, Protocol, TypeVar

K = TypeVar("K")
V = TypeVar("V")
K_in = TypeVar("K_in", contravariant=True)
V_out = TypeVar("V_out", covariant=True)


class Lookups(Protocol[K_in, V_out]):
    """Lookups by key: :class:`Coalesced` or :class:`InProcess`, as the store's place reads best."""

    async def get(self, key: K_in) -> V_out | None:
        """What is found for ``key``, or None."""
        ...


class InProcess(Generic[K, V]):
    """Lookups by key through ``fetch``, each made at once in the process, on the event loop: for a store read in
    the process (a SQLite file), quicker than any hand-off to a worker thread."""

    def __init__(self, fetch: Callable[[Collection[K]], Mapping[K, V]]) -> None:
        self._fetch = fetch

    async def get(self, key: K) -> V | None:
        """What ``fetch`` finds for ``key``, or None. Raises what ``fetch`` raises."""
        return self._fetch([key]).get(key)


class _Round(Generic[K, V]):
    """One event loop's lookups: those asked for since its running call started, and whether one runs."""

    def __init__(self) -> None:
        self.asked: dict[K, list[asyncio.Future[V | None]]] = {}
        self.running = False


class Coalesced(Generic[K, V]):
    """Lookups by key through ``fetch`` (given the keys, returns what it found for them: a missing key is
    not found), one call at a time in a worker thread, each for every key asked for since the last one
    started. Each event loop has its calls (a loop that ends with a call running leaves no other waiting);
    ``fetch`` must be thread-safe."""

    def __init__(self, fetch: Callable[[Collection[K]], Mapping[K, V]]) -> None:
        self._fetch = fetch
        self._rounds: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Round[K, V]] = weakref.WeakKeyDictionary()

    async def get(self, key: K) -> V | None:
        """What ``fetch`` finds for ``key``, or None. Raises what ``fetch`` raised for the call it was in."""
        loop = asyncio.get_running_loop()
        state = self._rounds.get(loop)
        if state is None:
            state = self._rounds[loop] = _Round()
        future: asyncio.Future[V | None] = loop.create_future()
        state.asked.setdefault(key, []).append(future)
        if not state.running:
            # Started once the requests already ready have asked too: a burst of them is one call, not two.
            state.running = True
            loop.call_soon(self._start, loop, state)
        return await future

    def _start(self, loop: asyncio.AbstractEventLoop, state: _Round[K, V]) -> None:
        asked, state.asked = state.asked, {}
        state.running = True
        call = loop.run_in_executor(None, self._fetch, list(asked))
        call.add_done_callback(lambda done: self._answer(loop, state, asked, done))

    def _answer(
        self,
        loop: asyncio.AbstractEventLoop,
        state: _Round[K, V],
        asked: dict[K, list[asyncio.Future[V | None]]],
        done: asyncio.Future[Mapping[K, V]],
    ) -> None:
        state.running = False
        failure = asyncio.CancelledError() if done.cancelled() else done.exception()
        found = {} if failure is not None else done.result()
        for key, futures in asked.items():
            for future in futures:
                if future.done():  # its request went away meanwhile
                    continue
                if failure is not None:
                    future.set_exception(failure)
                else:
                    future.set_result(found.get(key))
        if state.asked:  # asked for while this call ran: the next call starts now
            self._start(loop, state)
