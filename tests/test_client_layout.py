"""The web clients' layout (issue 47, point 5): a folder per program, and one for what programs share.

``kiosk/`` holds a folder per program, named for it (``kiosk/``, ``runner/``, ``docket/``, ``console/``, ``status/``),
``shared/`` for the modules and the stylesheet several programs use, and ``locales/`` (the catalogues, which the
server reads too). A program's files import their own folder's and shared/'s, never another program's; shared/
imports nothing of a program's, and holds only what two programs or more load (else it belongs to that program).
Read from the files themselves, as the browser follows them: each page's scripts and styles, then their imports.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from wordjudge.web.pages import PAGES, SERVICE_WORKER, WEB_DIR, web_files

SHARED = "shared"
CATALOGUES = "locales"
# A page's files (/static/<folder>/<file>) and a module's relative imports (static or dynamic).
_NAMED = re.compile(r'(?:src|href)="/static/([\w./-]+)"')
_IMPORTED = re.compile(r"""(?:\bfrom|\bimport)\s*\(?\s*["'](\.{1,2}/[\w./-]+)["']""")
# The one normal form of typed words (NFC, upper case, NFC again), written once for the clients.
_NORMAL_FORM = re.compile(r"\.normalize\(|\.toUpperCase\(")


def _folder(name: str) -> str:
    return name.split("/", 1)[0] if "/" in name else ""


def _imports(name: str, folder: Path = WEB_DIR) -> list[str]:
    """The client files ``name`` (a path in ``folder``) imports, as paths in ``folder``."""
    base = posixpath.dirname(name)
    return [posixpath.normpath(posixpath.join(base, target)) for target in _IMPORTED.findall(_read(folder, name))]


def _read(folder: Path, name: str) -> str:
    return (folder / name).read_text("utf-8")


def loaded_by(page: str, folder: Path = WEB_DIR) -> set[str]:
    """Every client file that ``page`` (a path in ``folder``) loads: its scripts and styles and, in turn, what each
    script imports."""
    waiting, seen = [page, *_NAMED.findall(_read(folder, page))], set()
    while waiting:
        name = waiting.pop()
        if name not in seen:
            seen.add(name)
            waiting += _imports(name, folder) if name.endswith(".js") else []
    return seen


def test_the_import_reader_follows_both_kinds_of_path(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / SHARED).mkdir()
    (tmp_path / "a" / "a.html").write_text('<script type="module" src="/static/a/a.js"></script>')
    (tmp_path / "a" / "a.js").write_text('import { x } from "./b.js";\nimport("../shared/c.js");\n')
    (tmp_path / "a" / "b.js").write_text("export const x = 1;\n")
    (tmp_path / SHARED / "c.js").write_text('import {\n  y,\n} from "./d.js";\n')
    (tmp_path / SHARED / "d.js").write_text("export const y = 2;\n")
    assert loaded_by("a/a.html", tmp_path) == {"a/a.html", "a/a.js", "a/b.js", "shared/c.js", "shared/d.js"}


def test_every_client_file_lies_in_a_program_folder_or_shared() -> None:
    folders = {_folder(name) for name in web_files()}
    programs = {_folder(page) for page in PAGES.values()}
    assert programs == {"status", "kiosk", "runner", "console", "docket"}
    assert folders == {*programs, SHARED, CATALOGUES}, folders  # "" would be a file left at the top


def test_each_page_loads_only_its_own_folder_and_shared() -> None:
    for path, page in PAGES.items():
        program = _folder(page)
        files = loaded_by(page)
        assert len(files) > 2, (path, files)
        strays = sorted(name for name in files if _folder(name) not in {program, SHARED})
        assert strays == [], f"{path} ({program}/) loads another program's files: {strays}"
        missing = sorted(name for name in files if not (WEB_DIR / name).is_file())
        assert missing == [], f"{path} names files that are not there: {missing}"


def test_shared_imports_nothing_of_a_program() -> None:
    shared = [name for name in web_files() if _folder(name) == SHARED and name.endswith(".js")]
    assert len(shared) > 10
    strays = {name: found for name in shared if (found := [n for n in _imports(name) if _folder(n) != SHARED])}
    assert strays == {}, f"shared modules importing a program's: {strays}"


def test_shared_holds_only_what_two_programs_load() -> None:
    users: dict[str, set[str]] = {}
    for page in PAGES.values():
        for name in loaded_by(page):
            users.setdefault(name, set()).add(_folder(page))
    # The service worker is no page's import: /sw.js, the offline shell of the kiosk, the handheld and the docket.
    alone = sorted(
        f"{name}: {sorted(users.get(name, set()))}"
        for name in web_files()
        if _folder(name) == SHARED and name != SERVICE_WORKER and len(users.get(name, set())) < 2
    )
    assert alone == [], f"move these to the one program that loads them (or delete them): {alone}"


def test_the_normal_form_is_written_once_for_the_clients() -> None:
    # Typed words are normalised by shared/words.js's normalise alone (checked against the server's in
    # tests/js/words.test.mjs): a second spelling of it elsewhere could drift from the server's.
    written = sorted(name for name in web_files() if name.endswith(".js") and _NORMAL_FORM.search(_read(WEB_DIR, name)))
    assert written == ["shared/words.js"], written
