#!/usr/bin/env bash
# The PostgreSQL journal's CI step: installs postgresql-15 when missing, starts on 127.0.0.1 a primary and a
# synchronous standby (pg_basebackup), runs the package's tests against them, and stops every server at the end,
# also on failure. PostgreSQL refuses to run as root: its binaries run as the `postgres` user.
#
#   bash Integrations/SluicePostgres/scripts/ci.sh            # build + tests (each database failover on new servers)
#   bash Integrations/SluicePostgres/scripts/ci.sh --bench    # the benchmark instead (release build)
#   bash Integrations/SluicePostgres/scripts/ci.sh --serve F  # start the servers, write SLUICE_PG_* to F, wait
set -euo pipefail
cd "$(dirname "$0")/.."

PG_BIN="${PG_BIN:-/usr/lib/postgresql/15/bin}"
if [ ! -x "$PG_BIN/pg_ctl" ]; then
    echo "== installing postgresql-15"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-15 >/dev/null
fi

if [ "$(id -u)" = "0" ]; then
    as_pg() { runuser -u postgres -- "$@"; }
else
    as_pg() { "$@"; }
fi

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

work=""
primary=""
standby=""

stop_servers() {
    if [ -z "$work" ]; then return; fi
    for dir in "$primary" "$standby"; do
        if [ -f "$dir/postmaster.pid" ]; then
            as_pg "$PG_BIN/pg_ctl" -D "$dir" -m immediate -w stop >/dev/null 2>&1 || true
        fi
    done
    rm -rf "$work"
    work=""
}
trap stop_servers EXIT INT TERM

# Starts a new primary and a new synchronous standby and exports the SLUICE_PG_* variables that the tests read.
start_servers() {
    work="$(mktemp -d /tmp/sluice-pg.XXXXXX)"
    chmod 755 "$work"
    if [ "$(id -u)" = "0" ]; then chown postgres "$work"; fi
    primary="$work/primary"
    standby="$work/standby"
    local primary_port standby_port state
    primary_port="$(free_port)"
    standby_port="$(free_port)"
    while [ "$standby_port" = "$primary_port" ]; do standby_port="$(free_port)"; done

    echo "== starting a primary on 127.0.0.1:$primary_port and a synchronous standby on 127.0.0.1:$standby_port"
    as_pg "$PG_BIN/initdb" -D "$primary" -U postgres -A trust --no-sync >/dev/null
    cat >>"$primary/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $primary_port
unix_socket_directories = '$work'
wal_level = replica
max_wal_senders = 4
synchronous_standby_names = 'standby1'
synchronous_commit = on
max_connections = 200
shared_buffers = 64MB
CONF
    as_pg "$PG_BIN/pg_ctl" -D "$primary" -l "$work/primary.log" -w start >/dev/null
    as_pg "$PG_BIN/pg_basebackup" -h 127.0.0.1 -p "$primary_port" -U postgres -D "$standby" -R -X stream --no-sync
    cat >>"$standby/postgresql.auto.conf" <<CONF
port = $standby_port
primary_conninfo = 'host=127.0.0.1 port=$primary_port user=postgres application_name=standby1'
synchronous_standby_names = ''
CONF
    as_pg "$PG_BIN/pg_ctl" -D "$standby" -l "$work/standby.log" -w start >/dev/null
    # Wait until the standby streams synchronously, so that a commit on the primary is on the standby when it
    # returns.
    state=""
    for _ in $(seq 1 100); do
        state="$(as_pg "$PG_BIN/psql" -h 127.0.0.1 -p "$primary_port" -U postgres -Atc \
            "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby1'" || true)"
        [ "$state" = "sync" ] && break
        sleep 0.1
    done
    echo "   standby replication state: ${state:-none}"
    [ "$state" = "sync" ] || { cat "$work/standby.log"; exit 1; }

    export SLUICE_PG_PRIMARY="127.0.0.1:$primary_port"
    export SLUICE_PG_STANDBY="127.0.0.1:$standby_port"
    export SLUICE_PG_PRIMARY_DIR="$primary"
    export SLUICE_PG_STANDBY_DIR="$standby"
    export SLUICE_PG_BIN="$PG_BIN"
}

if [ "${1:-}" = "--serve" ]; then
    # For development: writes the SLUICE_PG_* variables to $2 and keeps the servers until this script is stopped.
    start_servers
    env | grep '^SLUICE_PG_' | sed 's/^/export /' >"${2:-/tmp/sluice-pg.env}"
    echo "servers up; variables in ${2:-/tmp/sluice-pg.env}"
    sleep infinity &
    wait $!
    exit 0
fi

if [ "${1:-}" = "--bench" ]; then
    start_servers
    echo "== benchmark (release build): acknowledgements, follower lag, takeover"
    swift build -c release --product SluicePostgresBench
    "$(swift build -c release --show-bin-path)/SluicePostgresBench"
    exit 0
fi

echo "== swift format lint --strict (SluicePostgres)"
swift format lint --strict --recursive Sources Tests Package.swift

# `.ci/run` sets SLUICE_SERVER_SCRATCH so that this package and Examples/OrderService share one build of the server
# packages they both use.
scratch=()
if [ -n "${SLUICE_SERVER_SCRATCH:-}" ]; then scratch=(--scratch-path "$SLUICE_SERVER_SCRATCH"); fi
echo "== swift build (SluicePostgres)"
swift build "${scratch[@]}" --build-tests

start_servers
echo "== swift test (SluicePostgres): every suite that keeps both servers running"
timeout 600 swift test "${scratch[@]}" --skip-build --skip DatabaseFailoverTests --skip StandbyOutageTests
# Alone: it stops the standby (every commit then waits), and starts it again.
echo "== swift test (SluicePostgres): a commit whose wait for the standby is cancelled or terminated"
SLUICE_PG_OUTAGE=1 timeout 240 swift test "${scratch[@]}" --skip-build --filter StandbyOutageTests
stop_servers

# Each failover test stops the primary and promotes the standby: each gets new servers. Set
# SLUICE_PG_FAILOVER_RUNS to run them more than once.
for run in $(seq 1 "${SLUICE_PG_FAILOVER_RUNS:-1}"); do
    for test in writerContinuesOnPromotedStandby commitThatOnlyThePrimaryHeldIsNotAcknowledged \
        idleWriterSnapshotsAndKeepsItsLeaseOnPromotedStandby; do
        start_servers
        echo "== swift test (SluicePostgres): the database failover, $test (run $run)"
        SLUICE_PG_FAILOVER=1 timeout 240 swift test "${scratch[@]}" --skip-build --filter "DatabaseFailoverTests/$test"
        stop_servers
    done
done
