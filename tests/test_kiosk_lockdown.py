"""A kiosk's token does not leave the kiosk (issue 13): the launcher and its Chromium policy, for real.

deploy/kiosk-setup.sh installs a managed Chromium policy for the server's origin, and
deploy/kiosk-chromium.sh starts Chromium with it. Here both run as on a kiosk: Debian's Chromium on a
virtual X display (Xvfb), against a live server, enrolled by typing a pairing code, and a player's
shortcuts are real key events (xdotool). What is on screen is read from Xvfb's frame buffer.

Chromium reads its policy from /etc/chromium/policies, for every Chromium on the machine: the test
installs it in a private mount namespace (``unshare --mount`` and a bind mount over /etc/chromium),
so the other browser tests never see it. That needs root: without it, the tests that need it skip.
"""

from __future__ import annotations

import json
import os
import select
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import httpx2 as httpx
import pytest
from playwright.sync_api import Browser, expect

from wordjudge.model.auth import Role

from .browser import CHROMIUM, CHROMIUM_ARGS, SCREENSHOTS, serving, shell_ready
from .helpers import LiveServer, access_store, free_port, write_event

ROOT = Path(__file__).resolve().parent.parent
LAUNCHER = ROOT / "deploy" / "kiosk-chromium.sh"
SETUP = ROOT / "deploy" / "kiosk-setup.sh"
ETC_CHROMIUM = Path("/etc/chromium")
POLICY = Path("policies/managed/wordjudge-kiosk.json")
WIDTH, HEIGHT = 1280, 800
KIOSK_TITLE = "wordjudge kiosk - Chromium"  # the kiosk page's <title>, as Chromium names its window
SETTLE_S = 1.2  # what a key opens (a window, a dialog, a tab) is on screen by then
MAX_CHANGED = 500  # pixels: a text caret; the smallest dialog Chromium shows covers some 80,000
# The keys first, then the rest of Chromium's shortcuts that open something or close the kiosk.
KEYS = [
    "ctrl+n",
    "ctrl+t",
    "ctrl+o",
    "ctrl+h",
    "ctrl+p",
    "ctrl+shift+Delete",
    "alt+F4",
    "F11",
    "F12",
    "ctrl+shift+n",
    "ctrl+shift+m",
    "ctrl+j",
    "ctrl+s",
    "ctrl+u",
    "shift+Escape",
    "ctrl+shift+o",
    "F1",
    "alt+Home",
    "alt+f",
    "ctrl+w",
    "ctrl+shift+q",
]


def _need_a_mount_namespace() -> None:
    """Skip unless this test can give Chromium a policy no other process sees."""
    if os.geteuid() != 0:
        pytest.skip("needs root: the kiosk's Chromium policy is bind-mounted over /etc/chromium in a private namespace")
    if shutil.which("unshare") is None:
        pytest.skip("unshare (util-linux) is missing: the policy cannot be installed in a private mount namespace")
    if not ETC_CHROMIUM.is_dir():
        pytest.skip(f"{ETC_CHROMIUM} is missing (Debian's chromium package ships it): nothing to bind-mount over")
    tried = subprocess.run(["unshare", "--mount", "true"], capture_output=True, text=True, check=False)
    if tried.returncode != 0:
        pytest.skip(f"unshare --mount fails here (a container without CAP_SYS_ADMIN?): {tried.stderr.strip()}")


def _in_namespace(etc_copy: Path, *command: str | Path) -> list[str]:
    """``command`` in a private mount namespace whose /etc/chromium is ``etc_copy``."""
    unshare = ["unshare", "--mount", "--propagation", "private"]
    return [
        *unshare,
        "sh",
        "-c",
        'mount --bind "$1" /etc/chromium && shift && exec "$@"',
        "sh",
        str(etc_copy),
        *map(str, command),
    ]


class Display:
    """An Xvfb screen: its windows through xdotool, its pixels straight from its frame buffer (-fbdir)."""

    def __init__(self, directory: Path) -> None:
        missing = [tool for tool in ("Xvfb", "xdotool") if shutil.which(tool) is None]
        if missing:
            pytest.fail(f"{' and '.join(missing)} missing: apt-get install xvfb xdotool (.ci/check installs them)")
        directory.mkdir()
        # -displayfd: Xvfb picks a free display and writes its number when ready, and again at each
        # reset (when its last client leaves: -noreset), so the pipe stays open until it stops.
        self._read, write = os.pipe()
        with (directory / "xvfb.log").open("wb") as log:
            self.process = subprocess.Popen(
                [
                    "Xvfb",
                    "-displayfd",
                    str(write),
                    "-screen",
                    "0",
                    f"{WIDTH}x{HEIGHT}x24",
                    "-nolisten",
                    "tcp",
                    "-noreset",
                    "-fbdir",
                    str(directory),
                ],
                pass_fds=(write,),
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        os.close(write)
        ready, _, _ = select.select([self._read], [], [], 30)
        number = os.read(self._read, 16).decode().strip() if ready else ""
        if not number:
            self.stop()
            pytest.fail(f"Xvfb did not start in 30 s: {(directory / 'xvfb.log').read_text(errors='replace')}")
        self.name = f":{number}"
        self.env = {**os.environ, "DISPLAY": self.name}
        self.framebuffer = directory / "Xvfb_screen0"
        deadline = time.monotonic() + 30
        while not (roots := self._ids("search", "--maxdepth", "0", "--name", "")):  # the X server answers
            if time.monotonic() > deadline:
                self.stop()
                pytest.fail(
                    f"xdotool cannot reach Xvfb {self.name}: {(directory / 'xvfb.log').read_text(errors='replace')}"
                )
            time.sleep(0.1)
        self.root = roots[0]
        self.xdotool("mousemove", str(WIDTH // 2), str(HEIGHT - 20))  # the pointer where the kiosk shows nothing

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)
        os.close(self._read)

    def xdotool(self, *args: str) -> str:
        done = subprocess.run(["xdotool", *args], env=self.env, capture_output=True, text=True, timeout=15, check=False)
        return done.stdout

    def _ids(self, *args: str) -> list[int]:
        return [int(word) for word in self.xdotool(*args).split()]

    def windows(self) -> list[int]:
        """The top-level windows on screen (mapped), dialogs and menus included."""
        return [w for w in self._ids("search", "--maxdepth", "1", "--onlyvisible", "--name", "") if w != self.root]

    def title(self, window: int) -> str:
        return self.xdotool("getwindowname", str(window)).strip()

    def press(self, window: int, key: str) -> None:
        """Give ``window`` the keyboard, then press ``key`` as a keyboard does (XTEST, not a synthetic event)."""
        self.xdotool("windowfocus", "--sync", str(window), "key", "--clearmodifiers", key)

    def type(self, window: int, text: str) -> None:
        self.xdotool("windowfocus", "--sync", str(window), "type", "--delay", "40", text)

    def pixels(self) -> bytes:
        """What the screen shows now: WIDTH x HEIGHT pixels of 4 bytes (B, G, R, unused)."""
        data = self.framebuffer.read_bytes()
        header, ncolors = struct.unpack(">I", data[:4])[0], struct.unpack(">I", data[76:80])[0]
        start = header + 12 * ncolors  # an XWD file: its header, a colour map, then the pixels
        return data[start : start + 4 * WIDTH * HEIGHT]

    def settled(self, timeout: float = 10) -> bytes:
        """The screen once it has stopped changing (two looks 0.5 s apart agree)."""
        deadline = time.monotonic() + timeout
        before = self.pixels()
        while True:
            time.sleep(0.5)
            now = self.pixels()
            if changed(before, now) == 0 or time.monotonic() > deadline:
                return now
            before = now


def changed(before: bytes, after: bytes) -> int:
    """How many pixels differ between two screens."""
    if before == after:
        return 0
    row = 4 * WIDTH
    count = 0
    for start in range(0, len(before), row):
        a, b = before[start : start + row], after[start : start + row]
        if a != b:
            count += sum(1 for x in range(0, row, 4) if a[x : x + 3] != b[x : x + 3])
    return count


def drawn(screen: bytes) -> int:
    """How many pixels are not the page's background (the colour of the top left corner)."""
    return changed(screen[:4] * (WIDTH * HEIGHT), screen)


def save_png(pixels: bytes, name: str) -> Path:
    """Save a screen as build/screenshots/<name>.png, for a person to look at."""
    raw = bytearray()
    for start in range(0, len(pixels), 4 * WIDTH):
        bgrx = pixels[start : start + 4 * WIDTH]
        rgb = bytearray(3 * WIDTH)
        rgb[0::3], rgb[1::3], rgb[2::3] = bgrx[2::4], bgrx[1::4], bgrx[0::4]
        raw += b"\0" + rgb

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", WIDTH, HEIGHT, 8, 2, 0, 0, 0)
    png = (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(bytes(raw))) + chunk(b"IEND", b"")
    )
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    path.write_bytes(png)
    return path


class Kiosk:
    """deploy/kiosk-chromium.sh on the display, after deploy/kiosk-setup.sh, in a private mount namespace."""

    def __init__(self, display: Display, server: LiveServer, workdir: Path) -> None:
        self.display = display
        self.server = server
        self.url = f"{server.base}/kiosk"
        self.etc = workdir / "etc-chromium"  # the machine's /etc/chromium, and the policy the setup adds
        shutil.copytree(ETC_CHROMIUM, self.etc, symlinks=True)
        self.profile = workdir / "profile"
        self.log = workdir / "kiosk.log"
        self.devtools = f"http://127.0.0.1:{free_port()}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> int:
        """Install the policy and start the kiosk; return its window once it shows the kiosk page."""
        flags = [arg for arg in CHROMIUM_ARGS if arg != "--headless"] + [
            # Xvfb has no window manager to make the kiosk full screen.
            "--window-position=0,0",
            f"--window-size={WIDTH},{HEIGHT}",
            # Lists the tabs (/json/list) and opens one (/json/new); the policy refuses it any page's content.
            f"--remote-debugging-port={self.devtools.rsplit(':', 1)[1]}",
        ]
        base = self.server.base
        then = '"$1" "$2" && shift 2 && exec "$@"'  # the setup, then the launcher
        command = _in_namespace(self.etc, "sh", "-c", then, "sh", SETUP, base, LAUNCHER, base, *flags)
        env = {**self.display.env, "WORDJUDGE_KIOSK_PROFILE": str(self.profile), "WORDJUDGE_CHROMIUM": str(CHROMIUM)}
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(command, env=env, stdout=log, stderr=log, start_new_session=True)
        return self.window()

    def window(self, not_of: int | None = None, timeout: float = 30) -> int:
        """The kiosk's window, once one shows the kiosk page (one of a Chromium other than process ``not_of``)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for window in self.display.windows():
                if self.display.title(window) == KIOSK_TITLE and (not_of is None or self.pid(window) != not_of):
                    return window
            assert self.process is not None
            if self.process.poll() is not None:
                pytest.fail(f"the kiosk exited ({self.process.returncode}): {self.log.read_text(errors='replace')}")
            time.sleep(0.2)
        pytest.fail(f"no window showed {KIOSK_TITLE!r} in {timeout:.0f} s: {self.log.read_text(errors='replace')}")

    def shows(self, screen: bytes, timeout: float = 30) -> bool:
        """Whether the display comes to show ``screen`` (a page takes a moment to start)."""
        deadline = time.monotonic() + timeout
        while changed(screen, self.display.pixels()) > MAX_CHANGED:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.2)
        return True

    def pid(self, window: int) -> int:
        """The Chromium (browser process) that shows ``window``."""
        return int(self.display.xdotool("getwindowpid", str(window)) or 0)

    def tabs(self) -> list[tuple[str, str]] | None:
        """(url, title) of every tab and window of the kiosk's Chromium (its own UI pages aside); None: it is gone."""
        try:
            targets = httpx.get(f"{self.devtools}/json/list", timeout=5).json()
        except httpx.TransportError:
            return None
        return [(t["url"], t["title"]) for t in targets if t["type"] == "page" and ".top-chrome/" not in t["url"]]

    def open(self, url: str) -> str:
        """Open ``url`` in a new tab, as anything on the kiosk that could open one would; return the tab's id."""
        target: str = httpx.put(f"{self.devtools}/json/new?{url}", timeout=5).json()["id"]
        return target

    def title(self, target: str) -> str:
        """The title of a tab (a block page's is its address)."""
        targets = httpx.get(f"{self.devtools}/json/list", timeout=5).json()
        return next((t["title"] for t in targets if t["id"] == target), "(closed)")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=15)
        self.process = None


@pytest.fixture
def server(data_dir: Path) -> Iterator[LiveServer]:
    write_event(data_dir, [("Open", "demo", "five-per-word")], name="Kiosk Open")
    with serving(data_dir) as live:
        yield live


@pytest.fixture
def kiosk(server: LiveServer, tmp_path: Path) -> Iterator[Kiosk]:
    _need_a_mount_namespace()
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install chromium (.ci/check installs it)")
    display = Display(tmp_path / "display")
    kiosk = Kiosk(display, server, tmp_path)
    try:
        yield kiosk
    finally:
        kiosk.stop()
        display.stop()


def _enrol(kiosk: Kiosk, window: int) -> bytes:
    """Enrol the kiosk as a TD does (a pairing code, typed at the kiosk); return its idle screen."""
    deadline = time.monotonic() + 30
    while drawn(pairing := kiosk.display.settled()) < 20_000:  # "Starting...": the page has not run yet
        if time.monotonic() > deadline:
            pytest.fail(f"the kiosk page did not start: see {save_png(pairing, 'kiosk-lockdown-start')}")
    store = access_store(kiosk.server.data_dir)
    try:
        code = store.pairing.create_code(Role.KIOSK, None, "kiosk-lockdown", by="test").code
    finally:
        store.close()
    kiosk.display.type(window, code)
    kiosk.display.press(window, "Return")
    deadline = time.monotonic() + 30
    while "kiosk-lockdown" not in _devices(kiosk):
        if time.monotonic() > deadline:
            pytest.fail(
                f"the kiosk did not enrol in 30 s: see {save_png(kiosk.display.pixels(), 'kiosk-lockdown-enrol')}"
            )
        time.sleep(0.2)
    idle = kiosk.display.settled()
    assert changed(pairing, idle) > 10_000, "the kiosk still shows its pairing screen"
    return idle


def _devices(kiosk: Kiosk) -> list[str]:
    store = access_store(kiosk.server.data_dir)
    try:
        return [device.name for device in store.devices.all()]
    finally:
        store.close()


def _escapes(kiosk: Kiosk, window: int, chromium: int, idle: bytes) -> list[str]:
    """What a key did, if the player is no longer on the kiosk page as it was (nothing: an empty list)."""
    found = []
    windows = kiosk.display.windows()
    if window not in windows:
        found.append("the kiosk window is gone")
    elif kiosk.pid(window) != chromium:  # X may give a new Chromium's window the same id
        found.append("Chromium ended (and started again)")
    elif (title := kiosk.display.title(window)) != KIOSK_TITLE:
        found.append(f"the kiosk window shows {title!r}")
    found += [f"another window {kiosk.display.title(w) or '(unnamed)'!r}" for w in windows if w != window]
    if (tabs := kiosk.tabs()) is None:
        found.append("Chromium is not running")
    elif tabs != [(kiosk.url, "wordjudge kiosk")]:
        found.append(f"tabs {tabs}")
    if (count := changed(idle, kiosk.display.pixels())) > MAX_CHANGED:
        found.append(f"{count} pixels of the screen changed")
    return found


@pytest.mark.browser
@pytest.mark.live
def test_a_player_at_a_locked_down_kiosk_cannot_leave_the_kiosk_page(kiosk: Kiosk) -> None:
    started = time.monotonic()
    window = kiosk.start()
    policy = json.loads((kiosk.etc / POLICY).read_text())
    assert policy["URLAllowlist"] == [kiosk.server.base]
    assert not (ETC_CHROMIUM / POLICY).exists()  # the machine's own Chromium, and the other tests, never saw it
    idle = _enrol(kiosk, window)
    save_png(idle, "kiosk-lockdown-idle")

    # The token is in the profile's Local Storage, on disk: the folder a file:// page would list.
    leveldb = kiosk.profile / "Default" / "Local Storage" / "leveldb"
    # Chromium writes Local Storage to disk a few seconds after a change, later on a loaded machine (15 s ran out
    # beside a second whole check): wait for it, as long as a loaded machine needs.
    deadline = time.monotonic() + 60
    while not any(b"wordjudge.kiosk.token" in f.read_bytes() for f in leveldb.glob("*") if f.is_file()):
        assert time.monotonic() < deadline, f"the enrolment is not in {leveldb}"
        time.sleep(0.5)
    problems: list[str] = []

    # A player's shortcuts, each on the idle kiosk. One that escapes is noted, and the kiosk started again.
    chromium = kiosk.pid(window)
    for key in KEYS:
        kiosk.display.press(window, key)
        time.sleep(SETTLE_S)  # time passes for what the key would open: the test shows nothing does
        if found := _escapes(kiosk, window, chromium, idle):
            problems.append(f"{key}: {'; '.join(found)}")
            save_png(kiosk.display.pixels(), f"kiosk-lockdown-escape-{key.replace('+', '-')}")
            kiosk.stop()
            window = kiosk.start()
            chromium = kiosk.pid(window)
            if not kiosk.shows(idle):
                problems.append(f"after {key}, the kiosk started again shows something else")
                idle = kiosk.display.settled()
    save_png(kiosk.display.pixels(), "kiosk-lockdown-after-keys")

    # Were a page to open anyway (a link, a dialog, another program), only the server's origin shows:
    # the kiosk page itself in a new tab (the control), and the same block page for all else.
    kiosk.open(kiosk.url)
    if not kiosk.shows(idle) and (count := changed(idle, kiosk.display.pixels())) > MAX_CHANGED:
        problems.append(f"the kiosk page in a new tab: {count} pixels differ from the kiosk's")
    others = {
        "the profile's Local Storage": leveldb.as_uri(),
        "clear browsing data": "chrome://settings/clearBrowserData",
        "settings": "chrome://settings",
        "another origin (the same server)": f"http://localhost:{kiosk.server.port}/kiosk",
        "the page's source": f"view-source:{kiosk.url}",
    }
    shown = []
    for what, url in others.items():
        target = kiosk.open(url)
        time.sleep(SETTLE_S)  # time passes for the page to show: the test shows it is the same block page
        shown.append((what, url, kiosk.display.pixels(), kiosk.title(target)))
    block = shown[0][2]
    save_png(block, "kiosk-lockdown-blocked")
    if (
        changed(idle, block) < 10_000
        or drawn(block) < 1_000
        or any(changed(block, s) > MAX_CHANGED for _, _, s, _ in shown)
    ):
        titles = "; ".join(f"{what} ({url}) shows {title!r}" for what, url, _, title in shown)
        problems.append(f"these should all show one and the same block page: {titles}")

    # However Chromium ends (Alt+F4 from a desktop's window manager, a crash), the launcher starts it
    # again, still enrolled: the same idle screen.
    os.kill(chromium, signal.SIGTERM)
    try:
        window = kiosk.window(not_of=chromium, timeout=20)
    except pytest.fail.Exception:
        problems.append("Chromium ended and the kiosk did not start again")
    else:
        if not kiosk.shows(idle):
            problems.append("the kiosk started again but shows something else")
            save_png(kiosk.display.pixels(), "kiosk-lockdown-restarted")
    print(
        f"kiosk lock-down: {len(KEYS)} keys, {len(others)} addresses, a restart in {time.monotonic() - started:.1f} s"
    )
    assert not problems, "a player can leave the kiosk page:\n" + "\n".join(problems)


def _fake_chromium(tmp_path: Path) -> Path:
    """A stand-in for Chromium that writes down the arguments it was given."""
    fake = tmp_path / "chromium"
    fake.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {tmp_path}/args\n')
    fake.chmod(0o755)
    return fake


def _launch(tmp_path: Path, url: str, **env: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "WORDJUDGE_CHROMIUM": str(_fake_chromium(tmp_path)),
        "WORDJUDGE_KIOSK_PROFILE": str(tmp_path / "profile"),
        "WORDJUDGE_KIOSK_RESTART": "0",
        **env,
    }
    return subprocess.run([str(LAUNCHER), url], env=env, capture_output=True, text=True, timeout=30, check=False)


def test_the_launcher_refuses_a_kiosk_without_the_lock_down_policy(tmp_path: Path) -> None:
    url = "http://192.0.2.7:8000"  # TEST-NET-1: no kiosk machine has a policy for it
    refused = _launch(tmp_path, url)
    assert refused.returncode == 1
    assert f"kiosk-setup.sh {url}" in refused.stderr
    assert "WORDJUDGE_KIOSK_UNLOCKED=1" in refused.stderr
    assert not (tmp_path / "args").exists()
    unlocked = _launch(tmp_path, url, WORDJUDGE_KIOSK_UNLOCKED="1")
    assert unlocked.returncode == 0
    assert "WARNING" in unlocked.stderr
    args = (tmp_path / "args").read_text().splitlines()
    assert args[:2] == ["--kiosk", "--force-app-mode"]
    assert f"--user-data-dir={tmp_path / 'profile'}" in args  # the enrolment is kept
    assert args[-1] == f"{url}/kiosk"
    assert _launch(tmp_path, "wordjudge.local:8000", WORDJUDGE_KIOSK_UNLOCKED="1").returncode == 2


def test_the_launcher_wants_the_policy_for_its_own_address(tmp_path: Path) -> None:
    _need_a_mount_namespace()
    etc = tmp_path / "etc-chromium"
    shutil.copytree(ETC_CHROMIUM, etc, symlinks=True)
    env = {**os.environ, "WORDJUDGE_CHROMIUM": str(CHROMIUM)}
    setup = subprocess.run(
        _in_namespace(etc, SETUP, "http://wordjudge.local:8000/"),
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert not (ETC_CHROMIUM / POLICY).exists()
    assert f"wrote /etc/chromium/{POLICY}" in setup.stdout
    policy = json.loads((etc / POLICY).read_text())
    assert policy["URLAllowlist"] == ["http://wordjudge.local:8000"]
    assert policy["URLBlocklist"][0] == "*"
    assert (policy["DeveloperToolsAvailability"], policy["IncognitoModeAvailability"]) == (2, 1)
    env |= {
        "WORDJUDGE_CHROMIUM": str(_fake_chromium(tmp_path)),
        "WORDJUDGE_KIOSK_RESTART": "0",
        "WORDJUDGE_KIOSK_PROFILE": str(tmp_path / "profile"),
    }
    for url, status in [
        ("http://wordjudge.local:8000", 0),
        ("http://wordjudge.local:8001", 1),
        ("https://wordjudge.local:8000", 1),
    ]:
        run = subprocess.run(
            _in_namespace(etc, LAUNCHER, url), env=env, capture_output=True, text=True, timeout=30, check=False
        )
        assert run.returncode == status, (url, run.stderr)
        assert ("not locked down" in run.stderr) == (status == 1)


def test_the_setup_refuses_what_is_not_a_server_address() -> None:
    for args in [[], ["ftp://wordjudge.local"], ["wordjudge.local:8000"], ["http://word judge:8000"], ["a", "b"]]:
        run = subprocess.run([str(SETUP), *args], capture_output=True, text=True, timeout=30, check=False)
        assert run.returncode == 2, args
        assert "usage" in run.stderr or "not" in run.stderr


def test_the_launcher_stops_restarting_a_chromium_that_fails_at_once(tmp_path: Path) -> None:
    failing = tmp_path / "chromium"
    failing.write_text("#!/bin/sh\nexit 3\n")
    failing.chmod(0o755)
    # The launcher pauses a second before each restart: a sleep of our own, first on its PATH, notes the pause
    # instead of taking it (four seconds of the fast suite).
    (tmp_path / "bin").mkdir()
    sleep = tmp_path / "bin" / "sleep"
    sleep.write_text(f'#!/bin/sh\necho "$@" >> {tmp_path / "slept"}\n')
    sleep.chmod(0o755)
    env = {
        **os.environ,
        "WORDJUDGE_CHROMIUM": str(failing),
        "WORDJUDGE_KIOSK_UNLOCKED": "1",
        "WORDJUDGE_KIOSK_PROFILE": str(tmp_path / "profile"),
        "PATH": f"{sleep.parent}:{os.environ['PATH']}",
    }
    run = subprocess.run(
        [str(LAUNCHER), "http://192.0.2.7:8000"], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert run.returncode == 1
    assert run.stderr.count("starting it again") == 4
    assert "five times in a row (last status 3): giving up" in run.stderr
    assert (tmp_path / "slept").read_text().split("\n") == ["1"] * 4 + [""]  # a second before each restart


# -- the offline shell over the hall's plain http -----------------------------------------------------------------

SECURE_ORIGIN = "OverrideSecurityRestrictionsOnInsecureOrigin"


def _lan_address() -> str:
    """This machine's address on its network (not loopback, which browsers treat as secure anyway), or skip."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1; a UDP "connect" sends nothing, it only picks a route
        except OSError:
            pytest.skip("no network interface but loopback: a kiosk's LAN address cannot be tried here")
        address: str = probe.getsockname()[0]
    if address.startswith("127."):
        pytest.skip("no network interface but loopback: a kiosk's LAN address cannot be tried here")
    return address


def test_the_setup_treats_a_plain_http_server_as_secure_for_the_offline_shell(tmp_path: Path) -> None:
    _need_a_mount_namespace()
    env = {**os.environ, "WORDJUDGE_CHROMIUM": str(CHROMIUM)}
    for url, secure in [("http://192.168.1.10:8000", ["http://192.168.1.10:8000"]), ("https://wordjudge.local", None)]:
        etc = tmp_path / url.split(":")[0] / "etc-chromium"
        shutil.copytree(ETC_CHROMIUM, etc, symlinks=True)
        # (--no-ca: a certificate the kiosk trusts already; the hall's own CA: tests/test_kiosk_tls.py)
        setup: list[str | Path] = [SETUP, url, *(["--no-ca"] if url.startswith("https") else [])]
        subprocess.run(_in_namespace(etc, *setup), env=env, capture_output=True, text=True, timeout=30, check=True)
        policy = json.loads((etc / POLICY).read_text())
        assert policy["URLAllowlist"] == [url]
        assert policy.get(SECURE_ORIGIN) == secure  # https is secure already


def test_an_unlocked_kiosk_on_plain_http_gets_the_flag_and_an_old_policy_a_warning(tmp_path: Path) -> None:
    flag = "--unsafely-treat-insecure-origin-as-secure="
    unlocked = _launch(tmp_path, "http://192.0.2.7:8000", WORDJUDGE_KIOSK_UNLOCKED="1")
    assert unlocked.returncode == 0, unlocked.stderr
    assert f"{flag}http://192.0.2.7:8000" in (tmp_path / "args").read_text().splitlines()
    assert _launch(tmp_path, "https://192.0.2.7", WORDJUDGE_KIOSK_UNLOCKED="1").returncode == 0
    assert not [arg for arg in (tmp_path / "args").read_text().splitlines() if arg.startswith(flag)]


@pytest.mark.browser
@pytest.mark.live
def test_a_kiosk_on_the_halls_plain_http_opens_its_offline_shell_with_the_setups_policy(
    browser: Browser, data_dir: Path, tmp_path: Path
) -> None:
    """A kiosk reaches the server at http://<LAN address>: not a secure origin, so no service worker, and a kiosk
    restarted while the server is down would show Chromium's error page. The setup's policy makes it secure."""
    _need_a_mount_namespace()
    address = _lan_address()
    write_event(data_dir, [("Open", "demo", "five-per-word")], name="Hall Open")
    store = access_store(data_dir)
    token = store.devices.add("kiosk-lan", Role.KIOSK, by="test").token
    store.close()
    server = LiveServer(data_dir, "--host", address, "--mdns-name", "", "--log-level", "warning")
    server.base = f"http://{address}:{server.port}"
    etc = tmp_path / "etc-chromium"
    shutil.copytree(ETC_CHROMIUM, etc, symlinks=True)
    env = {**os.environ, "WORDJUDGE_CHROMIUM": str(CHROMIUM)}
    subprocess.run(
        _in_namespace(etc, SETUP, server.base), env=env, capture_output=True, text=True, timeout=30, check=True
    )
    # Only the setup's secure-origin rule: the rest of the lock-down (every other address blocked, about:blank
    # too) would stop Playwright from driving the browser, and is tested above with the real launcher.
    policy = json.loads((etc / POLICY).read_text())
    (etc / POLICY).write_text(json.dumps({SECURE_ORIGIN: policy[SECURE_ORIGIN]}))
    chromium = tmp_path / "chromium-in-namespace"
    chromium.write_text("#!/bin/sh\nexec " + shlex.join(_in_namespace(etc, CHROMIUM)) + ' "$@"\n')
    chromium.chmod(0o755)
    server.start()
    try:
        shown = {}
        for name, executable in [("plain", CHROMIUM), ("policy", chromium)]:
            hall = browser.browser_type.launch(executable_path=str(executable), args=CHROMIUM_ARGS)
            page = hall.new_context(viewport={"width": WIDTH, "height": HEIGHT}).new_page()
            page.goto(f"{server.base}/kiosk")
            page.evaluate("token => localStorage.setItem('wordjudge.kiosk.token', token)", token)
            page.goto(f"{server.base}/kiosk")
            expect(page.locator("#app")).to_have_attribute("data-screen", "idle")
            shown[name] = page.evaluate("isSecureContext && 'serviceWorker' in navigator")
            if name == "policy":
                shell_ready(page)
                server.stop()
                page.reload()  # a kiosk restarted while the server is down: its own screen, then back by itself
                expect(page.locator("#app")).to_contain_text("Cannot reach the adjudication server: call the TD")
                server.start()
                expect(page.locator("#app")).to_have_attribute("data-screen", "idle")
            hall.close()
        assert shown == {"plain": False, "policy": True}
    finally:
        server.stop()
