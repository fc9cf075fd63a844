#!/bin/sh
# Start Chromium as a wordjudge self-adjudication kiosk: full screen, no address bar, no way out
# for a player. Linux and Raspberry Pi OS (packages chromium, or chromium-browser on older
# Raspberry Pi OS).
#
#   deploy/kiosk-chromium.sh http://wordjudge.local:8000
#
# The server address comes from the first argument, or WORDJUDGE_URL, or http://wordjudge.local:8000.
# The kiosk keeps its enrolment (its device token) in its own Chromium profile, so this uses a
# persistent profile (never --incognito, which would forget the enrolment at every start).
# Extra arguments after the address go to Chromium.
set -eu

url="${1:-${WORDJUDGE_URL:-http://wordjudge.local:8000}}"
[ "$#" -gt 0 ] && shift
profile="${WORDJUDGE_KIOSK_PROFILE:-$HOME/.config/wordjudge-kiosk}"
browser="${WORDJUDGE_CHROMIUM:-$(command -v chromium || command -v chromium-browser || echo chromium)}"
mkdir -p "$profile"

exec "$browser" \
  --kiosk \
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
  "$@" \
  "${url%/}/kiosk"
