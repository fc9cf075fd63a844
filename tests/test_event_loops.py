"""A test's own event loop runs in a thread of its own (``helpers.run_async``), never with ``asyncio.run`` in the
test's thread: the browser tests' Playwright keeps a loop running in the process, and there ``asyncio.run``
raises, leaving its coroutine never awaited, whose warning then fails whichever test comes next (a whole check
failed so, on a test file that passed alone). Read with ``ast``; the benchmarks (tests/bench/) are left out.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def own_loops(text: str) -> list[int]:
    """The lines of ``text`` that call ``asyncio.run`` (a reference to it, handed to a thread, is not a call)."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "run"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "asyncio"
    ]


def test_no_test_runs_an_event_loop_in_the_tests_own_thread() -> None:
    found = [
        f"{path.relative_to(TESTS).as_posix()}:{line}"
        for path in sorted(TESTS.rglob("*.py"))
        if "bench" not in path.relative_to(TESTS).parts
        for line in own_loops(path.read_text("utf-8"))
    ]
    assert found == [], "run the coroutine with helpers.run_async (a loop in a thread of its own)"


def test_the_check_finds_a_call_and_lets_a_reference_be() -> None:
    assert own_loops("import asyncio\n\nasyncio.run(main())\n") == [3]
    assert own_loops("import asyncio\n\npool.submit(asyncio.run, main())\n") == []
