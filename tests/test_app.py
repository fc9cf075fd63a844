from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from playwright.sync_api import Browser, Route, expect

from wordjudge.base.errors import InvalidInput, LexiconIntegrityError, NotFound, WordjudgeError
from wordjudge.service.opening import open_resources
from wordjudge.service.settings import Settings
from wordjudge.web.app import create_app
from wordjudge.web.pages import SERVICE_WORKER, SHELL_PAGES, WEB_DIR, asset_version, service_worker, web_files
from wordjudge.words.lexicon import TRIE_FILE

from .browser import serving
from .helpers import StartServer, assert_error_shape, free_port, serve_process, write_event, write_list


def test_health_reports_the_demo_lexicon(client: TestClient) -> None:
    response = client.get("/api/health")
    assert response.status_code == 200
    body = response.json()
    assert body["ok"] is True
    assert body["demo"] is True
    [lexicon] = body["lexicons"]
    assert lexicon["name"] == "demo"
    assert lexicon["demo"] is True
    assert lexicon["word_count"] == 172_820
    assert lexicon["edition"] == "matches ENABLE (172,820 words)"
    assert lexicon["identification"]["official"] is False
    assert lexicon["short_fingerprint"] == "b819e7b67f8f"
    assert lexicon["shown_name"] == "DEMO"
    assert lexicon["label"].startswith("DEMO: matches ENABLE")


def test_status_page_and_its_files_are_served(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200
    assert f"/static/{asset_version()}/status/status.js" in page.text
    assert 'id="demo-banner"' in page.text
    assert client.get("/static/shared/app.css").headers["content-type"].startswith("text/css")
    assert "javascript" in client.get("/static/status/status.js").headers["content-type"]


@pytest.mark.parametrize("path", ["/", "/kiosk", "/runner", "/td", "/docket"])
def test_pages_name_their_files_by_version_and_are_never_cached(client: TestClient, path: str) -> None:
    page = client.get(path)
    assert page.headers["cache-control"] == "no-store"
    version = asset_version()
    named = re.findall(r'"/static/([^"]+)"', page.text)
    assert named
    assert all(name.startswith(f"{version}/") for name in named), named  # no unversioned file
    for name in named:
        answer = client.get(f"/static/{name}")
        assert answer.status_code == 200, name
        assert answer.headers["cache-control"] == "public, max-age=31536000, immutable"


def test_an_old_version_is_not_served_and_a_plain_file_is_revalidated(client: TestClient) -> None:
    # After an upgrade a cached module must never be paired with the new page: the old version's URL is gone.
    assert client.get("/static/0123456789abcdef/kiosk/kiosk.js").status_code == 404
    assert client.get("/static/kiosk/kiosk.js").headers["cache-control"] == "no-cache"


def test_the_asset_version_changes_with_any_client_file(tmp_path: Path) -> None:
    for name in ("kiosk.html", "kiosk.js", "app.css"):
        (tmp_path / name).write_text(f"/* {name} */")
    (tmp_path / "notes.py").write_text("x = 1")
    before = asset_version(tmp_path)
    (tmp_path / "notes.py").write_text("x = 2")  # not a client file
    assert asset_version(tmp_path) == before
    (tmp_path / "app.css").write_text("body { color: red }")
    assert asset_version(tmp_path) != before


def test_the_asset_version_covers_client_files_in_subfolders(tmp_path: Path) -> None:
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "sw.js").write_text("/* the worker */")
    (tmp_path / "kiosk.js").write_text("/* kiosk */")
    (tmp_path / "locales").mkdir()
    (tmp_path / "locales" / "extra.js").write_text("/* a translation */")
    before = asset_version(tmp_path)
    assert web_files(tmp_path) == ["kiosk.js", "locales/extra.js", "shared/sw.js"]
    (tmp_path / "locales" / "extra.js").write_text("/* another translation */")
    assert asset_version(tmp_path) != before  # a device must not keep an old translation with new code
    assert '"/static/v1/locales/extra.js"' in service_worker(tmp_path, "v1")


def worker_constant(script: str, name: str) -> Any:
    """A constant the server wrote at the head of the service worker (``const NAME = <JSON>;``)."""
    found = re.search(rf"^const {name} = (.*);$", script, re.MULTILINE)
    assert found, name
    return json.loads(found.group(1))


def test_the_service_worker_is_served_from_the_root_with_every_file_of_this_version(client: TestClient) -> None:
    answer = client.get("/sw.js")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/javascript")
    assert answer.headers["cache-control"] == "no-cache"  # checked at every page load: an upgrade reaches devices
    script = answer.text
    version = asset_version()
    assert worker_constant(script, "VERSION") == version
    assert worker_constant(script, "SHELLS") == list(SHELL_PAGES) == ["/kiosk", "/runner", "/docket"]
    files = worker_constant(script, "FILES")
    # Every client file of this version, listed from the folder (not by hand), pages aside (cached as SHELLS).
    assert files == [f"/static/{version}/{name}" for name in web_files() if not name.endswith(".html")]
    assert {
        f"/static/{version}/kiosk/kiosk.js",
        f"/static/{version}/shared/offline.js",
        f"/static/{version}/shared/app.css",
    } <= set(files)
    assert not [url for url in files if "/api/" in url]
    for url in [*files, *worker_constant(script, "SHELLS")]:  # the install fetches them all: none may fail
        assert client.get(url).status_code == 200, url
    assert script.endswith((WEB_DIR / SERVICE_WORKER).read_text())
    for page in SHELL_PAGES:  # each shell registers the worker
        assert f'src="/static/{version}/shared/offline.js"' in client.get(page).text


def test_openapi_docs_are_served(client: TestClient) -> None:
    assert client.get("/docs").status_code == 200
    assert "/api/health" in client.get("/openapi.json").json()["paths"]


def test_event_lexicon_is_served_instead_of_the_demo(tmp_path: Path, data_dir: Path) -> None:
    from wordjudge.words.lexicon import LexiconStore
    from wordjudge.words.wordlist import read_word_list

    LexiconStore(data_dir / "lexicons").add(read_word_list(write_list(tmp_path / "l.txt", ["aa", "ab"])), "SMALL")
    write_event(data_dir, [("A", "SMALL", "single")])
    with TestClient(create_app(Settings(data_dir=data_dir))) as client:
        body = client.get("/api/health").json()
    assert body["demo"] is False
    assert body["event"] == "Test Open"
    assert [(x["name"], x["edition"]) for x in body["lexicons"]] == [("SMALL", "unknown list")]


def test_first_start_compiles_the_demo(tmp_path: Path) -> None:
    with TestClient(create_app(Settings(data_dir=tmp_path / "fresh"))) as client:
        assert client.get("/api/health").json()["lexicons"][0]["word_count"] == 172_820
    assert (tmp_path / "fresh" / "lexicons" / "demo" / TRIE_FILE).is_file()


def test_corrupt_lexicon_refuses_to_start(data_dir: Path) -> None:
    (data_dir / "lexicons" / "demo").rename(data_dir / "lexicons" / "COPY")
    (data_dir / "lexicons" / "COPY" / TRIE_FILE).write_bytes(b"not a trie")
    write_event(data_dir, [("A", "COPY", "single")])
    with pytest.raises(LexiconIntegrityError, match=r"COPY/words.marisa is truncated or altered"):
        open_resources(Settings(data_dir=data_dir))
    write_event(data_dir, [("A", "NOPE", "single")])
    with (
        pytest.raises(InvalidInput, match="no lexicon or profile named 'NOPE' is compiled; compiled: COPY, demo"),
        TestClient(create_app(Settings(data_dir=data_dir))),
    ):
        pass


# -- one JSON error shape, on every error route ---------------------------------------------------


@pytest.fixture
def app_with_failing_routes(app: FastAPI) -> FastAPI:
    """The real app plus routes that fail in each way a future route can: ours, a crash, bad input."""

    @app.get("/test/wordjudge-error")
    def wordjudge_error() -> None:
        raise NotFound("error.record.not_found", id="42")

    @app.get("/test/crash")
    def crash() -> None:
        raise RuntimeError("secret internals")

    @app.get("/test/validated")
    def validated(count: int) -> int:
        return count

    return app


@pytest.mark.parametrize(
    ("method", "path", "status", "code"),
    [
        ("GET", "/api/nothing-here", 404, "not_found"),
        ("GET", "/static/missing.css", 404, "not_found"),
        ("GET", "/static/__init__.py", 404, "not_found"),
        ("POST", "/api/health", 405, "method_not_allowed"),
        ("GET", "/test/wordjudge-error", 404, "not_found"),
        ("GET", "/test/validated?count=many", 422, "invalid_request"),
        ("GET", "/test/crash", 500, "internal_error"),
    ],
)
def test_every_error_has_the_one_json_shape(
    app_with_failing_routes: FastAPI, method: str, path: str, status: int, code: str
) -> None:
    with TestClient(app_with_failing_routes, raise_server_exceptions=False) as client:
        body = assert_error_shape(client.request(method, path), status, code)
    assert "secret internals" not in str(body)


def test_validation_error_names_the_field(app_with_failing_routes: FastAPI) -> None:
    with TestClient(app_with_failing_routes) as client:
        body = client.get("/test/validated?count=many").json()
    assert "query.count" in body["error"]
    assert body["details"][0]["field"] == "query.count"


def test_every_wordjudge_error_maps_to_a_client_or_service_status() -> None:
    def subclasses(cls: type[WordjudgeError]) -> Iterator[type[WordjudgeError]]:
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    for cls in subclasses(WordjudgeError):
        assert cls.status in {401, 403, 404, 405, 408, 409, 413, 421, 422, 429, 431, 503}, cls
        assert cls.code != WordjudgeError.code, cls


# -- a real server ------------------------------------------------------------------------------


@pytest.mark.live
def test_wordjudge_serve_answers_health_over_http(data_dir: Path, live_server: StartServer) -> None:
    server = live_server(data_dir, "--log-level", "info")
    response = httpx.get(f"{server.base}/api/health", timeout=30)
    assert response.json()["lexicons"][0]["edition"] == "matches ENABLE (172,820 words)"
    assert httpx.get(f"{server.base}/", timeout=30).status_code == 200
    output = server.stop()
    assert "division Open: DEMO: matches ENABLE (172,820 words), fingerprint b819e7b67f8f, rule five-per-word" in output


@pytest.mark.live
def test_a_live_server_that_logs_more_than_a_pipe_holds_goes_on_answering(
    data_dir: Path, live_server: StartServer
) -> None:
    """The tests' servers print to a file, not to a pipe that nobody reads until they stop: with a pipe, a
    server failing in a loop (a logged error a request) blocked on its log once the pipe's 64 KB were full,
    and the test hung until its timeout instead of failing with the server's words."""
    # A line a request; 3,000 requests at once from one address, past the per-address request rate (not tested here).
    server = live_server(data_dir, "--log-level", "info", "--max-requests-per-client", "0")
    with httpx.Client(base_url=server.base, timeout=10) as client:
        for _ in range(3000):  # about 190 KB of access log, three times what a pipe holds
            assert client.get("/api/health").status_code == 200
    output = server.stop()
    assert len(output) > 128 * 1024
    assert output.count('"GET /api/health HTTP/1.1" 200') >= 3000


@pytest.mark.live
def test_wordjudge_serve_refuses_a_corrupt_lexicon_without_a_traceback(data_dir: Path) -> None:
    (data_dir / "lexicons" / "demo").rename(data_dir / "lexicons" / "EVENT")
    trie = data_dir / "lexicons" / "EVENT" / TRIE_FILE
    data = bytearray(trie.read_bytes())
    data[100] ^= 1
    trie.write_bytes(bytes(data))
    write_event(data_dir, [("A", "EVENT", "single")])
    server = serve_process(data_dir, "--port", str(free_port()))
    output = server.communicate(timeout=60)[0]
    assert server.returncode == 1
    assert "Error: " in output
    assert "EVENT/words.marisa is altered" in output
    assert "Traceback" not in output


@pytest.mark.browser
def test_the_api_reference_works_with_no_internet(browser: Browser, data_dir: Path) -> None:
    """/docs in Chromium with every request off the server refused, as in a hall without internet: Swagger UI
    shows the API's operations from files the server serves (before, it came from a CDN: a blank page)."""
    with serving(data_dir) as live:
        page = browser.new_page()
        elsewhere: list[str] = []

        def only_the_server(route: Route) -> None:
            if route.request.url.startswith(live.base):
                route.continue_()
            else:
                elsewhere.append(route.request.url)
                route.abort()

        page.route("**/*", only_the_server)
        page.goto(f"{live.base}/docs")
        expect(page.locator(".swagger-ui .opblock").first).to_be_visible(timeout=30_000)
        expect(page.locator(".swagger-ui")).to_contain_text("/api/health")
        assert elsewhere == []
        page.close()
