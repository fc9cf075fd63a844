"""Lookups made together (wordjudge.base.lookups.Coalesced): one call for what was asked meanwhile, never an answer
older than its question."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Collection, Mapping
from concurrent.futures import ThreadPoolExecutor

import pytest

from wordjudge.base.errors import AccessUnavailable
from wordjudge.base.lookups import Coalesced

from .helpers import run_async


class Store:
    """A store whose calls can be held, counting what each call was asked."""

    def __init__(self) -> None:
        self.values: dict[str, int] = {"a": 1, "b": 2, "c": 3}
        self.calls: list[list[str]] = []
        self.hold = threading.Event()
        self.hold.set()
        self.started = threading.Event()
        self.failing = False

    def fetch(self, keys: Collection[str]) -> Mapping[str, int]:
        self.calls.append(sorted(keys))
        seen = dict(self.values)  # what a query sees: the store as it was when the query started
        self.started.set()
        assert self.hold.wait(5)
        if self.failing:
            raise AccessUnavailable("error.access_store.closed")
        return {key: seen[key] for key in keys if key in seen}


async def _started(store: Store) -> None:
    deadline = time.monotonic() + 30
    while not store.started.is_set():
        assert time.monotonic() < deadline, "the call did not start in 30 s"
        await asyncio.sleep(0.001)


async def _held_call(store: Store, lookups: Coalesced[str, int], key: str) -> asyncio.Future[int | None]:
    """A lookup of ``key`` whose call has started and is held by the store (``store.hold.set()`` lets it end)."""
    store.hold.clear()
    lookup = asyncio.ensure_future(lookups.get(key))
    await _started(store)
    return lookup


def test_lookups_asked_while_a_call_runs_are_made_together_in_the_next() -> None:
    async def scenario() -> None:
        store = Store()
        lookups = Coalesced(store.fetch)
        first = await _held_call(store, lookups, "a")
        later = [asyncio.ensure_future(lookups.get(key)) for key in ("b", "c", "b", "zz")]
        await asyncio.sleep(0.01)  # lets them run as far as they would: none may join the running call
        assert store.calls == [["a"]]  # nothing asked meanwhile joined the running call
        store.hold.set()
        assert await first == 1
        assert await asyncio.gather(*later) == [2, 3, 2, None]
        assert store.calls == [["a"], ["b", "c", "zz"]]

    run_async(scenario())


def test_an_answer_comes_from_a_call_started_after_it_was_asked() -> None:
    # The device check's promise: a token revoked before a request arrived fails that request, even while a
    # lookup started before the revocation is still running.
    async def scenario() -> None:
        store = Store()
        lookups = Coalesced(store.fetch)
        before = await _held_call(store, lookups, "a")
        del store.values["a"]  # revoked while the first call runs
        after = asyncio.ensure_future(lookups.get("a"))
        await asyncio.sleep(0.01)  # lets it run as far as it would before the first call ends
        store.hold.set()
        assert await before == 1  # its query started before the change
        assert await after is None

    run_async(scenario())


def test_a_failed_call_fails_each_of_its_lookups_and_the_next_call_is_made() -> None:
    async def scenario() -> None:
        store = Store()
        lookups = Coalesced(store.fetch)
        store.failing = True
        results = await asyncio.gather(*(lookups.get(key) for key in "abc"), return_exceptions=True)
        assert [type(result) for result in results] == [AccessUnavailable] * 3
        store.failing = False
        assert await lookups.get("b") == 2

    run_async(scenario())


def test_a_lookup_whose_request_went_away_leaves_the_others_answered() -> None:
    async def scenario() -> None:
        store = Store()
        lookups = Coalesced(store.fetch)
        first = await _held_call(store, lookups, "a")
        gone = asyncio.ensure_future(lookups.get("b"))
        kept = asyncio.ensure_future(lookups.get("b"))
        await asyncio.sleep(0.01)  # lets both wait on the next call before one goes
        gone.cancel()
        store.hold.set()
        assert await first == 1
        assert await kept == 2
        with pytest.raises(asyncio.CancelledError):
            await gone

    run_async(scenario())


def test_each_event_loop_has_its_calls() -> None:
    # A loop that ended with a call running (a test's server stopped) must not leave a later loop's lookups
    # waiting for that call's answer, which never comes.
    store = Store()
    lookups = Coalesced(store.fetch)
    store.hold.clear()

    async def abandoned() -> None:
        asked.append(asyncio.ensure_future(lookups.get("a")))
        await _started(store)

    def first_loop() -> None:  # in a thread of its own: the browser tests keep a loop running in this one
        loop = asyncio.new_event_loop()
        loop.run_until_complete(abandoned())
        asked[0].cancel()  # its server stopped: its request went away
        loop.run_until_complete(asyncio.sleep(0))  # one turn of the loop: the cancellation is delivered
        loop.close()  # its call still running, whose answer it will never take

    asked: list[asyncio.Future[int | None]] = []
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(first_loop).result()
    store.hold.set()

    async def later() -> int | None:
        return await asyncio.wait_for(lookups.get("b"), 5)

    assert run_async(later()) == 2


def test_lookups_asked_in_one_turn_of_the_loop_are_one_call() -> None:
    # A burst of requests (answered together, sent again together) is checked with one query, not two.
    async def scenario() -> None:
        store = Store()
        lookups = Coalesced(store.fetch)
        assert await asyncio.gather(*(lookups.get(key) for key in "abc")) == [1, 2, 3]
        assert store.calls == [["a", "b", "c"]]

    run_async(scenario())
