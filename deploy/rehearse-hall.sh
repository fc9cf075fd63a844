#!/bin/bash
# Check one machine of a wordjudge hall before the event (deploy/hall.md, set-up step 6): run it as root on each
# machine, from the repository's folder,
#
#   sudo deploy/rehearse-hall.sh                     # the TD-confirmed hall
#   sudo deploy/rehearse-hall.sh --patroni           # the automatic way (Patroni and etcd)
#   sudo deploy/rehearse-hall.sh --failover-drill    # on the standby only, before the event: the rehearsal's
#                                                    # failover, guided (it promotes this machine)
#
# It prints one line per check, PASS, WARN or FAIL, and under each failure its fix, naming the guide's step. It
# changes nothing unless --failover-drill is given. It uses the installed commands (psql, wordjudge standby
# status, the server's health over curl, chronyc) and reads /etc/wordjudge/wordjudge.env, as the service does.
# Exit status: 0 when nothing failed, 1 otherwise. Needs nothing that the guide's steps do not install.
#
# Where the tests point it elsewhere (tests/test_rehearse.py): --env FILE, --data-dir DIR, --wordjudge PATH,
# --database URL (this machine's database as a superuser, instead of the postgres user's socket), --skip SECTION
# (packages, postgresql, server, clock), --chrony-conf FILE, --chronyc 'COMMAND'.
set -u

ENV_FILE=/etc/wordjudge/wordjudge.env
DATA_DIR=/var/lib/wordjudge
WORDJUDGE=/opt/wordjudge/venv/bin/wordjudge
DATABASE=
CHRONY_CONF=/etc/chrony/conf.d/wordjudge-hall.conf
CHRONYC=chronyc
PATRONI=no
DRILL=no
SKIP=" "
GUIDE="deploy/hall.md"

usage() {
  sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
}
while [ $# -gt 0 ]; do
  case "$1" in
    --env) ENV_FILE=$2; shift 2 ;;
    --data-dir) DATA_DIR=$2; shift 2 ;;
    --wordjudge) WORDJUDGE=$2; shift 2 ;;
    --database) DATABASE=$2; shift 2 ;;
    --chrony-conf) CHRONY_CONF=$2; shift 2 ;;
    --chronyc) CHRONYC=$2; shift 2 ;;
    --skip) SKIP="$SKIP$2 "; shift 2 ;;
    --patroni) PATRONI=yes; shift ;;
    --failover-drill) DRILL=yes; shift ;;
    -h|--help) usage ;;
    *) echo "rehearse-hall.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done

FAILED=0
WARNED=0
pass() { printf 'PASS  %s\n' "$1"; }
warn() { printf 'WARN  %s\n' "$1"; [ -n "${2:-}" ] && printf '      fix: %s\n' "$2"; WARNED=$((WARNED + 1)); }
fail() { printf 'FAIL  %s\n' "$1"; printf '      fix: %s\n' "$2"; FAILED=$((FAILED + 1)); }
skipped() { case "$SKIP" in *" $1 "*) return 0 ;; esac; return 1; }

if [ "$(id -u)" != 0 ]; then
  echo "rehearse-hall.sh: run it as root (sudo deploy/rehearse-hall.sh): it reads $ENV_FILE and asks PostgreSQL as postgres" >&2
  exit 2
fi

# The service's settings, as the service reads them.
if [ -r "$ENV_FILE" ]; then
  set -a
  # shellcheck disable=SC1090
  . "$ENV_FILE"
  set +a
else
  fail "no settings file $ENV_FILE" "$GUIDE, set-up step 4: write it on this machine"
fi
PUBLIC_URL=${WORDJUDGE_PUBLIC_URL:-}
PEERS=${WORDJUDGE_PEERS:-}
PYTHON="$(dirname "$WORDJUDGE")/python3"
[ -x "$PYTHON" ] || PYTHON=python3

# The superuser's psql and wordjudge on this machine's database: the postgres user over Debian's socket, as the
# guide's commands run them, unless --database names it.
if [ -n "$DATABASE" ]; then
  sql() { psql -X -At -v ON_ERROR_STOP=1 -d "$DATABASE" -c "$1" 2>&1; }
  as_admin() { "$WORDJUDGE" "$@" --database "$DATABASE" 2>&1; }
else
  SOCKET_URL='postgresql:///hall?host=/var/run/postgresql'
  sql() { runuser -u postgres -- psql -X -At -v ON_ERROR_STOP=1 -d hall -c "$1" 2>&1; }
  as_admin() { (cd / && runuser -u postgres -- "$WORDJUDGE" "$@" --database "$SOCKET_URL" 2>&1); }
fi

# -- the packages and commands each step needs ------------------------------------------------------------------
have() {  # have COMMAND PACKAGE STEP
  if command -v "$1" >/dev/null 2>&1; then
    pass "$1 is installed"
  else
    fail "$1 is missing" "sudo apt-get install $2 ($GUIDE, $3)"
  fi
}
if ! skipped packages; then
  have psql postgresql "set-up: on both machines"
  have pg_basebackup postgresql "set-up step 2"
  have curl curl "set-up step 6: health"
  have chronyc chrony "set-up step 5"
  if [ -x "$WORDJUDGE" ]; then pass "wordjudge is installed ($WORDJUDGE)"; else
    fail "wordjudge is not installed at $WORDJUDGE" "install it as deploy/README.md says"; fi
  if [ "$PATRONI" = yes ]; then
    have etcdctl etcd-client "\"The automatic way\", step 1"
    if [ -x /opt/wordjudge-patroni/bin/patronictl ]; then pass "Patroni is installed (/opt/wordjudge-patroni)"; else
      fail "Patroni is not in /opt/wordjudge-patroni" "$GUIDE, \"The automatic way\", step 2 (pip install --require-hashes)"; fi
    if command -v hallctl >/dev/null 2>&1; then pass "hallctl is installed"; else
      fail "hallctl is missing" "sudo install -m 0755 deploy/patroni/hallctl /usr/local/bin/hallctl ($GUIDE, \"The automatic way\", step 3)"; fi
  fi
fi

# -- PostgreSQL: the settings of steps 1 and 2, and the synchronous standby -----------------------------------
ms() {  # ms SETTING: its value in milliseconds (PostgreSQL's own unit conversion)
  sql "SELECT CASE unit WHEN 's' THEN setting::bigint * 1000 WHEN 'min' THEN setting::bigint * 60000 ELSE setting::bigint END FROM pg_settings WHERE name = '$1'"
}
ROLE_DB=
if ! skipped postgresql; then
  recovery=$(sql "SELECT pg_is_in_recovery()")
  case "$recovery" in
    t) ROLE_DB=standby; pass "PostgreSQL answers: this machine's database is a standby" ;;
    f) ROLE_DB=primary; pass "PostgreSQL answers: this machine's database takes writes (the active machine)" ;;
    *) fail "PostgreSQL does not answer: $(printf '%s' "$recovery" | head -n 1)" "sudo systemctl start postgresql ($GUIDE, set-up step 1)" ;;
  esac
fi
if [ -n "$ROLE_DB" ]; then
  conf="/etc/postgresql/15/main/conf.d/wordjudge-hall.conf ($GUIDE, set-up step 1), then sudo systemctl restart postgresql"
  [ "$PATRONI" = yes ] && conf="deploy/patroni/patroni.yml as /etc/patroni/hall.yml (\"The automatic way\", step 3)"
  value=$(sql "SHOW synchronous_commit")
  if [ "$value" = on ] || [ "$value" = remote_apply ]; then pass "synchronous_commit = $value"; else
    fail "synchronous_commit = $value: a verdict could be shown before the standby has it" "synchronous_commit = on in $conf"; fi
  value=$(ms wal_sender_timeout)
  if [ "$value" -gt 0 ] 2>/dev/null && [ "$value" -le 10000 ]; then pass "wal_sender_timeout = ${value} ms"; else
    fail "wal_sender_timeout = ${value} ms: a standby that dies silently is given up only then (the hall stopped meanwhile, unwarned)" "wal_sender_timeout = 5s in $conf"; fi
  value=$(ms wal_retrieve_retry_interval)
  if [ "$value" -le 1000 ] 2>/dev/null; then pass "wal_retrieve_retry_interval = ${value} ms"; else
    fail "wal_retrieve_retry_interval = ${value} ms: a promotion waits that long" "wal_retrieve_retry_interval = 500ms in $conf"; fi
  if [ "$ROLE_DB" = primary ]; then
    names=$(sql "SHOW synchronous_standby_names")
    fix="once the standby streams, sudo -u postgres psql -c \"ALTER SYSTEM SET synchronous_standby_names = '*'\" -c \"SELECT pg_reload_conf()\" ($GUIDE, set-up step 2; after a failover: wordjudge standby require)"
    [ "$PATRONI" = yes ] && fix="Patroni sets it once the standby streams: start the other machine's Patroni, and sudo hallctl list must show it Sync Standby (\"The automatic way\", step 3)"
    if [ -n "$names" ]; then pass "synchronous_standby_names = '$names': every commit waits for the standby"; else
      fail "synchronous_standby_names is empty: verdicts live on this machine only" "$fix"; fi
    sync=$(sql "SELECT string_agg(application_name || ' ' || client_addr || ' ' || state || ' ' || sync_state, ', ') FROM pg_stat_replication")
    case "$sync" in
      *streaming\ sync*) pass "a synchronous standby streams from this machine ($sync)" ;;
      "") fail "no standby streams from this machine" "on the standby machine: its copy and start ($GUIDE, set-up step 2)" ;;
      *) fail "a standby streams, but not synchronously ($sync)" "$GUIDE, set-up step 2: synchronous_standby_names = '*' (or wordjudge standby require)" ;;
    esac
  else
    receiver=$(sql "SELECT status || ' from ' || coalesce(sender_host, '?') FROM pg_stat_wal_receiver")
    case "$receiver" in
      streaming*) pass "this standby streams ($receiver)" ;;
      *) fail "this standby does not stream (${receiver:-no WAL receiver})" "$GUIDE, set-up step 2: pg_basebackup from the active machine, then sudo systemctl start postgresql" ;;
    esac
  fi
  status=$(as_admin standby status)
  if [ $? = 0 ]; then pass "wordjudge standby status: $(printf '%s' "$status" | sed -n 2p)"; else
    fail "wordjudge standby status failed: $(printf '%s' "$status" | tail -n 1)" "$GUIDE, set-up step 1 (wordjudge database init)"; fi
fi

# -- the server: its health, its peer, its transport, the hall key ----------------------------------------------
health() {  # health URL: NAME=VALUE lines of what the check needs, from the server's /api/health
  local ca="$DATA_DIR/tls/hall-ca.pem" trust=()
  [ -r "$ca" ] && trust=(--cacert "$ca")
  curl -sS --max-time 5 "${trust[@]}" "$1/api/health" 2>&1 | "$PYTHON" -c '
import json, sys
text = sys.stdin.read()
try:
    body = json.loads(text)
except ValueError:
    print("error=" + " ".join(text.split())[:200] or "no answer"); sys.exit()
hall = body.get("hall") or {}
print("state=%s" % body.get("state"))
print("role=%s" % hall.get("role"))
print("epoch=%s" % hall.get("epoch"))
print("key_id=%s" % hall.get("key_id"))
print("scheme=%s" % (body.get("transport") or {}).get("scheme"))
for peer in hall.get("peers") or []:
    print("peer=%s %s %s" % (peer.get("url"), "proven" if peer.get("proven") else "unproven:%s" % peer.get("unproven"), peer.get("role")))
for warning in body.get("warnings") or []:
    print("warning=" + " ".join(str(warning).split()))
'
}
field() { printf '%s\n' "$2" | sed -n "s/^$1=//p"; }
KEY_ID=
if ! skipped server; then
  if [ -z "$PUBLIC_URL" ] || [ -z "$PEERS" ]; then
    fail "WORDJUDGE_PUBLIC_URL or WORDJUDGE_PEERS is not set in $ENV_FILE" "$GUIDE, set-up step 4"
  else
    seen=$(health "$PUBLIC_URL")
    error=$(field error "$seen")
    if [ -n "$error" ]; then
      fail "this machine's server does not answer at $PUBLIC_URL ($error)" "sudo systemctl start wordjudge, then sudo journalctl -u wordjudge says why it stopped ($GUIDE, set-up step 6)"
    else
      role=$(field role "$seen")
      case "$role/$ROLE_DB" in
        active/primary | active/) pass "the server is the hall's active one (epoch $(field epoch "$seen"))" ;;
        standby/standby | standby/) pass "the server is the standby ($(field state "$seen"))" ;;
        *) fail "the server's role is $role (its database: ${ROLE_DB:-not checked})" "read its health's reasons: curl $PUBLIC_URL/api/health ($GUIDE, \"When a server says split\" or \"When the active machine dies\", step 6)" ;;
      esac
      scheme=$(field scheme "$seen")
      if [ "$scheme" = https ]; then pass "the server serves HTTPS with the hall's certificate"; else
        fail "the server serves $scheme, not HTTPS: a phone that takes its address owns the kiosks' page" "sudo wj hall cert, and WORDJUDGE_HTTPS=on with https:// addresses in $ENV_FILE ($GUIDE, set-up steps 3 and 4)"; fi
      peers=$(field peer "$seen")
      if [ -z "$peers" ]; then
        fail "the server has not heard its peer yet" "start the other machine's server ($GUIDE, set-up step 6), and check WORDJUDGE_PEERS"
      else
        while IFS= read -r peer; do
          case "$peer" in
            *" proven "*) pass "the peer proves itself the hall's ($peer)" ;;
            *) fail "the peer does not prove itself the hall's ($peer)" "the same hall key on both machines ($GUIDE, set-up step 3), and the other machine's server started" ;;
          esac
        done <<< "$peers"
      fi
      warnings=$(field warning "$seen")
      if [ -z "$warnings" ]; then pass "health warns of nothing"; else
        while IFS= read -r said; do
          fail "health warns: $said" "what the warning says ($GUIDE)"
        done <<< "$warnings"
      fi
      KEY_ID=$(field key_id "$seen")
      echo "INFO  this machine's hall key id: $KEY_ID (the other machine must print the same)"
      for peer_url in $(printf '%s' "$PEERS" | tr ',' ' '); do
        other=$(field key_id "$(health "$peer_url")")
        if [ -z "$other" ]; then
          warn "the other machine's server ($peer_url) does not answer: run this there too, and compare the key ids"
        elif [ "$other" = "$KEY_ID" ] && [ "$KEY_ID" != None ]; then
          pass "the other machine's server ($peer_url) holds the same hall key ($other)"
        else
          fail "the other machine's server ($peer_url) holds another hall key ($other, here $KEY_ID)" "type this machine's key there: sudo wj standby key --show here, sudo wj standby key --enter there, then restart its server ($GUIDE, set-up step 3)"
        fi
      done
    fi
  fi
fi

# -- the clock: chrony follows the other machine with the hall's key, where the guide says ---------------------
if ! skipped clock; then
  if [ ! -r "$CHRONY_CONF" ]; then
    fail "no hall chrony file $CHRONY_CONF" "sudo install -m 0644 deploy/chrony/hall-a.conf (hall-b.conf on hall-b) $CHRONY_CONF, sudo systemctl restart chrony ($GUIDE, set-up step 5)"
  else
    server_line=$(grep -E '^[[:space:]]*server[[:space:]]' "$CHRONY_CONF" | head -n 1)
    if [ -z "$server_line" ]; then
      pass "chrony serves the hall's time from this machine ($CHRONY_CONF: no hall source)"
    else
      source=$(printf '%s' "$server_line" | awk '{print $2}')
      case " $server_line " in
        *" key "*) pass "chrony's hall source $source is authenticated with the hall's key ($CHRONY_CONF)" ;;
        *) fail "chrony follows $source without the hall's key" "deploy/chrony/hall-b.conf as $CHRONY_CONF ($GUIDE, set-up step 5)" ;;
      esac
      # chronyc sources: "^* ADDRESS" once followed; its reach (the 5th column, octal) stays 0 while no answer is
      # authenticated with the hall's key (another key on the other machine, or that machine down).
      state=$($CHRONYC -n sources 2>/dev/null | awk -v s="$source" '$2 == s {print $1, $5}')
      case "$state" in
        "^* "*) pass "chrony follows $source" ;;
        *" 0" | "") fail "chrony hears nothing from $source that its key authenticates (chronyc sources: ${state:-not listed})" "the same /etc/chrony/chrony.keys on both machines (made from their hall key: sudo wj standby key --chrony | sudo tee /etc/chrony/chrony.keys, on each), then sudo systemctl restart chrony on both (chrony restarted less than a minute ago: run this again) ($GUIDE, set-up step 5)" ;;
        *) warn "chrony hears $source but does not follow it yet (chronyc sources: $state)" "run this again in a minute ($GUIDE, set-up step 5)" ;;
      esac
      mode=$($CHRONYC -n authdata 2>/dev/null | awk -v s="$source" '$1 == s {print $2}')
      if [ "$mode" = SK ]; then pass "chronyc authdata: $source with the hall's key (SK)"; else
        fail "chronyc authdata: $source ${mode:-not listed}, not SK" "the same /etc/chrony/chrony.keys on both machines ($GUIDE, set-up step 5)"; fi
    fi
  fi
fi

# -- the failover drill: only when asked, on the standby -------------------------------------------------------
if [ "$DRILL" = yes ]; then
  echo
  if [ "$FAILED" -gt 0 ]; then
    echo "DRILL not started: $FAILED check(s) failed above; mend them first."
    exit 1
  fi
  if [ "${role:-}" != standby ]; then
    echo "DRILL not started: run it on the standby machine (this server is ${role:-not checked})."
    exit 1
  fi
  [ "$PATRONI" = yes ] && echo "DRILL: the automatic way: nothing to type; pull the active machine's cable and watch." 
  echo "DRILL: pull the active machine's network cable now (a kiosk paired, the TD's console open on it)."
  echo "       This machine will then be promoted: never run this during the event. Type yes once it is pulled:"
  read -r answer
  [ "$answer" = yes ] || { echo "DRILL: stopped, nothing done."; exit 1; }
  started=$(date +%s)
  if [ "$PATRONI" = yes ]; then
    echo "DRILL: waiting for Patroni (about 21 s)..."
  else
    as_admin standby promote --yes || { echo "DRILL: the promotion was refused (above): is the active machine cut off?"; exit 1; }
  fi
  while [ "$(field role "$(health "$PUBLIC_URL")")" != active ]; do
    [ $(($(date +%s) - started)) -gt 120 ] && { echo "DRILL: this server is not active after 2 minutes: its log says why (journalctl -u wordjudge)"; exit 1; }
    sleep 1
  done
  echo "DRILL: this server is active, $(($(date +%s) - started)) s after the cable was pulled. Now: the kiosk's"
  echo "       challenge goes through here; plug the cable back, make the old machine the standby again"
  echo "       ($GUIDE, \"When the active machine dies\", step 6; Patroni: by itself), then run this script on both."
fi

echo
echo "$FAILED failed, $WARNED warned"
[ "$FAILED" = 0 ]
