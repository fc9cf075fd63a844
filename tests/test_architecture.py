"""The shape of the code, checked (issue 18): each module depends on few others, no class does everything,
the domain never imports the web framework or the command line, and modules stay a readable size.

Read from the source with :mod:`ast`, so that an import under ``TYPE_CHECKING`` or inside a function counts
as the dependency it is.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

PACKAGE = Path(__file__).parent.parent / "server" / "wordjudge"
MAX_SIBLINGS = 8
MAX_PUBLIC_METHODS = 20
MAX_LINES = 600
# The command line and the app factory wire everything together: they may import what they wire.
WIRING = {"app"}
# The thin shells: routes, middleware and the web pages (FastAPI, Starlette), the command line (click).
WEB = {
    "api",
    "api_access",
    "api_console",
    "api_event",
    "api_hall",
    "api_status",
    "app",
    "deps",
    "fast_challenge",
    "web",
}
WEB |= {"transport"}  # the ASGI middleware that caps connections and bodies
FRAMEWORKS = ("fastapi", "starlette", "click", "uvicorn")


def _modules() -> dict[str, ast.Module]:
    return {path.stem: ast.parse(path.read_text("utf-8")) for path in sorted(PACKAGE.glob("*.py"))}


def _is_cli(name: str) -> bool:
    return name == "cli" or name.startswith("cli_") or name == "__main__"


def siblings(tree: ast.Module) -> set[str]:
    """The package's modules that ``tree`` imports (``from .x import``, ``from . import x``), wherever the
    import is: at the top, under ``TYPE_CHECKING`` or inside a function."""
    found: set[str] = set()
    modules = {path.stem for path in PACKAGE.glob("*.py")}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                found.add(node.module.split(".")[0])
            else:
                found |= {alias.name for alias in node.names if alias.name in modules}
    return found


def external(tree: ast.Module) -> set[str]:
    """The top-level names of the packages outside wordjudge that ``tree`` imports."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_the_sibling_count_sees_every_kind_of_import() -> None:
    tree = ast.parse(
        "from typing import TYPE_CHECKING\nfrom . import records, __version__\nfrom .audit import AuditLog\n"
        "if TYPE_CHECKING:\n    from .event import Event\ndef f():\n    from .witness import Witness\n"
    )
    assert siblings(tree) == {"records", "audit", "event", "witness"}


def test_no_module_imports_more_than_eight_sibling_modules() -> None:
    over = {
        name: sorted(found)
        for name, tree in _modules().items()
        if not _is_cli(name) and name not in WIRING and len(found := siblings(tree)) > MAX_SIBLINGS
    }
    assert over == {}, f"more than {MAX_SIBLINGS} sibling modules imported: {over}"


def test_the_domain_imports_neither_the_web_framework_nor_the_command_line() -> None:
    leaks = {
        name: sorted(found)
        for name, tree in _modules().items()
        if not _is_cli(name) and name not in WEB and (found := external(tree) & set(FRAMEWORKS))
    }
    assert leaks == {}, f"domain modules importing a framework: {leaks}"


def test_no_module_passes_six_hundred_lines() -> None:
    long = {
        path.name: n for path in PACKAGE.glob("*.py") if (n := len(path.read_text("utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}, f"split these modules: {long}"


def _classes() -> list[type]:
    found = []
    for name in _modules():
        if name == "__main__":  # importing it runs the command line
            continue
        module = importlib.import_module(f"wordjudge.{name}")
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
