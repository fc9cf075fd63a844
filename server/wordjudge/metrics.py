"""Metrics for Prometheus: a small registry of counters, gauges and histograms, and its text format.

:class:`Registry` holds metric families and renders them in the Prometheus text exposition
format 0.0.4 (``# HELP``, ``# TYPE``, one sample a line, label values escaped).
:class:`Metrics` is wordjudge's own set: adjudications by kind, division and verdict, their
latency, rate-limit refusals, devices online, the audit log's writer and the lexicons served.

Nothing here imports the web framework or the command line, and nothing is created at import
time: the server's :class:`Metrics` belongs to its :class:`~wordjudge.resources.Resources`.
Counting is thread-safe (each family has a lock); values are floats.
"""

from __future__ import annotations

import itertools
import math
import re
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

# Seconds: a challenge is a lookup (microseconds) and an fsync'd commit (milliseconds, more under load).
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)

_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
_LABEL = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")

Labels = tuple[str, ...]


def escape_label_value(value: str) -> str:
    """A label value as the text format writes it between double quotes: backslash, quote and newline escaped."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def format_value(value: float) -> str:
    """A sample value in the text format: integers without a fraction, ``+Inf``, ``-Inf``, ``NaN``."""
    value = float(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(value)


def _sample(name: str, names: Sequence[str], values: Sequence[str], value: float) -> str:
    if not names:
        return f"{name} {format_value(value)}"
    labels = ",".join(f'{n}="{escape_label_value(v)}"' for n, v in zip(names, values, strict=True))
    return f"{name}{{{labels}}} {format_value(value)}"


class Family:
    """A metric family: a name, its help text, its label names, and one value (or more) per label set."""

    kind: ClassVar[str] = "untyped"

    def __init__(self, name: str, help: str, labelnames: Sequence[str] = ()) -> None:
        """Raises :class:`ValueError` for a name or label name the text format does not allow."""
        if not _NAME.match(name):
            raise ValueError(f"not a metric name: {name!r}")
        for label in labelnames:
            if not _LABEL.match(label) or label.startswith("__") or label in self._reserved():
                raise ValueError(f"not a label name for {name}: {label!r}")
        if len(set(labelnames)) != len(labelnames):
            raise ValueError(f"repeated label name in {name}: {labelnames!r}")
        self.name = name
        self.help = help
        self.labelnames = tuple(labelnames)
        self._lock = threading.Lock()

    @staticmethod
    def _reserved() -> frozenset[str]:
        return frozenset()

    def _key(self, labels: Mapping[str, str]) -> Labels:
        if set(labels) != set(self.labelnames):
            raise ValueError(f"{self.name} takes the labels {self.labelnames}, not {tuple(labels)}")
        return tuple(str(labels[name]) for name in self.labelnames)

    def samples(self) -> Iterator[str]:
        """The family's sample lines, in the order their label sets first appeared."""
        raise NotImplementedError

    def render(self) -> list[str]:
        """The family in the text format: its HELP and TYPE lines, then its samples."""
        return [f"# HELP {self.name} {_escape_help(self.help)}", f"# TYPE {self.name} {self.kind}", *self.samples()]


class _Valued(Family):
    """A family with one number per label set (counters and gauges)."""

    def __init__(self, name: str, help: str, labelnames: Sequence[str] = ()) -> None:
        super().__init__(name, help, labelnames)
        self._values: dict[Labels, float] = {}
        if not self.labelnames:
            self._values[()] = 0.0  # an unlabelled metric exists from the start, at 0

    def value(self, **labels: str) -> float:
        """The current value for these labels (0 if never set)."""
        with self._lock:
            return self._values.get(self._key(labels), 0.0)

    def samples(self) -> Iterator[str]:
        with self._lock:
            items = list(self._values.items())
        for key, value in items:
            yield _sample(self.name, self.labelnames, key, value)


class Counter(_Valued):
    """A count that only goes up (since the server started). Its name should end in ``_total``."""

    kind = "counter"

    def inc(self, amount: float = 1.0, **labels: str) -> None:
        """Add ``amount`` (1 by default). Raises :class:`ValueError` for a negative amount or wrong labels."""
        if amount < 0:
            raise ValueError(f"a counter only goes up: {self.name} cannot take {amount}")
        key = self._key(labels)
        with self._lock:
            self._values[key] = self._values.get(key, 0.0) + amount

    def set_total(self, total: float, **labels: str) -> None:
        """Take the total from something that counts on its own (such as the audit log's writer).

        A total lower than the one already taken is ignored: a counter never goes down (two scrapes
        at once may read their totals in one order and set them in the other). Raises
        :class:`ValueError` for wrong labels.
        """
        key = self._key(labels)
        with self._lock:
            self._values[key] = max(self._values.get(key, 0.0), float(total))


class Gauge(_Valued):
    """A value that goes up and down (devices online, records in the log), set when it is read."""

    kind = "gauge"

    def set(self, value: float, **labels: str) -> None:
        """Set the value for these labels. Raises :class:`ValueError` for wrong labels."""
        key = self._key(labels)
        with self._lock:
            self._values[key] = float(value)

    def replace(self, values: Iterable[tuple[Mapping[str, str], float]]) -> None:
        """Replace every labelled value at once (label sets not given disappear). Raises :class:`ValueError`."""
        fresh = {self._key(labels): float(value) for labels, value in values}
        with self._lock:
            self._values = fresh


@dataclass
class _Buckets:
    counts: list[int]
    sum: float = 0.0
    count: int = 0


class Histogram(Family):
    """Observations counted into cumulative buckets (``le``), with their sum and count."""

    kind = "histogram"

    def __init__(self, name: str, help: str, buckets: Sequence[float], labelnames: Sequence[str] = ()) -> None:
        """Raises :class:`ValueError` for buckets that are not increasing, or bad names."""
        super().__init__(name, help, labelnames)
        bounds = [float(b) for b in buckets if not math.isinf(b)]
        if not bounds or any(b >= c for b, c in itertools.pairwise(bounds)):
            raise ValueError(f"{name}: buckets must be increasing numbers, not {buckets!r}")
        self.bounds = (*bounds, math.inf)
        self._series: dict[Labels, _Buckets] = {}
        if not self.labelnames:
            self._series[()] = _Buckets([0] * len(self.bounds))

    @staticmethod
    def _reserved() -> frozenset[str]:
        return frozenset({"le"})

    def observe(self, value: float, **labels: str) -> None:
        """Count one observation. Raises :class:`ValueError` for wrong labels."""
        key = self._key(labels)
        with self._lock:
            series = self._series.get(key)
            if series is None:
                series = self._series[key] = _Buckets([0] * len(self.bounds))
            for index, bound in enumerate(self.bounds):
                if value <= bound:
                    series.counts[index] += 1
                    break
            series.sum += value
            series.count += 1

    def count(self, **labels: str) -> int:
        """How many observations these labels have had."""
        with self._lock:
            series = self._series.get(self._key(labels))
            return series.count if series else 0

    def samples(self) -> Iterator[str]:
        with self._lock:
            items = [(key, _Buckets(list(s.counts), s.sum, s.count)) for key, s in self._series.items()]
        names = (*self.labelnames, "le")
        for key, series in items:
            cumulative = 0
            for bound, count in zip(self.bounds, series.counts, strict=True):
                cumulative += count
                le = "+Inf" if math.isinf(bound) else repr(bound)
                yield _sample(f"{self.name}_bucket", names, (*key, le), cumulative)
            yield _sample(f"{self.name}_sum", self.labelnames, key, series.sum)
            yield _sample(f"{self.name}_count", self.labelnames, key, series.count)


class Registry:
    """Metric families by name, rendered together in the order they were made."""

    def __init__(self) -> None:
        self._families: dict[str, Family] = {}

    def _add(self, family: Family) -> None:
        if family.name in self._families:
            raise ValueError(f"a metric named {family.name} exists already")
        self._families[family.name] = family

    def counter(self, name: str, help: str, labelnames: Sequence[str] = ()) -> Counter:
        """Make and register a counter. Raises :class:`ValueError` for a bad or taken name."""
        counter = Counter(name, help, labelnames)
        self._add(counter)
        return counter

    def gauge(self, name: str, help: str, labelnames: Sequence[str] = ()) -> Gauge:
        """Make and register a gauge. Raises :class:`ValueError` for a bad or taken name."""
        gauge = Gauge(name, help, labelnames)
        self._add(gauge)
        return gauge

    def histogram(self, name: str, help: str, buckets: Sequence[float], labelnames: Sequence[str] = ()) -> Histogram:
        """Make and register a histogram. Raises :class:`ValueError` for bad buckets or a bad or taken name."""
        histogram = Histogram(name, help, buckets, labelnames)
        self._add(histogram)
        return histogram

    def render(self) -> str:
        """Every family in the text exposition format 0.0.4 (see :data:`CONTENT_TYPE`)."""
        lines = [line for family in self._families.values() for line in family.render()]
        return "\n".join(lines) + "\n"


# -- wordjudge's metrics -------------------------------------------------------------------------


@dataclass(frozen=True)
class State:
    """What the server is like at the moment of a scrape: read from the resources, set into gauges."""

    version: str
    healthy: bool
    devices: Sequence[tuple[str, bool]] = ()  # (role, online) of each device not revoked
    lexicons: Sequence[tuple[str, str, bool]] = ()  # (name, fingerprint, demo) of each lexicon or profile served
    audit_records: int = 0
    audit_commits: int = 0
    audit_failures: int = 0
    audit_queue_depth: int = 0
    audit_writable: bool = True
    refusals: Mapping[str, int] = field(default_factory=dict)  # by reason: challenges, login, pairing
    free_bytes: int | None = None


DEVICE_ROLES = ("kiosk", "runner", "monitor")
REFUSAL_REASONS = ("challenges", "login", "pairing")


class Metrics:
    """wordjudge's metrics. Adjudications are counted as they are recorded; the rest is read at each scrape."""

    def __init__(self) -> None:
        r = self.registry = Registry()
        self.adjudications = r.counter(
            "wordjudge_adjudications_total",
            "Records appended to the audit log, by kind (challenge, recheck, reissue, ruling), division and verdict. "
            "A retry answered with the record it already has is not counted here.",
            ("kind", "division", "verdict"),
        )
        self.replays = r.counter(
            "wordjudge_replayed_total",
            "Retries answered with the record already written (nothing appended).",
            ("kind",),
        )
        self.latency = r.histogram(
            "wordjudge_adjudication_seconds",
            "Time to handle an adjudication that was recorded: from the adjudication service taking it (rate limit, "
            "lookup) to its record committed to the audit log.",
            LATENCY_BUCKETS,
            ("kind",),
        )
        self.refusals = r.counter(
            "wordjudge_rate_limited_total",
            "Requests refused by a limit, by reason: challenges (a device over its challenges per minute), "
            "login (too many failed TD sign-ins), pairing (too many wrong pairing codes).",
            ("reason",),
        )
        self.devices_online = r.gauge(
            "wordjudge_devices_online", "Enrolled devices, not revoked, seen in the last 2 minutes, by role.", ("role",)
        )
        self.devices_enrolled = r.gauge(
            "wordjudge_devices_enrolled", "Enrolled devices not revoked, by role.", ("role",)
        )
        self.audit_records = r.gauge("wordjudge_audit_records", "Records in the audit log.")
        self.audit_commits = r.counter(
            "wordjudge_audit_commits_total", "Transactions committed by the audit log's writer (one fsync each)."
        )
        self.audit_failures = r.counter(
            "wordjudge_audit_write_failures_total",
            "Records the audit log could not write (each refused with a 503 and no verdict).",
        )
        self.audit_queue = r.gauge("wordjudge_audit_queue_depth", "Records waiting for the audit log's writer.")
        self.audit_writable = r.gauge(
            "wordjudge_audit_writable", "1 unless the audit log's last write failed (0 until a write succeeds)."
        )
        self.lexicons = r.gauge(
            "wordjudge_lexicon_info", "The lexicons and profiles served (always 1).", ("name", "fingerprint", "demo")
        )
        self.healthy = r.gauge("wordjudge_healthy", "1 when /api/health says ok, 0 when it says degraded.")
        self.free_bytes = r.gauge(
            "wordjudge_data_dir_free_bytes", "Free space on the data dir's file system, in bytes."
        )
        self.build = r.gauge("wordjudge_build_info", "The wordjudge version serving (always 1).", ("version",))

    def adjudicated(self, kind: str, division: str, verdict: str, seconds: float, *, replayed: bool) -> None:
        """Count an adjudication answered: a new record (with its latency), or a retry's original record."""
        if replayed:
            self.replays.inc(kind=kind)
        else:
            self.adjudications.inc(kind=kind, division=division, verdict=verdict)
            self.latency.observe(seconds, kind=kind)

    def render(self, state: State) -> str:
        """Set the gauges and totals read at scrape time from ``state``, then render every metric."""
        self.build.replace([({"version": state.version}, 1)])
        self.healthy.set(1 if state.healthy else 0)
        for role in dict.fromkeys([*DEVICE_ROLES, *(role for role, _ in state.devices)]):
            self.devices_enrolled.set(sum(r == role for r, _ in state.devices), role=role)
            self.devices_online.set(sum(r == role and online for r, online in state.devices), role=role)
        self.lexicons.replace(
            ({"name": name, "fingerprint": fingerprint, "demo": str(demo).lower()}, 1)
            for name, fingerprint, demo in state.lexicons
        )
        self.audit_records.set(state.audit_records)
        self.audit_commits.set_total(state.audit_commits)
        self.audit_failures.set_total(state.audit_failures)
        self.audit_queue.set(state.audit_queue_depth)
        self.audit_writable.set(1 if state.audit_writable else 0)
        for reason in dict.fromkeys([*REFUSAL_REASONS, *state.refusals]):
            self.refusals.set_total(state.refusals.get(reason, 0), reason=reason)
        if state.free_bytes is not None:
            self.free_bytes.set(state.free_bytes)
        return self.registry.render()
