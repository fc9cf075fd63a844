#!/bin/sh
# Lock a kiosk machine's Chromium down to the wordjudge server: run once as root on the kiosk.
#
#   sudo deploy/kiosk-setup.sh https://192.168.1.10:8000     # a hall: HTTPS with the hall's certificate
#   sudo deploy/kiosk-setup.sh http://127.0.0.1:8000         # a single-machine demo: plain HTTP
#
# For an https:// server it first makes the kiosk's Chromium trust the hall's CA (the certificate authority
# `wordjudge hall cert` made): it takes the CA from the server (URL/hall-ca.pem, fetched without checking, since
# nothing is trusted yet) or from --ca FILE, prints its SHA-256 fingerprint and asks the TD to compare it with the
# one `wordjudge hall cert` printed (or checks it against --fingerprint), then adds it, trusted for web sites only
# ("C,,"), to the kiosk user's NSS databases (~/.pki/nssdb and ~/.local/share/pki/nssdb, which Chromium reads on
# Linux; certutil is in the package libnss3-tools). A phone holding the server's address then gets a certificate
# error, not the kiosk's page or token. A wrong fingerprint stops the script: nothing is written.
#   --user NAME        the user the kiosk's Chromium runs as (default: the one who ran sudo)
#   --home DIR         that user's home folder, if not the one the system names
#   --ca FILE          the hall's CA (tls/hall-ca.pem of the server's data folder), instead of fetching it
#   --fingerprint FP   the fingerprint `wordjudge hall cert` printed (AB:CD:...; spaces and case do not matter)
#   --no-ca            the server's certificate comes from a CA the kiosk trusts already
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
  echo "usage: $0 http(s)://SERVER:PORT [--user NAME] [--home DIR] [--ca FILE] [--fingerprint FP] [--no-ca]" >&2
  echo "  (the address the kiosk opens, as given to kiosk-chromium.sh)" >&2
  exit 2
}

[ "$#" -ge 1 ] || usage
url="${1%/}"
shift
kiosk_user="${WORDJUDGE_KIOSK_USER:-${SUDO_USER:-}}"
kiosk_home=""
ca_file=""
expected=""
trust_ca=yes
while [ "$#" -gt 0 ]; do
  case "$1" in
    --user) [ "$#" -ge 2 ] || usage; kiosk_user="$2"; shift 2 ;;
    --home) [ "$#" -ge 2 ] || usage; kiosk_home="$2"; shift 2 ;;
    --ca) [ "$#" -ge 2 ] || usage; ca_file="$2"; shift 2 ;;
    --fingerprint) [ "$#" -ge 2 ] || usage; expected="$2"; shift 2 ;;
    --no-ca) trust_ca=no; shift ;;
    *) echo "kiosk-setup: unknown option '$1'" >&2; usage ;;
  esac
done
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
  echo "kiosk-setup: run as root (sudo $0 $url): the policy goes in /etc" >&2
  exit 1
fi

# The hall's CA, trusted by the kiosk user's Chromium: before the policy, so that a refusal writes nothing.
# The fingerprint as the TD compares it: upper-case hex pairs joined by colons.
normal() { printf '%s' "$1" | tr -d ' :\n\t' | tr 'a-f' 'A-F'; }
if [ "$scheme" = https ] && [ "$trust_ca" = yes ]; then
  command -v certutil >/dev/null || { echo "kiosk-setup: certutil is missing: apt install libnss3-tools" >&2; exit 1; }
  command -v openssl >/dev/null || { echo "kiosk-setup: openssl is missing: apt install openssl" >&2; exit 1; }
  [ -n "$kiosk_user" ] || { echo "kiosk-setup: name the user the kiosk's Chromium runs as: --user NAME" >&2; exit 2; }
  if [ -z "$kiosk_home" ]; then
    kiosk_home="$(getent passwd "$kiosk_user" | cut -d: -f6)"
    [ -n "$kiosk_home" ] || { echo "kiosk-setup: no user '$kiosk_user' on this machine" >&2; exit 2; }
  fi
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  if [ -z "$ca_file" ]; then
    ca_file="$work/hall-ca.pem"
    # Not checked (--insecure): the kiosk trusts nothing of the hall yet; the fingerprint below is the check.
    if ! curl --fail --silent --show-error --insecure --max-time 10 -o "$ca_file" "$origin/hall-ca.pem"; then
      echo "kiosk-setup: could not fetch $origin/hall-ca.pem: is the server running with the hall's certificate" \
        "(wordjudge hall cert)? Or copy tls/hall-ca.pem of its data folder here and give --ca FILE" >&2
      exit 1
    fi
  fi
  if ! openssl x509 -noout -in "$ca_file" 2>/dev/null; then
    echo "kiosk-setup: $ca_file is not a PEM certificate" >&2
    exit 1
  fi
  if ! openssl x509 -noout -text -in "$ca_file" | grep -q "CA:TRUE"; then
    echo "kiosk-setup: $ca_file is not a certificate authority (wordjudge hall cert makes the hall's)" >&2
    exit 1
  fi
  found="$(openssl x509 -noout -fingerprint -sha256 -in "$ca_file" | sed 's/^[^=]*=//')"
  subject="$(openssl x509 -noout -subject -nameopt multiline -in "$ca_file" | sed -n 's/^ *commonName *= *//p')"
  echo "kiosk-setup: the server's CA is '$subject', SHA-256 fingerprint:"
  echo "  $found"
  if [ -n "$expected" ]; then
    if [ "$(normal "$found")" != "$(normal "$expected")" ]; then
      echo "kiosk-setup: that is NOT the fingerprint given ($expected): something other than the hall's server" \
        "answered at $origin (or the wrong one was typed). Nothing was changed." >&2
      exit 1
    fi
    echo "kiosk-setup: it is the fingerprint given"
  else
    printf '%s' "Is it the fingerprint wordjudge hall cert printed on the server? Type yes to trust it: "
    read -r answer || answer=""
    if [ "$answer" != yes ]; then
      echo "kiosk-setup: not trusted; nothing was changed" >&2
      exit 1
    fi
  fi
  # As the kiosk user, so that every folder and file made in its home is its own.
  as_kiosk() { if [ "$(id -u "$kiosk_user")" = 0 ]; then "$@"; else runuser -u "$kiosk_user" -- "$@"; fi; }
  chmod 0755 "$work"
  cp "$ca_file" "$work/ca.pem" && chmod 0644 "$work/ca.pem" && ca_file="$work/ca.pem"  # readable by the kiosk user
  for nssdb in "$kiosk_home/.pki/nssdb" "$kiosk_home/.local/share/pki/nssdb"; do
    as_kiosk mkdir -p "$nssdb"
    [ -f "$nssdb/cert9.db" ] || as_kiosk certutil -N -d "sql:$nssdb" --empty-password
    as_kiosk certutil -D -d "sql:$nssdb" -n "wordjudge hall" 2>/dev/null || true  # an earlier event's CA, replaced
    as_kiosk certutil -A -d "sql:$nssdb" -n "wordjudge hall" -t "C,," -i "$ca_file"
    echo "kiosk-setup: $nssdb trusts the hall's CA for web sites"
  done
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
