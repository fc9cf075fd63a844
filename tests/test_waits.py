"""Every wait in a test waits for a condition, with a deadline (issue 47, point 6): a fixed sleep is too short on
a loaded 2-core machine and longer than needed on an idle one. Read with ``ast``: a sleep (``time.sleep``,
``asyncio.sleep``, Playwright's ``wait_for_timeout``) is either the pause of a loop that polls for something
until a deadline (a ``while`` loop that looks at the clock or a deadline, or a bounded ``for`` loop), or time
passing that IS what the test shows (a hold, a grace period, a look of the server that must change nothing),
and then its line says so in a comment. The benchmarks (tests/bench/) pace their load on purpose and are left out.
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SLEEPS = {"sleep", "wait_for_timeout"}
# What a polling loop's source names when it stops at a deadline.
DEADLINE_WORDS = ("monotonic", "deadline")


def _comments(text: str) -> dict[int, str]:
    """Each line's comment, by line number."""
    found: dict[int, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            found[token.start[0]] = token.string
    return found


def unexplained_sleeps(text: str) -> list[int]:
    """The lines of ``text`` (a test module) that sleep neither as the pause of a loop with a deadline nor with a
    comment on the line (or a comment line right above) saying why."""
    tree = ast.parse(text)
    comments = _comments(text)
    lines = text.splitlines()
    parents: dict[ast.AST, ast.AST] = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SLEEPS
        ) or not (node.func.attr == "wait_for_timeout" or ast.unparse(node.func.value) in ("time", "asyncio")):
            continue
        line = node.lineno
        above = lines[line - 2].strip() if line >= 2 else ""
        if line in comments or (above.startswith("#") and line - 1 in comments):
            continue
        if _in_a_loop_with_a_deadline(node, parents):
            continue
        found.append(line)
    return sorted(found)


def _in_a_loop_with_a_deadline(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    outer = parents.get(node)
    while outer is not None and not isinstance(outer, (ast.FunctionDef, ast.AsyncFunctionDef)):
        if isinstance(outer, ast.For):
            return True
        if isinstance(outer, ast.While):
            return any(word in ast.unparse(outer) for word in DEADLINE_WORDS)
        outer = parents.get(outer)
    return False


def test_every_sleep_in_the_tests_polls_with_a_deadline_or_says_why() -> None:
    found = {
        f"{path.relative_to(TESTS).as_posix()}:{line}"
        for path in sorted(TESTS.rglob("*.py"))
        if "bench" not in path.relative_to(TESTS).parts
        for line in unexplained_sleeps(path.read_text("utf-8"))
    }
    assert sorted(found) == [], "wait for the condition (helpers.eventually), or say in a comment why time must pass"


def test_the_check_tells_a_wait_from_time_under_test() -> None:
    text = (
        "import time\n"
        "def a(page, deadline):\n"
        "    time.sleep(1)\n"  # a fixed wait: found
        "    page.wait_for_timeout(300)\n"  # found
        "    while not ready():\n"  # a loop without a deadline: found
        "        time.sleep(0.1)\n"
        "    while not ready():\n"
        "        assert time.monotonic() < deadline\n"
        "        time.sleep(0.1)\n"  # a poll with a deadline
        "    for _ in range(3):\n"
        "        time.sleep(0.1)\n"  # bounded
        "    time.sleep(2)  # two looks of the server pass: nothing changes\n"
        "    # the hold itself\n"
        "    page.wait_for_timeout(1600)\n"
        "    other.sleep(1)\n"  # not a sleep of time or asyncio
    )
    assert unexplained_sleeps(text) == [3, 4, 6]
