"""The runtime dependencies declared in pyproject.toml are exactly the third-party packages wordjudge imports: none
imported that a plain install might lack (it would work here only because another package pulled it in), none
declared that nothing uses (installed, locked and audited for nothing)."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "server" / "wordjudge"

# Declared dependencies used without an import of their own, each with why. None today: the extras declared
# (uvicorn[standard]: uvloop and httptools, which uvicorn picks itself; psycopg[binary]: the bundled libpq) ride
# on a package that is imported, so the comparison below, by distribution, needs no exception for them.
USED_WITHOUT_IMPORT: dict[str, str] = {}


def _normal(name: str) -> str:
    """A distribution's name as PEP 503 compares them (Prometheus_Client is prometheus-client)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared() -> set[str]:
    """The distributions [project].dependencies names, without versions, markers or extras."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    names = set()
    for requirement in project["dependencies"]:
        match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
        assert match, requirement
        names.add(_normal(match.group()))
    return names


def _imported() -> dict[str, set[str]]:
    """The third-party top-level modules the package imports (type-only imports too), each with its files."""
    found: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            else:
                continue
            for module in modules:
                top = module.partition(".")[0]
                if top not in sys.stdlib_module_names and top not in ("__future__", "wordjudge"):
                    found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


def test_the_declared_dependencies_are_exactly_the_imported_ones() -> None:
    declared = _declared()
    providers = packages_distributions()
    imported: dict[str, set[str]] = {}  # distribution: the modules of it imported
    for module in _imported():
        distributions = {_normal(d) for d in providers.get(module, [])}
        assert distributions, f"{module} is imported, but no installed distribution provides it"
        # A module several distributions provide (a namespace) is declared if one of them is.
        imported.setdefault(min(distributions & declared or distributions), set()).add(module)
    undeclared = {d: sorted(m) for d, m in imported.items() if d not in declared}
    assert not undeclared, f"imported but not declared in pyproject.toml [project].dependencies: {undeclared}"
    unused = declared - set(imported) - set(USED_WITHOUT_IMPORT)
    assert not unused, f"declared but never imported (remove, or justify in USED_WITHOUT_IMPORT): {sorted(unused)}"
    assert not set(USED_WITHOUT_IMPORT) - declared, "an exception for a dependency no longer declared"


def test_the_comparison_sees_imports_of_every_form() -> None:
    """The walk finds imports inside functions and TYPE_CHECKING blocks, and from-imports of submodules."""
    imported = _imported()
    assert "ifaddr" in imported  # mdns.py: import ifaddr
    assert "starlette" in imported  # from starlette.types import ...
    assert "wordjudge" not in imported
    assert "tomllib" not in imported  # the standard library
