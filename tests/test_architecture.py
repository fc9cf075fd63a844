"""The shape of the code, checked (issue 18): each module depends on few others, no class does everything,
the domain never imports the web framework or the command line, and modules stay a readable size.

Read from the source with :mod:`ast`, so that an import under ``TYPE_CHECKING`` or inside a function counts
as the dependency it is.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from pathlib import Path

PACKAGE = Path(__file__).parent.parent / "server" / "wordjudge"
# The layers, lowest first: a module imports modules of its own layer and of the layers below, never above.
LAYERS = (
    "base",
    "model",
    "storage",
    "words",
    "access",
    "log",
    "tournament",
    "judging",
    "hall",
    "service",
    "web",
    "cli",
)
# The thin shells: the web (FastAPI, Starlette, uvicorn) and the command line (click); no layer below imports them.
SHELLS = {"web", "cli"}
FRAMEWORKS = ("fastapi", "starlette", "click", "uvicorn")
MAX_PUBLIC_METHODS = 20
MAX_LINES = 600
MAX_FOLDER = 25  # modules in one folder (the anchors' biggest folder holds 44; uvicorn's 45 modules sit in 8)
MAX_FUNCTION = 120  # lines in one Python or JavaScript function (issue 47, point 5)
KIOSK = PACKAGE.parent.parent / "kiosk"  # the web clients: a folder per program and shared/ (any depth)
# The clients' string tables: one long object literal of texts, no logic to split.
STRING_TABLES = {"shared/texts.js:buildStrings", "shared/texts.js:consoleStrings"}
# Modules in the longest chain of module-level imports (the anchors: 4 to 12; issue 37 took it from 21 to 12).
MAX_CHAIN = 12


def _name(path: Path) -> str:
    """The dotted name of the module at ``path``, without the package's: ``log.audit``, ``web.routes.event``."""
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, ast.Module]:
    return {_name(path): ast.parse(path.read_text("utf-8")) for path in sorted(PACKAGE.rglob("*.py"))}


def _layer(name: str) -> str:
    return name.split(".")[0]


def imported(name: str, tree: ast.Module, *, top_level_only: bool = False) -> set[str]:
    """The package's modules that the module ``name`` imports, wherever the import is (at the top, under
    ``TYPE_CHECKING``, inside a function), or with ``top_level_only`` only those run when it is imported.
    ``from wordjudge.log import audit`` names ``log.audit``; ``from wordjudge.log.audit import AuditLog`` too."""
    known = set(_modules_names())
    found: set[str] = set()
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    for node in nodes:
        if (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and node.module
            and node.module.split(".")[0] == "wordjudge"
        ):
            base = node.module.removeprefix("wordjudge").removeprefix(".")
            subs = {f"{base}.{alias.name}".lstrip(".") for alias in node.names} & known
            found |= subs or ({base} if base else set())
        elif isinstance(node, ast.ImportFrom) and node.level > 0:
            raise AssertionError(f"{name}: a relative import (wordjudge imports absolutely, as uvicorn does)")
        elif isinstance(node, ast.Import):
            found |= {
                alias.name.removeprefix("wordjudge.") for alias in node.names if alias.name.startswith("wordjudge.")
            }
    return found - {name}


def _modules_names() -> list[str]:
    return [_name(path) for path in PACKAGE.rglob("*.py")]


def external(tree: ast.Module) -> set[str]:
    """The top-level names of the packages outside wordjudge that ``tree`` imports."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_imports_are_read_wherever_they_are() -> None:
    tree = ast.parse(
        "from typing import TYPE_CHECKING\nfrom wordjudge.model import records\nfrom wordjudge import __version__\n"
        "from wordjudge.log.audit import AuditLog\nif TYPE_CHECKING:\n    from wordjudge.tournament.event import Event\n"
        "def f():\n    from wordjudge.log.witness import Witness\n"
    )
    assert imported("judging.x", tree) == {"model.records", "log.audit", "tournament.event", "log.witness"}
    assert imported("judging.x", tree, top_level_only=True) == {"model.records", "log.audit"}


def test_every_module_sits_in_a_layer() -> None:
    loose = [name for name in _modules() if name not in ("", "__main__") and _layer(name) not in LAYERS]
    assert loose == [], f"modules outside the layers {LAYERS}: {loose}"


def test_no_layer_imports_a_higher_one() -> None:
    rank = {layer: n for n, layer in enumerate(LAYERS)}
    upward = {
        name: sorted(other for other in imported(name, tree) if other and rank[_layer(other)] > rank[_layer(name)])
        for name, tree in _modules().items()
        if _layer(name) in rank
    }
    upward = {name: found for name, found in upward.items() if found}
    assert upward == {}, f"imports of a higher layer: {upward}"
    # The package's root is its version alone, imported by every layer.
    assert imported("", _modules()[""]) == set()


def test_the_domain_imports_neither_the_web_framework_nor_the_command_line() -> None:
    leaks = {
        name: sorted(found)
        for name, tree in _modules().items()
        if _layer(name) not in SHELLS and name != "__main__" and (found := external(tree) & set(FRAMEWORKS))
    }
    assert leaks == {}, f"domain modules importing a framework: {leaks}"


def test_no_folder_holds_more_than_twenty_five_modules() -> None:
    folders = {
        str(folder.relative_to(PACKAGE)): len(list(folder.glob("*.py")))
        for folder in [PACKAGE, *PACKAGE.rglob("*/")]
        if folder.name != "__pycache__"
    }
    assert max(folders.values()) <= MAX_FOLDER, f"split these folders: {folders}"
    assert len(folders) >= len(LAYERS)


def chain(graph: dict[str, set[str]]) -> list[str]:
    """The longest chain of imports in ``graph`` (module -> the modules it imports at its top level)."""
    longest: dict[str, list[str]] = {}

    def walk(name: str, seen: frozenset[str]) -> list[str]:
        if name not in longest:
            best = [name]
            for other in graph.get(name, set()) - seen:
                path = [name, *walk(other, seen | {other})]
                best = max(best, path, key=len)
            longest[name] = best
        return longest[name]

    return max((walk(name, frozenset({name})) for name in graph), key=len)


def test_the_chain_check_finds_the_longest_chain() -> None:
    assert chain({"a": {"b", "c"}, "b": {"c"}, "c": {"d"}, "d": set()}) == ["a", "b", "c", "d"]


def test_the_longest_chain_of_module_level_imports_is_short() -> None:
    graph = {name: imported(name, tree, top_level_only=True) for name, tree in _modules().items()}
    found = chain(graph)
    assert len(found) <= MAX_CHAIN, f"{len(found)} modules: {' -> '.join(found)}"


# Room to change (issue 47, point 1): the longest chain is held two modules under the cap, so that the next module
# moved a layer down or the next import the layer rule allows does not meet the cap at once (at the cap, about 9 %
# of the allowed imports would have broken it). Take a level off elsewhere rather than spend this one.
HEADROOM = 2


def test_the_longest_chain_leaves_room_under_the_cap() -> None:
    graph = {name: imported(name, tree, top_level_only=True) for name, tree in _modules().items()}
    found = chain(graph)
    assert len(found) <= MAX_CHAIN - HEADROOM, f"{len(found)} modules, the cap less {HEADROOM}: {' -> '.join(found)}"


def cycle(graph: dict[str, set[str]]) -> list[str]:
    """A cycle of imports in ``graph`` (module -> the modules it imports), as ``[a, b, ..., a]``; [] if none."""
    done: set[str] = set()

    def walk(name: str, path: list[str]) -> list[str]:
        for other in sorted(graph.get(name, set())):
            if other in path:
                return [*path[path.index(other) :], other]
            if other not in done and (found := walk(other, [*path, other])):
                return found
        done.add(name)
        return []

    return next((found for name in sorted(graph) if name not in done and (found := walk(name, [name]))), [])


def test_the_cycle_check_finds_a_cycle() -> None:
    assert cycle({"a": {"b"}, "b": {"c"}, "c": set()}) == []
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"b"}}) == ["b", "c", "b"]
    assert cycle({"a": {"a"}}) == ["a", "a"]
    # A diamond is no cycle.
    assert cycle({"a": {"b", "c"}, "b": {"d"}, "c": {"d"}, "d": set()}) == []


def test_no_module_imports_itself_back() -> None:
    # Every import counted, at the top, in a function or under TYPE_CHECKING: a module that a module below it
    # imports back (storage.database's migrate ran storage.dialect's, which opens through storage.database) is
    # one module in two files, and hides a chain the check above cannot see.
    graph = {name: imported(name, tree) for name, tree in _modules().items()}
    found = cycle(graph)
    assert found == [], f"a cycle of imports: {' -> '.join(found)}"


# Folders whose modules are named for the part of another layer they are the shell of (cli/event.py would be the
# command line of tournament/event.py): the one place a file name may repeat one elsewhere.
SHELL_FOLDERS = ("cli", "web/routes")


def test_no_two_modules_share_a_file_name() -> None:
    # One concept, one name (issue 47): two event.py or two store.py send a reader to the wrong one.
    where: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        folder = path.parent.relative_to(PACKAGE).as_posix()
        if path.name != "__init__.py" and folder not in SHELL_FOLDERS:
            where.setdefault(path.name, []).append(path.relative_to(PACKAGE).as_posix())
    shared = {name: paths for name, paths in where.items() if len(paths) > 1}
    assert shared == {}, f"modules that share a file name: {shared}"
    assert len(where) > 50  # every module was read


MAX_FMT_SKIPS = 25  # lines the formatter is told to leave alone, in the package and its tests (issue 37: 283 -> 0)


def test_the_formatter_owns_the_layout() -> None:
    skips = {
        str(path.relative_to(PACKAGE.parent.parent)): n
        for folder in (PACKAGE, PACKAGE.parent.parent / "tests")
        for path in folder.rglob("*.py")
        if (n := sum("# fmt: " + "skip" in line for line in path.read_text("utf-8").splitlines()))
    }
    assert sum(skips.values()) <= MAX_FMT_SKIPS, f"# fmt: skip where a dataclass or a plain layout would do: {skips}"


def test_no_module_passes_six_hundred_lines() -> None:
    long = {
        str(path.relative_to(PACKAGE)): n
        for path in PACKAGE.rglob("*.py")
        if (n := len(path.read_text("utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}, f"split these modules: {long}"


def test_no_client_module_passes_six_hundred_lines() -> None:
    # The clients follow the server's rule (the guide: split a module before ~600 lines), string tables included.
    modules = sorted(KIOSK.rglob("*.js"))
    assert len(modules) > 20, modules  # the clients' folder as the test expects it, not an empty glob
    long = {
        str(path.relative_to(KIOSK)): n
        for path in modules
        if (n := len(path.read_text("utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}, f"split these modules: {long}"


def test_no_python_function_passes_a_hundred_and_twenty_lines() -> None:
    long = {
        f"{path.relative_to(PACKAGE)}:{node.name}": n
        for path in PACKAGE.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text("utf-8")))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and (n := (node.end_lineno or node.lineno) - node.lineno + 1) > MAX_FUNCTION
    }
    assert long == {}, f"split these functions: {long}"


# A function declaration at any indentation, or an arrow function with a block body assigned at the top level.
JS_FUNCTION = re.compile(
    r"^(?P<indent>\s*)(?:export\s+)?(?:async\s+)?function\s*\*?\s*(?P<name>[\w$]+)\s*\("
    r"|^(?P<top>)(?:export\s+)?(?:const|let|var)\s+(?P<arrow>[\w$]+)\s*=\s*(?:async\s+)?"
    r"(?:\([^)]*\)|[\w$]+)\s*=>\s*\{\s*$"
)


def js_functions(text: str) -> dict[str, int]:
    """Each JavaScript function's name and length in lines: from its first line to the first later line that
    starts with a closing brace at the indentation it starts at (the layout Prettier gives it)."""
    lines = text.splitlines()
    found: dict[str, int] = {}
    for start, line in enumerate(lines):
        if not (match := JS_FUNCTION.match(line)):
            continue
        indent = match["indent"] if match["name"] else match["top"]
        end = next((i for i in range(start, len(lines)) if re.match(re.escape(indent) + r"\}", lines[i])), None)
        if end is not None:
            name = match["name"] or match["arrow"]
            found[name] = max(found.get(name, 0), end - start + 1)  # two of one name: the longer counts
    return found


def test_the_function_check_finds_each_functions_length() -> None:
    text = (
        "export async function outer(a) {\n  if (a) {\n    a();\n  }\n  function inner() {\n    return 1;\n  }\n}\n"
        "const arrow = (b) => {\n  b();\n};\nfunction* gen() {\n  yield 1;\n}\n"
    )
    assert js_functions(text) == {"outer": 8, "inner": 3, "arrow": 3, "gen": 3}
    # The string tables are there to be exempted, and long: the check reads them whole.
    tables = js_functions((KIOSK / "shared" / "texts.js").read_text("utf-8"))
    assert {f"shared/texts.js:{name}" for name, n in tables.items() if n > MAX_FUNCTION} == STRING_TABLES


def _client_scripts() -> list[Path]:
    """Every client script, in the program folders and shared/ alike."""
    return sorted(KIOSK.rglob("*.js"))


def test_the_function_check_reads_every_client_script() -> None:
    # A glob that missed a folder would pass every script it never read: each program's folder is read, and in each
    # script of more than a few lines some function is found (the service worker's and the texts' alike).
    scripts = _client_scripts()
    assert {path.parent.relative_to(KIOSK).as_posix() for path in scripts} >= {
        "kiosk",
        "runner",
        "docket",
        "console",
        "status",
        "shared",
    }
    unread = [
        path.relative_to(KIOSK).as_posix()
        for path in scripts
        if len(path.read_text("utf-8").splitlines()) > 30 and not js_functions(path.read_text("utf-8"))
    ]
    assert unread == [], f"no function found in {unread}"


def test_no_javascript_function_passes_a_hundred_and_twenty_lines() -> None:
    long = {
        key: n
        for path in _client_scripts()
        for name, n in js_functions(path.read_text("utf-8")).items()
        if n > MAX_FUNCTION and (key := f"{path.relative_to(KIOSK).as_posix()}:{name}") not in STRING_TABLES
    }
    assert long == {}, f"split these functions: {long}"


def _classes() -> list[type]:
    found = []
    for name in _modules():
        if name == "__main__":  # importing it runs the command line
            continue
        module = importlib.import_module(f"wordjudge.{name}".rstrip("."))
        found += [
            cls
            for _, cls in inspect.getmembers(module, inspect.isclass)
            if cls.__module__ == module.__name__ and not issubclass(cls, BaseException)
        ]
    return found


def public_methods(cls: type) -> set[str]:
    """The public methods ``cls`` has, inherited ones included (those of :class:`object`, enums, pydantic
    models and dataclasses' generated ones aside: the library's, not ours)."""
    ours = [base for base in cls.__mro__ if base.__module__.startswith("wordjudge")]
    return {
        name
        for base in ours
        for name, member in vars(base).items()
        if not name.startswith("_") and (inspect.isfunction(member) or isinstance(member, (classmethod, staticmethod)))
    }


def test_the_method_count_includes_inherited_methods() -> None:
    class Base:
        def one(self) -> None: ...

    class Child(Base):
        def two(self) -> None: ...

        def _hidden(self) -> None: ...

    Base.__module__ = Child.__module__ = "wordjudge.example"
    assert public_methods(Child) == {"one", "two"}


def test_no_class_has_more_than_twenty_public_methods() -> None:
    classes = _classes()
    assert len(classes) > 50  # every module's classes were found
    big = {
        cls.__qualname__: len(methods) for cls in classes if len(methods := public_methods(cls)) > MAX_PUBLIC_METHODS
    }
    assert big == {}, f"more than {MAX_PUBLIC_METHODS} public methods: {big}"
