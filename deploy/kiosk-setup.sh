#!/bin/sh
# Lock a kiosk machine's Chromium down to the wordjudge server: run once as root on the kiosk.
#
#   sudo deploy/kiosk-setup.sh http://wordjudge.local:8000
#
# Writes a managed Chromium policy (wordjudge-kiosk.json) that allows only the server's origin
# (scheme, host and port, exactly as the kiosk opens it) and blocks every other address, file://,
# chrome:// (settings, history, clear browsing data), DevTools, incognito and guest windows, other
# profiles, downloads, printing, file dialogs, the password manager, sign-in and extensions.
# Debian's chromium reads it from /etc/chromium/policies/managed/, Google Chrome from
# /etc/opt/chrome/policies/managed/ (WORDJUDGE_CHROMIUM=google-chrome, as for kiosk-chromium.sh).
# The policy applies to every profile of that browser on the machine: use the kiosk for nothing else.
# For a plain http:// server it also treats that origin as secure (OverrideSecurityRestrictionsOnInsecureOrigin):
# browsers give a service worker only to a secure origin, and the kiosk's offline shell is one (a kiosk
# restarted while the server is down shows its own "cannot reach" screen, not Chromium's error page).
# deploy/kiosk-chromium.sh refuses to start unless this policy is installed for its address.
# To undo: delete the file(s) named at the end.
set -eu

usage() {
  echo "usage: $0 http://SERVER:PORT   (the address the kiosk opens, as given to kiosk-chromium.sh)" >&2
  exit 2
}

[ "$#" -eq 1 ] || usage
url="${1%/}"
case "$url" in
  http://?*|https://?*) ;;
  *) echo "kiosk-setup: '$1' is not an http:// or https:// address" >&2; usage ;;
esac
scheme="${url%%://*}"
rest="${url#*://}"
hostport="${rest%%/*}"
origin="$scheme://$hostport"
case "$hostport" in
  *[!A-Za-z0-9.:\[\]-]*|"") echo "kiosk-setup: '$hostport' is not a host name or address" >&2; exit 2 ;;
esac

if [ "$(id -u)" != 0 ]; then
  echo "kiosk-setup: run as root (sudo $0 $1): the policy goes in /etc" >&2
  exit 1
fi

# The policy folder of the browser kiosk-chromium.sh starts (the same choice, the same
# WORDJUDGE_CHROMIUM): Debian's chromium; chromium-browser (older Raspberry Pi OS and Ubuntu's deb,
# which read one folder or the other: both are written); Google Chrome.
browser="${WORDJUDGE_CHROMIUM:-$(command -v chromium || command -v chromium-browser || echo chromium)}"
case "$(basename "$browser")" in
  google-chrome*) folders="/etc/opt/chrome/policies/managed" ;;
  chromium-browser) folders="/etc/chromium-browser/policies/managed /etc/chromium/policies/managed" ;;
  *) folders="/etc/chromium/policies/managed" ;;
esac

# Over plain http the kiosk's origin is not secure, and gets no service worker (the offline shell) unless the
# policy says to treat it as secure. kiosk-chromium.sh looks for this line as written here: keep it on one line.
secure_origin=""
if [ "$scheme" = http ]; then
  secure_origin="  \"OverrideSecurityRestrictionsOnInsecureOrigin\": [\"$origin\"],
"
fi

for folder in $folders; do
  mkdir -p "$folder"
  file="$folder/wordjudge-kiosk.json"
  # kiosk-chromium.sh looks for the URLAllowlist line as written here: keep it on one line.
  cat >"$file.new" <<EOF
{
  "URLAllowlist": ["$origin"],
${secure_origin}  "URLBlocklist": ["*", "file://*", "chrome://*", "chrome-untrusted://*", "chrome-extension://*", "view-source:*", "devtools://*", "chrome-search://*", "javascript:*", "data:*"],
  "DeveloperToolsAvailability": 2,
  "IncognitoModeAvailability": 1,
  "BrowserGuestModeEnabled": false,
  "BrowserAddPersonEnabled": false,
  "ProfilePickerOnStartupAvailability": 1,
  "AllowDeletingBrowserHistory": false,
  "DownloadRestrictions": 3,
  "PrintingEnabled": false,
  "AllowFileSelectionDialogs": false,
  "TaskManagerEndProcessEnabled": false,
  "PasswordManagerEnabled": false,
  "AutofillAddressEnabled": false,
  "AutofillCreditCardEnabled": false,
  "BrowserSignin": 0,
  "SyncDisabled": true,
  "ExtensionInstallBlocklist": ["*"],
  "TranslateEnabled": false,
  "SpellcheckEnabled": false,
  "SearchSuggestEnabled": false,
  "BookmarkBarEnabled": false,
  "EditBookmarksEnabled": false,
  "ScreenCaptureAllowed": false,
  "AudioCaptureAllowed": false,
  "VideoCaptureAllowed": false,
  "DefaultPopupsSetting": 2,
  "DefaultNotificationsSetting": 2,
  "DefaultGeolocationSetting": 2,
  "BackgroundModeEnabled": false,
  "MetricsReportingEnabled": false,
  "DefaultBrowserSettingEnabled": false
}
EOF
  chmod 0644 "$file.new"
  mv "$file.new" "$file"
  echo "kiosk-setup: wrote $file (allows only $origin)"
done
echo "kiosk-setup: restart Chromium (deploy/kiosk-chromium.sh $url) for the policy to apply"
