"""Metrics for Prometheus, kept and rendered by its own client library (``prometheus_client``).

:class:`Metrics` is wordjudge's set, in a registry of its own (never the library's global one:
each app has its own, and the tests make many): adjudications by kind, division and verdict,
their latency and the retries answered, counted as they happen; and what is read at each scrape
by a collector (:class:`State`: rate-limit refusals, devices online, the audit log's writer, the
lexicons served, health, disk space). Rendered in the text exposition format 0.0.4.

Nothing here imports the web framework or the command line, and nothing is created at import
time: the server's :class:`Metrics` belongs to its :class:`~wordjudge.service.resources.Resources`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import prometheus_client
from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4, generate_latest

CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4  # what generate_latest writes: "text/plain; version=0.0.4; charset=utf-8"

# Seconds: a challenge is a lookup (microseconds) and an fsync'd commit (milliseconds, more under load).
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)

DEVICE_ROLES = ("kiosk", "runner", "monitor")
REFUSAL_REASONS = ("challenges", "login", "pairing")


@dataclass(frozen=True)
class State:
    """What the server is like at the moment of a scrape, read from the resources."""

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


class Metrics:
    """wordjudge's metrics. Adjudications are counted as they are recorded; the state is handed in at each scrape."""

    def __init__(self) -> None:
        # The series are the ones the text format has always had: no <name>_created beside each counter.
        prometheus_client.disable_created_metrics()  # type: ignore[no-untyped-call]
        self.registry = r = CollectorRegistry()
        self.adjudications = Counter(
            "wordjudge_adjudications_total",
            "Records appended to the audit log, by kind (challenge, recheck, reissue, ruling), division and verdict. "
            "A retry answered with the record it already has is not counted here.",
            ("kind", "division", "verdict"),
            registry=r,
        )
        self.replays = Counter(
            "wordjudge_replayed_total",
            "Retries answered with the record already written (nothing appended).",
            ("kind",),
            registry=r,
        )
        self.latency = Histogram(
            "wordjudge_adjudication_seconds",
            "Time to handle an adjudication that was recorded: from the adjudication service taking it (rate limit, "
            "lookup) to its record committed to the audit log.",
            ("kind",),
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self._scrape = _Scrape()
        r.register(self._scrape)
        self._rendering = threading.Lock()  # one scrape's state at a time in the collector
        self._children: dict[tuple[str, str, str], tuple[Counter, Histogram]] = {}

    def adjudicated(self, kind: str, division: str, verdict: str, seconds: float, *, replayed: bool) -> None:
        """Count an adjudication answered: a new record (with its latency), or a retry's original record."""
        if replayed:
            self.replays.labels(kind=kind).inc()
            return
        # The labelled children, found once: prometheus_client's labels() checks and locks on every call.
        children = self._children.get((kind, division, verdict))
        if children is None:
            children = (
                self.adjudications.labels(kind=kind, division=division, verdict=verdict),
                self.latency.labels(kind=kind),
            )
            if len(self._children) < 10_000:  # divisions are few; never grow without bound all the same
                self._children[kind, division, verdict] = children
        children[0].inc()
        children[1].observe(seconds)

    def render(self, state: State) -> str:
        """Every metric in the text exposition format 0.0.4 (see :data:`CONTENT_TYPE`), with ``state``, what the
        server is like now (:func:`wordjudge.service.status.scrape_state` reads it)."""
        with self._rendering:
            self._scrape.state = state
            return generate_latest(self.registry).decode("utf-8")


class _Scrape:
    """The collector of what is read at scrape time (a :class:`State`, handed in by :meth:`Metrics.render`)."""

    def __init__(self) -> None:
        self.state = State(version="", healthy=False)  # the scrape's, set by Metrics.render before it collects
        # The totals counted elsewhere (the audit log's writer, the alerts), as last reported: a total never goes
        # down, even when two scrapes read theirs in one order and render them in the other (collected one at
        # a time, under Metrics.render's lock).
        self._totals: dict[tuple[str, str], float] = {}
        self._free_bytes = 0  # the last reading: kept while the file system cannot be read

    def _total(self, name: str, label: str, value: float) -> float:
        total = self._totals[name, label] = max(self._totals.get((name, label), 0.0), float(value))
        return total

    def collect(self) -> Iterator[Metric]:
        state = self.state
        refusals = CounterMetricFamily(
            "wordjudge_rate_limited_total",
            "Requests refused by a limit, by reason: challenges (a device over its challenges per minute), "
            "login (too many failed TD sign-ins), pairing (too many wrong pairing codes).",
            labels=("reason",),
        )
        for reason in dict.fromkeys([*REFUSAL_REASONS, *state.refusals]):
            refusals.add_metric([reason], self._total(refusals.name, reason, state.refusals.get(reason, 0)))
        yield refusals
        online = GaugeMetricFamily(
            "wordjudge_devices_online",
            "Enrolled devices, not revoked, seen in the last 2 minutes, by role.",
            labels=("role",),
        )
        enrolled = GaugeMetricFamily(
            "wordjudge_devices_enrolled", "Enrolled devices not revoked, by role.", labels=("role",)
        )
        for role in dict.fromkeys([*DEVICE_ROLES, *(role for role, _ in state.devices)]):
            online.add_metric([role], sum(r == role and on for r, on in state.devices))
            enrolled.add_metric([role], sum(r == role for r, _ in state.devices))
        yield online
        yield enrolled
        yield GaugeMetricFamily("wordjudge_audit_records", "Records in the audit log.", value=state.audit_records)
        commits = CounterMetricFamily(
            "wordjudge_audit_commits_total", "Transactions committed by the audit log's writer (one fsync each)."
        )
        commits.add_metric([], self._total(commits.name, "", state.audit_commits))
        yield commits
        failures = CounterMetricFamily(
            "wordjudge_audit_write_failures_total",
            "Records the audit log could not write (each refused with a 503 and no verdict).",
        )
        failures.add_metric([], self._total(failures.name, "", state.audit_failures))
        yield failures
        yield GaugeMetricFamily(
            "wordjudge_audit_queue_depth", "Records waiting for the audit log's writer.", value=state.audit_queue_depth
        )
        yield GaugeMetricFamily(
            "wordjudge_audit_writable",
            "1 unless the audit log's last write failed (0 until a write succeeds).",
            value=1 if state.audit_writable else 0,
        )
        lexicons = GaugeMetricFamily(
            "wordjudge_lexicon_info",
            "The lexicons and profiles served (always 1).",
            labels=("name", "fingerprint", "demo"),
        )
        for name, fingerprint, demo in state.lexicons:
            lexicons.add_metric([name, fingerprint, str(demo).lower()], 1)
        yield lexicons
        yield GaugeMetricFamily(
            "wordjudge_healthy", "1 when /api/health says ok, 0 when it says degraded.", value=1 if state.healthy else 0
        )
        if state.free_bytes is not None:
            self._free_bytes = state.free_bytes
        yield GaugeMetricFamily(
            "wordjudge_data_dir_free_bytes",
            "Free space on the data dir's file system, in bytes.",
            value=self._free_bytes,
        )
        build = GaugeMetricFamily(
            "wordjudge_build_info", "The wordjudge version serving (always 1).", labels=("version",)
        )
        build.add_metric([state.version], 1)
        yield build
