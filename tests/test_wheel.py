"""The package as a user installs it: a wheel built from this tree, installed into a fresh venv, serving the kiosk.

Every other test runs the editable install, which reads server/, kiosk/ and lexicons/ where they lie: a folder
dropped from pyproject.toml's packages, or a client file its package data does not match, built a wheel without it
with every test still passing. Here the wheel is built from the tree's files (those git tracks or would track, as
they are now), installed with pip into a venv of its own (its dependencies reached through a path file to this
environment's site-packages, never its editable wordjudge), and that install must hold every module and client file
of the tree and serve ``/kiosk`` and what the page loads.
"""

from __future__ import annotations

import posixpath
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import httpx2 as httpx
import pytest

from .helpers import ServeProcess, free_port, wait_for_health

ROOT = Path(__file__).resolve().parent.parent
PACKAGED = {"server/wordjudge": "", "kiosk": "kiosk", "lexicons": "lexicons"}  # tree folder: folder in the package
SHIPPED = re.compile(r"\.(py|html|js|css|svg|json|toml|md|txt\.gz)$|py\.typed$")
_LOADED = re.compile(r'(?:src|href)="(/static/[\w./-]+\.(?:js|css))"')
# A module's relative imports: its own folder's (./) and shared/'s (../shared/), resolved from the module's URL.
_IMPORTED = re.compile(r"""(?:from|import)\s*\(?\s*["'](\.{1,2}/[\w./-]+\.js)["']""")

pytestmark = pytest.mark.live


def _tree_files() -> list[str]:
    """The files git tracks or would track (not ignored), as the working tree holds them."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return [name for name in listed.split("\0") if name and (ROOT / name).is_file()]


def _expected(files: list[str]) -> set[str]:
    """What the installed package must hold, as paths inside ``wordjudge/``: every module, client file and edition
    file of the tree's packaged folders (tests' caches and the like aside)."""
    expected = set()
    for name in files:
        for folder, inside in PACKAGED.items():
            if name.startswith(folder + "/") and SHIPPED.search(name) and "__pycache__" not in name:
                relative = name[len(folder) + 1 :]
                expected.add(f"{inside}/{relative}".lstrip("/"))
    return expected


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv holding the wheel built from this tree; returns its folder."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    for name in _tree_files():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(work), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    [wheel] = work.glob("wordjudge-*.whl")
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # The dependencies from this environment, after the venv's own site-packages: a path, not its .pth files (the
    # editable install's finder lives in one of those, and must not be the wordjudge imported).
    (Path(purelib) / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q", str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return venv


def _package(venv: Path) -> Path:
    found = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import wordjudge, pathlib; print(pathlib.Path(wordjudge.__file__).parent)",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return Path(found)


def test_the_wheel_holds_every_module_and_client_file_of_the_tree(installed: Path) -> None:
    package = _package(installed)
    assert package.is_relative_to(installed), f"{package}: not the wheel's install but another wordjudge"
    held = {str(path.relative_to(package)) for path in package.rglob("*") if path.is_file()}
    missing = sorted(_expected(_tree_files()) - held)
    assert missing == [], f"the wheel lacks {len(missing)} file(s): {missing[:20]}"


def test_the_installed_wheel_serves_the_kiosk_and_what_it_loads(installed: Path, tmp_path: Path) -> None:
    port = free_port()
    server = ServeProcess(
        [str(installed / "bin" / "wordjudge"), "serve", "--port", str(port), "--log-level", "warning"],
        {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "WORDJUDGE_DATA_DIR": str(tmp_path / "data")},
    )
    try:
        base = f"http://127.0.0.1:{port}"
        assert wait_for_health(base, server).status_code == 200
        for shell in ("/kiosk", "/runner", "/td"):
            page = httpx.get(base + shell, timeout=10)
            assert page.status_code == 200, shell
            assert 'id="app"' in page.text, shell
            # The page's scripts and styles, and every module they import in turn: each served.
            waiting, seen = list(_LOADED.findall(page.text)), set()
            assert waiting, f"{shell} names no script or style"
            while waiting:
                path = waiting.pop()
                if path in seen:
                    continue
                seen.add(path)
                answer = httpx.get(base + path, timeout=10)
                assert answer.status_code == 200, f"{shell}: {path} {answer.status_code}"
                folder = path.rsplit("/", 1)[0]
                waiting += (
                    [posixpath.normpath(f"{folder}/{name}") for name in _IMPORTED.findall(answer.text)]
                    if path.endswith(".js")
                    else []
                )
            assert len(seen) > 5, seen  # the kiosk's modules, not only its first script
            # No page names api.js: reached only through a program's import of ../shared/, followed and served.
            assert any(path.endswith("/shared/api.js") for path in seen), seen
    finally:
        server.terminate()
        server.communicate(timeout=30)
