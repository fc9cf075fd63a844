"""The documentation, checked against the code (issue 37, point 3): the reference and the module map are what the
code gives, every option, setting and module is in them, the README stays short, every relative link leads to a
file (and heading) that exists, and the guide's ``console`` blocks run as written."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import click
import httpx2 as httpx
import pytest

from wordjudge.service.settings import Settings, env_name

from .docs_reference import (
    ARCHITECTURE,
    PACKAGE,
    REFERENCE,
    ROOT,
    architecture_with_map,
    commands,
    documented,
    render_reference,
)

README = ROOT / "README.md"
GUIDE = ROOT / "docs" / "guide.md"
MAX_README_LINES = 200
DOCUMENTS = [README, *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "deploy").glob("*.md"))]
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)


def missing_options(reference: str) -> list[str]:
    """Each option of each command that the reference's section for that command does not show, as
    ``command: --option``; an environment variable the section lacks counts as missing too."""
    sections = dict(re.findall(r"^### `([^`]+)`\n(.*?)(?=^### |^## |\Z)", reference, re.MULTILINE | re.DOTALL))
    missing = []
    for name, command in commands():
        section = sections.get(name, "")
        for item in documented(name, command):
            for text in (*item.opts, item.envvar or ""):
                if text and f"`{text}`" not in section:
                    missing.append(f"{name}: {text}")
    return missing


def missing_settings(reference: str) -> list[str]:
    """Each setting, or its environment variable, that the reference does not name."""
    return [
        text
        for field in Settings.model_fields
        for text in (f"`{field}`", f"`{env_name(field)}`")
        if text not in reference
    ]


def readme_too_long(text: str) -> bool:
    """Whether a README of this text passes the limit of lines."""
    return len(text.splitlines()) > MAX_README_LINES


def _anchors(path: Path) -> set[str]:
    """The anchors GitHub makes for the headings of a Markdown file (fenced code left out)."""
    found = set()
    for heading in re.findall(r"^#+ (.+)$", _FENCE.sub("", path.read_text("utf-8")), re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        found.add(slug)
    return found


def broken_links(path: Path) -> list[str]:
    """The relative links of a Markdown file whose file does not exist, or whose anchor is no heading of it."""
    broken = []
    for target in _LINK.findall(_FENCE.sub("", path.read_text("utf-8"))):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        linked = (path.parent / file).resolve() if file else path
        if not linked.exists() or (anchor and linked.suffix == ".md" and anchor not in _anchors(linked)):
            broken.append(target)
    return broken


def console_blocks(text: str) -> list[list[tuple[str, list[str]]]]:
    """The ``console`` blocks of a Markdown text: each a list of (command, the lines shown under it)."""
    blocks = []
    for body in re.findall(r"^```console\n(.*?)^```", text, re.MULTILINE | re.DOTALL):
        steps: list[tuple[str, list[str]]] = []
        for line in body.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            elif line.strip():
                if not steps:
                    raise ValueError(f"output before any command: {line!r}")
                steps[-1][1].append(line)
        blocks.append(steps)
    return blocks


def run_step(command: str, shown: list[str], folder: Path) -> str | None:
    """Run one command of a console block in ``folder`` with the venv's ``bin`` first on the PATH and the data
    folder there; None if it exits 0 and prints every line shown (spacing aside), else what went wrong."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("WORDJUDGE_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["WORDJUDGE_DATA_DIR"] = str(folder / "wordjudge-data")
    done = subprocess.run(
        ["bash", "-c", command], cwd=folder, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    output = done.stdout + done.stderr
    if done.returncode != 0:
        return f"{command!r} exited {done.returncode}: {output}"
    printed = {" ".join(line.split()) for line in output.splitlines()}
    absent = [line for line in shown if " ".join(line.split()) not in printed]
    return f"{command!r} did not print {absent}; it printed: {output}" if absent else None


def test_the_reference_is_what_the_code_gives() -> None:
    assert REFERENCE.read_text("utf-8") == render_reference(), (
        "docs/reference.md differs from the code: run .venv/bin/python -m tests.docs_reference --write"
    )


def test_the_reference_shows_every_option_and_setting() -> None:
    reference = REFERENCE.read_text("utf-8")
    assert missing_options(reference) == []
    assert missing_settings(reference) == []


def test_a_missing_option_or_setting_is_found() -> None:
    reference = REFERENCE.read_text("utf-8")
    assert "wordjudge witness: --once" in missing_options(reference.replace("`--once`", "`--one`"))
    assert "`WORDJUDGE_PEERS`" in missing_settings(reference.replace("`WORDJUDGE_PEERS`", "`PEERS`"))


def test_every_command_and_option_is_walked() -> None:
    names = [name for name, _ in commands()]
    assert {"wordjudge", "wordjudge serve", "wordjudge audit verify", "wordjudge standby promote"} <= set(names)
    serve = dict(commands())["wordjudge serve"]
    shown = {item.opts[0]: item for item in documented("wordjudge serve", serve)}
    assert shown["--port"].envvar == "WORDJUDGE_PORT"
    assert shown["--port"].default == "8000"
    options = sum(isinstance(p, click.Option) for _, command in commands() for p in command.params)
    assert options == sum(len(documented(name, command)) for name, command in commands())


def test_the_module_map_names_every_module_as_its_docstring_says() -> None:
    text = ARCHITECTURE.read_text("utf-8")
    assert text == architecture_with_map(text), (
        "docs/architecture.md's module map differs from the code: run .venv/bin/python -m tests.docs_reference --write"
    )
    absent = [
        path.relative_to(PACKAGE).as_posix()
        for path in sorted(PACKAGE.rglob("*.py"))
        if f"`{path.relative_to(PACKAGE).as_posix()}`" not in text
    ]
    assert absent == []


def test_a_module_map_without_its_markers_is_refused() -> None:
    with pytest.raises(ValueError, match="markers"):
        architecture_with_map("# The architecture\n")


def test_the_readme_stays_short() -> None:
    assert not readme_too_long(README.read_text("utf-8"))
    assert readme_too_long("line\n" * (MAX_README_LINES + 1))


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_relative_link_leads_somewhere(path: Path) -> None:
    assert broken_links(path) == []


def test_a_broken_link_is_found(tmp_path: Path) -> None:
    (tmp_path / "there.md").write_text("# A heading\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](there.md) [ok](there.md#a-heading) [web](https://example.org/x) [gone](missing.md) "
        "[no heading](there.md#elsewhere) [self](#nowhere)\n```sh\n[in code](ignored.md)\n```\n"
    )
    assert broken_links(page) == ["missing.md", "there.md#elsewhere", "#nowhere"]


def test_the_guides_console_blocks_run_as_written(tmp_path: Path) -> None:
    blocks = console_blocks(GUIDE.read_text("utf-8"))
    assert len(blocks) >= 3
    steps = [step for block in blocks for step in block]
    assert any(command.startswith("wordjudge event init") for command, _ in steps)
    failed = [problem for command, shown in steps if (problem := run_step(command, shown, tmp_path))]
    assert failed == []


def test_a_console_step_that_fails_or_prints_otherwise_is_caught(tmp_path: Path) -> None:
    [[(command, shown)]] = console_blocks("```console\n$ echo one  two\none two\n```\n")
    assert run_step(command, shown, tmp_path) is None
    assert run_step("echo one", ["two"], tmp_path) is not None
    assert run_step("false", [], tmp_path) is not None


# -- the README's Quick start, as a new TD types it --------------------------------------------------------------

# The README's sh blocks that are not the TD's first hour: .ci/check runs every check and the whole suite (this
# test among them).
_NOT_RUN = (".ci/check",)


def sh_blocks(text: str) -> list[list[str]]:
    """The ``sh`` blocks of a Markdown text, in order: each a list of its command lines."""
    return [
        [line for line in body.splitlines() if line.strip() and not line.lstrip().startswith("#")]
        for body in re.findall(r"^```sh\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    ]


def _fresh_shell(port: int) -> dict[str, str]:
    """A new terminal's environment: no venv on the PATH, no wordjudge setting but the port the README says to
    pick when 8000 is taken (``WORDJUDGE_PORT``)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("WORDJUDGE_", "VIRTUAL_ENV"))}
    env["PATH"] = os.pathsep.join(part for part in env.get("PATH", "").split(os.pathsep) if ".venv" not in part)
    env["WORDJUDGE_PORT"] = str(port)
    return env


@pytest.mark.live
@pytest.mark.timeout(1200)
def test_the_readmes_commands_run_as_typed_in_order_in_a_fresh_shell(tmp_path: Path) -> None:
    """Issue 46, item 4: each command of the README's sh blocks, in order, in a fresh shell (no venv activated) in a
    copy of the repository, as a clone gives it: the Quick start installs (printing no warning of the build) and
    serves, saying how to make the first TD account; in a second terminal, that account is made and a kiosk's
    pairing code printed. Before, the later commands were a bare `wordjudge`: "command not found"."""
    from .helpers import free_port

    clone = tmp_path / "wordjudge"
    for name in subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split(
        "\n"
    ):
        if name and (ROOT / name).is_file():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            (clone / name).write_bytes((ROOT / name).read_bytes())
    blocks = [block for block in sh_blocks(README.read_text("utf-8")) if block[0] not in _NOT_RUN]
    [quick_start], second_terminal = blocks[0], [line for block in blocks[1:] for line in block]
    assert quick_start.endswith(".venv/bin/wordjudge serve"), quick_start
    assert any(line.startswith(".venv/bin/wordjudge td add") for line in second_terminal), second_terminal
    port = free_port()
    env = _fresh_shell(port)
    server = subprocess.Popen(
        ["bash", "-c", quick_start], cwd=clone, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        deadline = time.monotonic() + 900  # a whole install, on a loaded 2-core machine
        while time.monotonic() < deadline and server.poll() is None:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=2).status_code in (200, 503):
                    break
            except httpx.TransportError:
                time.sleep(1)
        assert server.poll() is None, server.communicate()[0]
        for line in second_terminal:
            typed = "correct horse battery\ncorrect horse battery\n" if " td add " in line else None
            done = subprocess.run(
                ["bash", "-c", line], cwd=clone, env=_fresh_shell(port), input=typed, capture_output=True,
                text=True, timeout=120, check=False,
            )  # fmt: skip
            assert done.returncode == 0, f"{line}: {done.stdout}{done.stderr}"
            if "device pair" in line:
                assert f"http://127.0.0.1:{port}/kiosk#pair=" in done.stdout, done.stdout
    finally:
        server.send_signal(signal.SIGINT)  # Ctrl-C
        said = server.communicate(timeout=60)[0]
    assert "No TD account yet: to sign in to the TD console, make one with .venv/bin/wordjudge td add NAME" in said, (
        said
    )
    for warning in ("BuildBackendWarning", "SetuptoolsDeprecationWarning", "SetuptoolsWarning", "!!"):
        assert warning not in said, said  # the install warns of nothing


_CITED_TEST = re.compile(r"\b(test_[a-z0-9_]+)")
_DEFINED_TEST = re.compile(r"^\s*(?:async )?def (test_[a-z0-9_]+)", re.MULTILINE)


def _uncited(text: str, tests: Path) -> list[str]:
    """The test names ``text`` cites that are neither a test function nor a test module under ``tests``."""
    defined = {path.stem for path in tests.rglob("test_*.py")}
    for path in tests.rglob("*.py"):
        defined.update(_DEFINED_TEST.findall(path.read_text("utf-8")))
    return sorted(name for name in set(_CITED_TEST.findall(text)) if name not in defined)


def test_every_test_the_threat_model_cites_exists() -> None:
    """Each threat's proof is a test the suite runs: a test renamed or dropped leaves no row citing it."""
    assert _uncited((ROOT / "docs" / "threat-model.md").read_text("utf-8"), ROOT / "tests") == []


def test_a_threat_citing_a_test_that_is_gone_is_found(tmp_path: Path) -> None:
    (tmp_path / "test_kept.py").write_text("def test_kept_name() -> None:\n    pass\n", "utf-8")
    cited = "control: `tests/test_kept.py::test_kept_name`, `test_renamed_long_ago`"
    assert _uncited(cited, tmp_path) == ["test_renamed_long_ago"]
