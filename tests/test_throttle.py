"""Throttles, on a clock the test moves."""

from __future__ import annotations

import pytest

from wordjudge.base.throttle import FailureLimit, RateLimit


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_rate_limit_allows_a_burst_then_one_per_interval() -> None:
    clock = Clock()
    limit = RateLimit(6, clock=clock)
    assert [limit.take("kiosk-1") for _ in range(6)] == [0.0] * 6
    assert limit.take("kiosk-1") == pytest.approx(10.0)  # 6 a minute: one every 10 s
    assert limit.take("kiosk-2") == 0.0  # each key has its own bucket
    clock.now += 10
    assert limit.take("kiosk-1") == 0.0
    assert limit.take("kiosk-1") > 0


def test_rate_limit_gives_back_and_zero_means_no_limit() -> None:
    clock = Clock()
    limit = RateLimit(1, clock=clock)
    assert limit.take("k") == 0.0
    assert limit.take("k") > 0
    limit.give_back("k")
    assert limit.take("k") == 0.0
    unlimited = RateLimit(0, clock=clock)
    assert all(unlimited.take("k") == 0.0 for _ in range(10_000))


def test_failure_limit_counts_failures_in_a_sliding_window() -> None:
    clock = Clock()
    limit = FailureLimit(3, 60, clock=clock)
    for _ in range(3):
        assert limit.wait("10.0.0.9") == 0.0
        limit.fail("10.0.0.9")
        clock.now += 1
    assert limit.wait("10.0.0.9") == pytest.approx(57.0)  # the first failure leaves the window at 1060
    assert limit.wait("10.0.0.8") == 0.0
    clock.now += 57
    assert limit.wait("10.0.0.9") == 0.0
    limit.clear("10.0.0.9")
    assert limit.wait("10.0.0.9") == 0.0


def test_idle_keys_are_forgotten() -> None:
    clock = Clock()
    limit = FailureLimit(1, 60, clock=clock)
    for n in range(10_001):
        limit.fail(n)
    clock.now += 61
    limit.fail("last")
    assert len(limit._failures) == 1
