#!/bin/sh
# Start Chromium as a wordjudge self-adjudication kiosk: full screen, no address bar, no way out
# for a player. Linux and Raspberry Pi OS (packages chromium, or chromium-browser on older
# Raspberry Pi OS).
#
#   sudo deploy/kiosk-setup.sh http://wordjudge.local:8000     # once: the lock-down policy
#   deploy/kiosk-chromium.sh http://wordjudge.local:8000
#
# The server address comes from the first argument, or WORDJUDGE_URL, or http://wordjudge.local:8000.
# The kiosk keeps its enrolment (its device token) in its own Chromium profile, so this uses a
# persistent profile (never --incognito, which would forget the enrolment at every start).
# Extra arguments after the address go to Chromium.
#
# It refuses to start unless kiosk-setup.sh installed the managed policy for this address (which
# blocks every other address, file://, chrome://, DevTools, downloads, printing...), unless
# WORDJUDGE_KIOSK_UNLOCKED=1 says the TD accepts a kiosk a player can leave. --force-app-mode turns
# off Chromium's keyboard shortcuts but back, reload, zoom, cut/copy/paste and DevTools (which the
# policy blocks). When Chromium ends (Alt+F4 handled by the desktop's window manager, a crash), it
# is started again; WORDJUDGE_KIOSK_RESTART=0 runs it once.
#
# Over plain http the kiosk's offline shell (a service worker: its own "cannot reach the server" screen when
# Chromium starts while the server is down) needs the origin treated as secure: the policy does that; unlocked,
# --unsafely-treat-insecure-origin-as-secure does (Chromium then shows a warning bar, as for any unsafe flag).
set -eu

url="${1:-${WORDJUDGE_URL:-http://wordjudge.local:8000}}"
[ "$#" -gt 0 ] && shift
url="${url%/}"
case "$url" in
  http://?*|https://?*) ;;
  *) echo "kiosk-chromium: '$url' is not an http:// or https:// address (e.g. http://wordjudge.local:8000)" >&2; exit 2 ;;
esac
profile="${WORDJUDGE_KIOSK_PROFILE:-$HOME/.config/wordjudge-kiosk}"
browser="${WORDJUDGE_CHROMIUM:-$(command -v chromium || command -v chromium-browser || echo chromium)}"

# The origin the policy must allow: scheme://host[:port], as kiosk-setup.sh writes it.
rest="${url#*://}"
origin="${url%%://*}://${rest%%/*}"
case "$(basename "$browser")" in
  google-chrome*) policies=/etc/opt/chrome/policies/managed ;;
  chromium-browser) policies=/etc/chromium-browser/policies/managed ;;
  *) policies=/etc/chromium/policies/managed ;;
esac
policy="$policies/wordjudge-kiosk.json"
if ! grep -qsF "\"URLAllowlist\": [\"$origin\"]," "$policy"; then
  if [ "${WORDJUDGE_KIOSK_UNLOCKED:-}" = 1 ]; then
    echo "kiosk-chromium: WARNING: no lock-down policy for $origin in $policies (WORDJUDGE_KIOSK_UNLOCKED=1):" \
      "a player can leave the kiosk page, open its profile and read its device token" >&2
  else
    cat >&2 <<EOF
kiosk-chromium: this kiosk's Chromium is not locked down for $origin:
  $policy is missing or allows another address.
  Install the policy once, as root:  sudo $(dirname "$0")/kiosk-setup.sh $origin
  (To start anyway, unlocked, set WORDJUDGE_KIOSK_UNLOCKED=1: a player can then leave the kiosk
  page, open its profile and read its device token.)
EOF
    exit 1
  fi
fi
# The offline shell over plain http: from the policy (kiosk-setup.sh since the shell), or from a flag when unlocked.
secure_origin=""
if [ "${origin%%://*}" = http ]; then
  if [ -f "$policy" ] && grep -qsF "\"URLAllowlist\": [\"$origin\"]," "$policy"; then
    grep -qsF "\"OverrideSecurityRestrictionsOnInsecureOrigin\": [\"$origin\"]," "$policy" ||
      echo "kiosk-chromium: WARNING: $policy predates the offline shell: the kiosk shows Chromium's error page" \
        "when it starts while the server is down; run kiosk-setup.sh $origin again to add it" >&2
  else
    secure_origin="--unsafely-treat-insecure-origin-as-secure=$origin"
  fi
fi
mkdir -p "$profile"

set -- \
  --kiosk \
  --force-app-mode \
  --user-data-dir="$profile" \
  --no-first-run \
  --noerrdialogs \
  --disable-infobars \
  --disable-session-crashed-bubble \
  --disable-translate \
  --disable-features=Translate,TouchpadOverscrollHistoryNavigation \
  --overscroll-history-navigation=0 \
  --disable-pinch \
  --check-for-update-interval=31536000 \
  ${secure_origin:+"$secure_origin"} \
  "$@" \
  "$url/kiosk"

if [ "${WORDJUDGE_KIOSK_RESTART:-1}" = 0 ]; then
  exec "$browser" "$@"
fi

child=""
trap '[ -z "$child" ] || kill "$child" 2>/dev/null; exit 0' INT TERM HUP
quick=0
while :; do
  started=$(date +%s)
  "$browser" "$@" &
  child=$!
  status=0
  wait "$child" || status=$?
  child=""
  # Chromium that keeps failing at once (no display, a bad flag) is not restarted forever.
  if [ $(($(date +%s) - started)) -lt 10 ]; then quick=$((quick + 1)); else quick=0; fi
  if [ "$quick" -ge 5 ]; then
    echo "kiosk-chromium: Chromium exited within 10 s five times in a row (last status $status): giving up" >&2
    exit 1
  fi
  echo "kiosk-chromium: Chromium exited (status $status): starting it again" >&2
  sleep 1
done
