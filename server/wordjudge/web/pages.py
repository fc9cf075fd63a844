"""The web clients' pages and files, served by the app with no build step.

Pages (the kiosk, the handheld, the console, the docket, the status page) are never cached, and
refer to their scripts and styles under ``/static/<version>/``, where ``<version>`` is a hash of
every client file. Those answers may be cached for good (``immutable``): after an upgrade a page
names the new version, so a device can never run new HTML with old cached modules, or the reverse.
The modules import each other by relative path, so they stay within the version their page named.
Plain ``/static/<folder>/<file>`` (links from elsewhere) is served too, revalidated on every use.

The files lie in a folder per program (``kiosk/``, ``runner/``, ``docket/``, ``console/``, ``status/``) and one
for what several programs share (``shared/``, which imports nothing of a program's), under the ``wordjudge.kiosk``
package; the catalogues (``locales/``) beside them, read by the server too (wordjudge.base.errors). A page's
address is its program's (``/kiosk``, ``/td``...), never its file's: the folders can change, the addresses not.

``/sw.js`` is the offline shell's service worker (``kiosk/shared/sw.js``, served from the root so that its
scope covers the pages), headed by the asset version and the list of every client file of that
version: the kiosk, the handheld and the docket keep their page and files in one cache per version,
and open from it when the server cannot be reached. A new version is a new worker, which replaces
the cache whole. API answers are never cached.

``/hall-ca.pem`` and ``/hall-ca.crt`` are the hall's CA certificate (public: it proves nothing by itself), in PEM for
``deploy/kiosk-setup.sh`` and in DER for a runner's phone, which installs it as a CA certificate; each device checks
its fingerprint against the one ``wordjudge hall cert`` printed before it trusts it.

``/docs`` is the API reference: Swagger UI, its files served from the ``fastapi-swagger`` package under
``/docs-files/`` (a hall has no internet, and a page that loads them from a CDN is blank there).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from importlib import resources as package_files
from pathlib import Path

import fastapi_swagger.resources
from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.types import Scope

from wordjudge.base.errors import NotFound
from wordjudge.hall.certs import HallFiles, read_cert

WEB_DIR = Path(str(package_files.files("wordjudge.kiosk")))
WEB_SUFFIXES = {".html", ".js", ".css", ".svg", ".png", ".ico", ".json"}  # .json: locales/<lang>.json
PAGES = {
    "/": "status/status.html",
    "/kiosk": "kiosk/kiosk.html",
    "/runner": "runner/runner.html",
    "/td": "console/console.html",
    "/docket": "docket/docket.html",
}
# A versioned file never changes under its URL: a year, and no revalidation.
_IMMUTABLE = "public, max-age=31536000, immutable"
_REVALIDATE = "no-cache"
# The pages that open offline from the service worker's cache (the console and the status page do not).
SHELL_PAGES = ("/kiosk", "/runner", "/docket")
SERVICE_WORKER = "shared/sw.js"  # served as /sw.js: a worker's scope is its own folder, and it must cover the pages
WORKER_PATH = "/sw.js"  # offline.js registers it there
# Never cached: a device must not come back from a restart (or an upgrade) with an old page.
_PAGE_HEADERS = {"Cache-Control": "no-store"}
# The worker is checked at every page load: a new version must reach the devices at once.
_WORKER_HEADERS = {"Cache-Control": "no-cache"}


def web_files(folder: Path = WEB_DIR) -> list[str]:
    """The client files in ``folder`` and its subfolders (such as translations), as sorted relative paths."""
    return sorted(
        path.relative_to(folder).as_posix()
        for path in folder.rglob("*")
        if path.suffix in WEB_SUFFIXES and path.is_file()
    )


def asset_version(folder: Path = WEB_DIR) -> str:
    """A hash of the client files in ``folder`` and its sub-folders (such as the catalogues in ``locales/``):
    names and contents; it changes when any of them does."""
    digest = hashlib.sha256()
    for name in web_files(folder):
        digest.update(name.encode() + b"\0" + (folder / name).read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def service_worker(folder: Path, version: str) -> str:
    """``folder``'s service worker, headed by what it caches: the version, the shell pages and every file."""
    files = [f"/static/{version}/{name}" for name in web_files(folder) if not name.endswith(".html")]
    header = (
        "// Written by the server (wordjudge.web.pages): this version's pages and files.\n"
        f"const VERSION = {json.dumps(version)};\n"
        f"const SHELLS = {json.dumps(list(SHELL_PAGES))};\n"
        f"const FILES = {json.dumps(files)};\n\n"
    )
    return header + (folder / SERVICE_WORKER).read_text("utf-8")


def mount_web(app: FastAPI, folder: Path = WEB_DIR) -> str:
    """Add the pages, ``/sw.js`` and ``/static/`` to ``app``; return the asset version the pages refer to."""
    version = asset_version(folder)
    for path, name in PAGES.items():
        page = (folder / name).read_text("utf-8").replace('"/static/', f'"/static/{version}/')
        app.add_api_route(path, _page(page), include_in_schema=False, response_class=HTMLResponse)
    worker = service_worker(folder, version)
    app.add_api_route(WORKER_PATH, _worker(worker), include_in_schema=False)
    # The versioned mount first: the plain one would take /static/<version>/... as a file path.
    app.mount(f"/static/{version}", _WebFiles(directory=folder, cache_control=_IMMUTABLE))
    app.mount("/static", _WebFiles(directory=folder, cache_control=_REVALIDATE), name="static")
    return version


HALL_CA_PEM, HALL_CA_DER = "/hall-ca.pem", "/hall-ca.crt"


def mount_hall_ca(app: FastAPI, data_dir: Path) -> None:
    """Add :data:`HALL_CA_PEM` and :data:`HALL_CA_DER`: the hall's CA certificate in ``data_dir`` as it is now (404
    ``error.tls.no_ca`` while there is none)."""
    from cryptography.hazmat.primitives.serialization import Encoding

    files = HallFiles.of(data_dir)

    def certificate(encoding: Encoding, media_type: str, name: str) -> Callable[[], Response]:
        def serve() -> Response:
            if not files.ca_cert.is_file():
                raise NotFound("error.tls.no_ca")
            body = read_cert(files.ca_cert).public_bytes(encoding)
            disposition = {"Content-Disposition": f'attachment; filename="{name}"'}
            return Response(body, media_type=media_type, headers={**_PAGE_HEADERS, **disposition})

        return serve

    app.add_api_route(
        HALL_CA_PEM,
        certificate(Encoding.PEM, "application/x-pem-file", "wordjudge-hall-ca.pem"),
        include_in_schema=False,
    )
    app.add_api_route(
        HALL_CA_DER,
        certificate(Encoding.DER, "application/x-x509-ca-cert", "wordjudge-hall-ca.crt"),
        include_in_schema=False,
    )


DOCS_PATH = "/docs"
DOCS_FILES = "/docs-files"  # Swagger UI's script, style and icon, as the fastapi-swagger package ships them


def mount_docs(app: FastAPI) -> None:
    """Add the API reference (:data:`DOCS_PATH`) to ``app`` (made with ``docs_url=None``), its Swagger UI files
    served from :data:`DOCS_FILES`: nothing of it comes from outside the server."""
    folder = Path(str(package_files.files(fastapi_swagger.resources)))
    app.mount(DOCS_FILES, StaticFiles(directory=folder), name="docs-files")
    openapi_url = app.openapi_url or "/openapi.json"

    def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=openapi_url,
            title=f"{app.title}: API reference",
            swagger_js_url=f"{DOCS_FILES}/swagger-ui-bundle.js",
            swagger_css_url=f"{DOCS_FILES}/swagger-ui.css",
            swagger_favicon_url=f"{DOCS_FILES}/favicon-32x32.png",
            swagger_ui_parameters={"validatorUrl": None},  # Swagger UI's validator badge is a request to the internet
        )

    app.add_api_route(DOCS_PATH, docs, include_in_schema=False, response_class=HTMLResponse)


def _page(html: str) -> Callable[[], HTMLResponse]:
    def serve() -> HTMLResponse:
        return HTMLResponse(html, headers=_PAGE_HEADERS)

    return serve


def _worker(script: str) -> Callable[[], Response]:
    def serve() -> Response:
        return Response(script, media_type="text/javascript", headers=_WORKER_HEADERS)

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
