"""The web clients' pages and files, served by the app with no build step.

Pages (the kiosk, the handheld, the console, the docket, the status page) are never cached, and
refer to their scripts and styles under ``/static/<version>/``, where ``<version>`` is a hash of
every client file. Those answers may be cached for good (``immutable``): after an upgrade a page
names the new version, so a device can never run new HTML with old cached modules, or the reverse.
The modules import each other by relative path, so they stay within the version their page named.
Plain ``/static/<file>`` (links from elsewhere) is served too, revalidated on every use.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from importlib import resources as package_files
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.types import Scope

WEB_DIR = Path(str(package_files.files("wordjudge.kiosk")))
WEB_SUFFIXES = {".html", ".js", ".css", ".svg", ".png", ".ico", ".json"}  # .json: locales/<lang>.json
PAGES = {
    "/": "index.html",
    "/kiosk": "kiosk.html",
    "/runner": "runner.html",
    "/td": "td.html",
    "/docket": "docket.html",
}
# A versioned file never changes under its URL: a year, and no revalidation.
_IMMUTABLE = "public, max-age=31536000, immutable"
_REVALIDATE = "no-cache"
# Never cached: a device must not come back from a restart (or an upgrade) with an old page.
_PAGE_HEADERS = {"Cache-Control": "no-store"}


def asset_version(folder: Path = WEB_DIR) -> str:
    """A hash of the client files in ``folder`` and its sub-folders (such as the catalogues in ``locales/``):
    names and contents; it changes when any of them does."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.suffix in WEB_SUFFIXES and path.is_file():
            digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def mount_web(app: FastAPI, folder: Path = WEB_DIR) -> str:
    """Add the pages and ``/static/`` to ``app``; return the asset version the pages refer to."""
    version = asset_version(folder)
    for path, name in PAGES.items():
        page = (folder / name).read_text("utf-8").replace('"/static/', f'"/static/{version}/')
        app.add_api_route(path, _page(page), include_in_schema=False, response_class=HTMLResponse)
    # The versioned mount first: the plain one would take /static/<version>/... as a file path.
    app.mount(f"/static/{version}", _WebFiles(directory=folder, cache_control=_IMMUTABLE))
    app.mount("/static", _WebFiles(directory=folder, cache_control=_REVALIDATE), name="static")
    return version


def _page(html: str) -> Callable[[], HTMLResponse]:
    def serve() -> HTMLResponse:
        return HTMLResponse(html, headers=_PAGE_HEADERS)

    return serve


class _WebFiles(StaticFiles):
    """The web clients' files; nothing else in their folder (such as Python files) is served."""

    def __init__(self, *, directory: Path, cache_control: str) -> None:
        super().__init__(directory=directory)
        self.cache_control = cache_control

    async def get_response(self, path: str, scope: Scope) -> Response:
        if Path(path).suffix not in WEB_SUFFIXES:
            raise StarletteHTTPException(404)
        response = await super().get_response(path, scope)
        response.headers["Cache-Control"] = self.cache_control
        return response
