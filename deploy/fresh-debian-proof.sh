#!/usr/bin/env bash
# Proof that a fresh Debian 12 machine, following only the README, serves a kiosk in minutes.
#
#   sudo deploy/fresh-debian-proof.sh            # needs root, debootstrap, network; not run in CI
#
# 1. Setting up the "fresh machine" (not a user command; timed separately): debootstrap a clean
#    Debian 12 (bookworm) root file system into $PROOF_ROOT (default /tmp/fresh-debian), the
#    default variant (required + important packages: no python3, no git, no curl, no sudo). A root
#    left by an earlier run is thrown away; the pristine debootstrap result is kept as a tar
#    ($PROOF_BASE_TAR, default $PROOF_ROOT-base.tar) and restored on later runs, unless PROOF_FRESH=1.
# 2. In a chroot, as a new user "player" (root only where the README says sudo), the README's own
#    commands, each timed by the wall clock:
#      apt update && apt install python3-venv git      (the Quick start's prerequisites)
#      git clone REPO wordjudge              (REPO: a git bundle of this repository's HEAD)
#      the Quick start line, read from README.md and run as it is written:
#        python3 -m venv .venv && .venv/bin/pip install --require-hashes -r requirements.lock && .venv/bin/pip install --no-deps -e . && .venv/bin/wordjudge serve
#      .venv/bin/wordjudge device pair --role kiosk     (deploy/README.md: enrol a kiosk)
#    then, from the host, Debian's chromium (Playwright, executable_path) opens /kiosk, types the
#    pairing code and waits for the idle screen: build/screenshots/fresh-debian-kiosk.png.
# 3. Checks /api/health, prints a summary (also in $PROOF_LOGS/summary.txt), stops the server and
#    unmounts everything it mounted (a trap, on any exit).
#
# Settings (environment): PROOF_ROOT (/tmp/fresh-debian), PROOF_LOGS (/tmp/fresh-debian-logs),
# PROOF_MIRROR (http://deb.debian.org/debian), PROOF_FRESH=1 (debootstrap even if a base tar exists),
# PROOF_PYTHON (a Python with playwright: this
# repository's .venv/bin/python), PROOF_SCREENSHOT (build/screenshots/fresh-debian-kiosk.png),
# PROOF_CA_BUNDLE (a CA bundle for pip inside the chroot; by default the host's bundle when the
# host trusts extra CAs in /usr/local/share/ca-certificates, i.e. a TLS-intercepting proxy: a real
# machine needs none of this).
#
# Only committed work is tested: the chroot clones HEAD, as a new user would clone the repository.
set -euo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd)"
ROOT="${PROOF_ROOT:-/tmp/fresh-debian}"
LOGS="${PROOF_LOGS:-/tmp/fresh-debian-logs}"
MIRROR="${PROOF_MIRROR:-http://deb.debian.org/debian}"
HOST_PYTHON="${PROOF_PYTHON:-$REPO/.venv/bin/python}"
SHOT="${PROOF_SCREENSHOT:-$REPO/build/screenshots/fresh-debian-kiosk.png}"
BASE_TAR="${PROOF_BASE_TAR:-$ROOT-base.tar}"
NEWUSER=player

[ "$(id -u)" = 0 ] || { echo "fresh-debian-proof: run as root (debootstrap, chroot, mount)" >&2; exit 2; }
case "$ROOT" in /|"$REPO"|"$REPO"/*) echo "fresh-debian-proof: PROOF_ROOT must be outside the repository" >&2; exit 2 ;; esac

mkdir -p "$LOGS" "$(dirname "$SHOT")"
SUMMARY="$LOGS/summary.txt"
: >"$SUMMARY"

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
say() { echo "== $*"; }
record() { printf '%-44s %8s s\n' "$1" "$2" | tee -a "$SUMMARY"; }
note() { echo "   $*" | tee -a "$SUMMARY"; }
in_root() { chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }
as_user() { chroot "$ROOT" /bin/su - "$NEWUSER" -c "$1"; }

# -- cleanup: stop the server, unmount what we mounted (reverse order) ----------------------------

descendants() { # deepest first
  local child
  for child in $(pgrep -P "$1"); do descendants "$child"; echo "$child"; done
}

MOUNTED=()
SERVER_SU_PID=""
cleanup() {
  local status=$?
  set +e
  if [ -n "$SERVER_SU_PID" ] && kill -0 "$SERVER_SU_PID" 2>/dev/null; then
    # su -> bash -> python (wordjudge serve): the server first (a clean shutdown), then its shells.
    for pid in $(descendants "$SERVER_SU_PID"); do kill -TERM "$pid" 2>/dev/null; done
    for _ in $(seq 50); do kill -0 "$SERVER_SU_PID" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$SERVER_SU_PID" 2>/dev/null && kill -KILL "$SERVER_SU_PID" 2>/dev/null
    wait "$SERVER_SU_PID" 2>/dev/null
  fi
  for ((i = ${#MOUNTED[@]} - 1; i >= 0; i--)); do
    umount "${MOUNTED[i]}" 2>/dev/null || umount -l "${MOUNTED[i]}"
  done
  if findmnt -rn -o TARGET | grep -q "^$ROOT/"; then
    echo "fresh-debian-proof: still mounted under $ROOT:" >&2
    findmnt -rn -o TARGET | grep "^$ROOT/" >&2
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mount_in_root() { # type-or-bind source target
  mkdir -p "$ROOT/$3"
  if [ "$1" = bind ]; then mount --bind "$2" "$ROOT/$3"; else mount -t "$1" "$2" "$ROOT/$3"; fi
  MOUNTED+=("$ROOT/$3")
}

# -- 0. the host: debootstrap, chromium, playwright ------------------------------------------------

if findmnt -rn -o TARGET | grep -q "^$ROOT/"; then
  echo "fresh-debian-proof: something is mounted under $ROOT; unmount it first" >&2
  exit 1
fi
command -v debootstrap >/dev/null || { say "installing debootstrap on the host"; apt-get install -y -qq debootstrap >/dev/null; }
command -v /usr/bin/chromium >/dev/null || { say "installing chromium on the host"; apt-get install -y -qq chromium >/dev/null; }
"$HOST_PYTHON" -c 'import playwright' 2>/dev/null || {
  echo "fresh-debian-proof: $HOST_PYTHON has no playwright (.ci/check installs it; or set PROOF_PYTHON)" >&2
  exit 1
}
if [ -n "$(git -C "$REPO" status --porcelain --untracked-files=no)" ]; then
  echo "   note: the working tree has uncommitted changes; the proof clones HEAD ($(git -C "$REPO" rev-parse --short HEAD)) only" >&2
fi

# -- 1. the fresh machine ----------------------------------------------------------------------------

echo "fresh-debian-proof $(date -u +%FT%TZ), repository HEAD $(git -C "$REPO" rev-parse --short HEAD), $(nproc) cores" | tee -a "$SUMMARY"
if [ -e "$ROOT" ]; then
  say "removing the root of an earlier run: $ROOT"
  rm -rf --one-file-system "$ROOT"
fi
if [ -f "$BASE_TAR" ] && [ "${PROOF_FRESH:-0}" != 1 ]; then
  say "restoring the pristine debootstrap root from $BASE_TAR (PROOF_FRESH=1 to debootstrap again)"
  t0=$(now)
  mkdir -p "$ROOT" && tar -xpf "$BASE_TAR" -C "$ROOT"
  record "setup: restore pristine bookworm root" "$(secs "$t0" "$(now)")"
else
  say "debootstrap bookworm into $ROOT (setup of the fresh machine, not a user command)"
  t0=$(now)
  debootstrap --arch="$(dpkg --print-architecture)" bookworm "$ROOT" "$MIRROR" >"$LOGS/debootstrap.log" 2>&1 ||
    { tail -20 "$LOGS/debootstrap.log" >&2; exit 1; }
  record "setup: debootstrap bookworm" "$(secs "$t0" "$(now)")"
  tar -cpf "$BASE_TAR.part" -C "$ROOT" . && mv "$BASE_TAR.part" "$BASE_TAR"
fi

mount_in_root proc proc proc
mount_in_root sysfs sys sys
mount_in_root bind /dev dev
mount_in_root bind /dev/pts dev/pts
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
in_root useradd -m -s /bin/bash "$NEWUSER"

# Test-host plumbing, not part of the README: where the host's egress re-signs TLS, pip inside the
# chroot must trust the host's CAs. A real machine reaches PyPI with pip's own certificates.
CA="${PROOF_CA_BUNDLE:-}"
if [ -z "$CA" ] && compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then CA=/etc/ssl/certs/ca-certificates.crt; fi
if [ -n "$CA" ]; then
  cp "$CA" "$ROOT/etc/proof-host-ca-bundle.crt"
  printf '[global]\ncert = /etc/proof-host-ca-bundle.crt\n' >"$ROOT/etc/pip.conf"
  note "(test host only: pip in the chroot trusts $CA through /etc/pip.conf)"
fi

# The repository, as a new user would clone it: a bundle of HEAD (a file:// clone of a repository
# owned by another user fails git's safe.directory check, which a real clone never meets).
mkdir -p "$ROOT/srv"
git -C "$REPO" bundle create "$ROOT/srv/wordjudge.bundle" HEAD --branches 2>/dev/null
chmod 644 "$ROOT/srv/wordjudge.bundle"

# -- 2. the README's commands, as the new user -----------------------------------------------------

say "a new user, following the README"
if ! as_user 'command -v python3 git' >/dev/null 2>&1; then
  note "fresh machine: python3 $(as_user 'command -v python3 >/dev/null && echo present || echo missing'), git $(as_user 'command -v git >/dev/null && echo present || echo missing')"
fi

COMMANDS_START=$(now)
t0=$(now)
in_root sh -c 'apt update && DEBIAN_FRONTEND=noninteractive apt install -y python3-venv git' >"$LOGS/apt.log" 2>&1 ||
  { tail -20 "$LOGS/apt.log" >&2; exit 1; }
T_APT=$(secs "$t0" "$(now)")
record "user: apt update && apt install python3-venv git" "$T_APT"
note "$(grep -E 'newly installed' "$LOGS/apt.log")"

t0=$(now)
as_user 'git clone -q /srv/wordjudge.bundle wordjudge' >"$LOGS/clone.log" 2>&1 || { cat "$LOGS/clone.log" >&2; exit 1; }
T_CLONE=$(secs "$t0" "$(now)")
record "user: git clone" "$T_CLONE"

PYTHON_VERSION=$(as_user 'python3 --version')
note "bookworm: $PYTHON_VERSION, $(as_user 'git --version')"

# The Quick start line, exactly as the README writes it: the first sh block after "## Quick start".
QUICK=$(awk '/^## Quick start/ { q = 1 } q && /^```sh/ { b = 1; next } b && /^```/ { exit } b { print }' "$REPO/README.md")
case "$QUICK" in
  *"pip install"*"wordjudge serve"*) ;;
  *) echo "fresh-debian-proof: README's Quick start no longer reads 'pip install ... wordjudge serve': $QUICK" >&2; exit 1 ;;
esac
note "Quick start line: $QUICK"

PORT=8000
PORT_ENV=""
if ss -ltnH "sport = :$PORT" | grep -q .; then
  PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  PORT_ENV="export WORDJUDGE_PORT=$PORT; "
  note "port 8000 is busy on this host: WORDJUDGE_PORT=$PORT (the README's documented setting)"
fi
BASE="http://127.0.0.1:$PORT"

t0=$(now)
chroot "$ROOT" /bin/su - "$NEWUSER" -c "cd wordjudge && $PORT_ENV$QUICK" >"$LOGS/quickstart.log" 2>&1 &
SERVER_SU_PID=$!
T_PIP="" T_UP=""
deadline=$(($(date +%s) + 600))
# Up when this server says it listens (not another process that holds the port) and answers.
until grep -q "Uvicorn running on $BASE" "$LOGS/quickstart.log" && curl -fsS "$BASE/api/health" -o "$LOGS/health.json" 2>/dev/null; do
  if [ -z "$T_PIP" ] && grep -q '^Successfully installed' "$LOGS/quickstart.log"; then T_PIP=$(secs "$t0" "$(now)"); fi
  if ! kill -0 "$SERVER_SU_PID" 2>/dev/null; then
    echo "fresh-debian-proof: the Quick start command ended:" >&2; tail -30 "$LOGS/quickstart.log" >&2; exit 1
  fi
  [ "$(date +%s)" -lt "$deadline" ] || { echo "fresh-debian-proof: no /api/health after 10 minutes" >&2; exit 1; }
  sleep 0.1
done
T_SERVE_TOTAL=$(secs "$t0" "$(now)")
T_PIP=${T_PIP:-$T_SERVE_TOTAL}
T_UP=$(awk -v a="$T_PIP" -v b="$T_SERVE_TOTAL" 'BEGIN { printf "%.1f", b - a }')
record "user: python3 -m venv + pip install -e ." "$T_PIP"
record "      wordjudge serve until /api/health" "$T_UP"
note "$(as_user 'wordjudge/.venv/bin/pip --version')"
grep -q DEPRECATION "$LOGS/quickstart.log" && note "pip printed: $(grep -o 'DEPRECATION: [^,]*' "$LOGS/quickstart.log" | head -1)"

# The README's "Using it" section writes plain `wordjudge ...`: what a new user meets when typing it.
if as_user 'cd wordjudge && wordjudge --help' >/dev/null 2>&1; then
  note "README 'Using it': plain 'wordjudge' runs"
else
  note "README 'Using it': plain 'wordjudge' is not found (the venv is not activated; .venv/bin/wordjudge works)"
fi

t0=$(now)
as_user "cd wordjudge && $PORT_ENV.venv/bin/wordjudge device pair --role kiosk" >"$LOGS/pair.log" 2>&1 ||
  { cat "$LOGS/pair.log" >&2; exit 1; }
T_PAIR=$(secs "$t0" "$(now)")
CODE=$(sed -n 's/^Pairing code: \([^ ]*\).*/\1/p' "$LOGS/pair.log")
[ -n "$CODE" ] || { echo "fresh-debian-proof: no pairing code in:" >&2; cat "$LOGS/pair.log" >&2; exit 1; }
record "user: wordjudge device pair --role kiosk" "$T_PAIR"
note "$(grep '^Link:' "$LOGS/pair.log")"

# The kiosk: Debian's chromium opens /kiosk, the pairing code is typed, the idle screen shows.
cat >"$LOGS/pair_kiosk.py" <<'PY'
import sys, time
from playwright.sync_api import sync_playwright

base, code, shot = sys.argv[1:4]
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
with sync_playwright() as p:
    browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
    page = browser.new_page(viewport={"width": 1024, "height": 600})
    failures = []
    page.on("pageerror", lambda e: failures.append(f"page error: {e}"))
    page.on("response", lambda r: r.status >= 400 and failures.append(f"{r.status} {r.url}"))
    t0 = time.monotonic()
    page.goto(f"{base}/kiosk")
    page.wait_for_selector("#app[data-screen=pair]", timeout=15000)
    page.screenshot(path=shot.replace(".png", "-pairing.png"))
    page.fill("#pair-code", code)
    page.get_by_role("button", name="Pair this kiosk").click()
    page.wait_for_selector("#app[data-screen=idle]", timeout=15000)
    page.wait_for_function("document.querySelector('#server-state')?.textContent.trim().length > 0", timeout=10000)
    elapsed = time.monotonic() - t0
    page.screenshot(path=shot)
    print(f"seconds {elapsed:.1f}")
    print("idle screen:", " | ".join(line for line in page.inner_text("#app").split("\n") if line.strip()))
    for failure in failures:
        print("browser:", failure)
    browser.close()
PY
t0=$(now)
"$HOST_PYTHON" "$LOGS/pair_kiosk.py" "$BASE" "$CODE" "$SHOT" >"$LOGS/kiosk.log" 2>&1 || { cat "$LOGS/kiosk.log" >&2; exit 1; }
T_KIOSK=$(secs "$t0" "$(now)")
record "user: open /kiosk, type the code, idle screen" "$(sed -n 's/^seconds //p' "$LOGS/kiosk.log")"
note "(with starting chromium and Playwright: $T_KIOSK s)"
grep -v '^seconds' "$LOGS/kiosk.log" | while IFS= read -r line; do note "$line"; done
COMMANDS_END=$(now)

# -- 3. checks and the summary ---------------------------------------------------------------------

python3 - "$LOGS/health.json" <<'PY'
import json, sys
health = json.load(open(sys.argv[1]))
assert health["ok"] is True and health["state"] == "ok", health
lexicon = health["lexicons"][0]
print(f"   /api/health: ok, {health['event']}, {lexicon['label']}")
PY
kill -0 "$SERVER_SU_PID" 2>/dev/null || { echo "fresh-debian-proof: the server in the chroot stopped" >&2; tail -20 "$LOGS/quickstart.log" >&2; exit 1; }
curl -fsS "$BASE/api/health" | python3 -c 'import json, sys; d = json.load(sys.stdin); assert d["ok"]' || { echo "fresh-debian-proof: /api/health is not ok" >&2; exit 1; }
as_user "cd wordjudge && .venv/bin/wordjudge device list" | while IFS= read -r line; do note "device list: $line"; done

TOTAL=$(awk -v a="$T_APT" -v b="$T_CLONE" -v c="$T_SERVE_TOTAL" -v d="$T_PAIR" -v e="$T_KIOSK" 'BEGIN { printf "%.1f", a + b + c + d + e }')
echo | tee -a "$SUMMARY"
record "user commands, summed (target: < 300 s)" "$TOTAL"
record "first user command to kiosk idle (wall)" "$(secs "$COMMANDS_START" "$COMMANDS_END")"
note "(machine: $(nproc) cores, shared with other work; logs in $LOGS; screenshot $SHOT)"
if awk -v t="$TOTAL" 'BEGIN { exit !(t < 300) }'; then
  echo "PASS: a kiosk in ${TOTAL} s of commands" | tee -a "$SUMMARY"
else
  echo "FAIL: ${TOTAL} s of commands is over 5 minutes" | tee -a "$SUMMARY"
  exit 1
fi
