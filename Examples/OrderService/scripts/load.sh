#!/usr/bin/env bash
# Load comparison of the two backends of the order service: the same routes and reducer on a Sluice store
# (`--backend sluice`) and on a Mutex-guarded struct (`--backend mutex`), POST-only, wrk on 127.0.0.1.
#
#   bash Examples/OrderService/scripts/load.sh            # 5 pairs, -t2, -c32 and -c128, -d10s
#   PAIRS=1 DURATION=3s bash Examples/OrderService/scripts/load.sh   # a quick look
#
# For each pair and each connection count, one fresh server of each backend takes the same wrk run; the backend
# that goes first alternates from pair to pair. Prints the medians of requests/s and of p50/p99 latency, and the
# Sluice/Mutex ratios (median of the per-pair ratios). Then, for each backend, one server takes three runs back to
# back at the highest connection count: its RSS after the third against after the first. Not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."

PAIRS="${PAIRS:-5}"
DURATION="${DURATION:-10s}"
THREADS="${THREADS:-2}"
CONNECTIONS="${CONNECTIONS:-32 128}"
HOST=127.0.0.1

if ! command -v wrk > /dev/null; then
    echo "== installing wrk from Debian's packages"
    apt-get update -qq
    apt-get install -y -qq wrk > /dev/null
fi

# SKIP_BUILD=1 uses the release binary already built.
if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
    echo "== swift build -c release --product OrderService"
    swift build -c release --product OrderService
fi
binary="$(swift build -c release --show-bin-path)/OrderService"

work="$(mktemp -d)"
server_pid=""
cleanup() {
    if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2> /dev/null; then kill -TERM "$server_pid"; fi
    rm -rf "$work"
}
trap cleanup EXIT

# start_server BACKEND: starts the server on a free loopback port; sets server_pid and server_port.
start_server() {
    local log="$work/server.out"
    : > "$log"
    "$binary" --backend "$1" --host "$HOST" --port 0 > "$log" 2> "$work/server.err" &
    server_pid=$!
    local deadline=$((SECONDS + 60))
    until grep -q "listening on" "$log"; do
        if ((SECONDS > deadline)) || ! kill -0 "$server_pid" 2> /dev/null; then
            echo "error: the $1 server did not start" >&2
            cat "$work/server.err" >&2
            exit 1
        fi
        sleep 0.1
    done
    server_port="$(sed -n 's/.*listening on [^:]*:\([0-9]*\).*/\1/p' "$log")"
}

stop_server() {
    kill -TERM "$server_pid"
    wait "$server_pid" || { echo "error: the server exited with $?" >&2; exit 1; }
    server_pid=""
}

rss_kib() { awk '/VmRSS/ { print $2 }' "/proc/$server_pid/status"; }

# run_wrk CONNECTIONS: prints "requests/s p50 p99" (microseconds); fails on any error answer.
run_wrk() {
    local out
    out="$(wrk -t"$THREADS" -c"$1" -d"$DURATION" --latency -s scripts/post-order.lua "http://$HOST:$server_port/orders")"
    local result
    result="$(grep '^RESULT' <<< "$out")"
    read -r _ rps p50 p99 status_errors socket_errors <<< "$result"
    if ((status_errors > 0 || socket_errors > 0)); then
        echo "error: $status_errors non-2xx answers, $socket_errors socket errors" >&2
        echo "$out" >&2
        exit 1
    fi
    echo "$rps $p50 $p99"
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "== $PAIRS pairs, wrk -t$THREADS -d$DURATION, connections: $CONNECTIONS (machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"
for ((pair = 1; pair <= PAIRS; pair++)); do
    if ((pair % 2)); then order="sluice mutex"; else order="mutex sluice"; fi
    for c in $CONNECTIONS; do
        for backend in $order; do
            start_server "$backend"
            run_wrk "$c" > "$work/result"
            read -r rps p50 p99 < "$work/result"
            stop_server
            echo "$pair $c $backend $rps $p50 $p99" >> "$work/runs"
            printf '  pair %d  -c%-4d %-6s  %10.1f req/s  p50 %6d us  p99 %6d us\n' "$pair" "$c" "$backend" "$rps" "$p50" "$p99"
        done
    done
done

echo
echo "| connections | Sluice req/s | Mutex req/s | ratio | Sluice p50/p99 (us) | Mutex p50/p99 (us) | p99 ratio |"
echo "|---|---|---|---|---|---|---|"
for c in $CONNECTIONS; do
    field() { awk -v c="$c" -v b="$1" -v f="$2" '$2 == c && $3 == b { print $f }' "$work/runs" | median; }
    # Per-pair ratios, then their median.
    ratio() {
        awk -v c="$c" -v f="$1" '$2 == c { v[$1 " " $3] = $f; p[$1] = 1 }
            END { for (i in p) print v[i " sluice"] / v[i " mutex"] }' "$work/runs" | median
    }
    printf '| %d | %.0f | %.0f | %.3f | %.0f / %.0f | %.0f / %.0f | %.3f |\n' "$c" \
        "$(field sluice 4)" "$(field mutex 4)" "$(ratio 4)" \
        "$(field sluice 5)" "$(field sluice 6)" "$(field mutex 5)" "$(field mutex 6)" "$(ratio 6)"
done

last_c="${CONNECTIONS##* }"
echo
echo "| backend | RSS after run 1 (MiB) | RSS after run 3 (MiB) | run 3 / run 1 | orders held |"
echo "|---|---|---|---|---|"
for backend in sluice mutex; do
    start_server "$backend"
    run_wrk "$last_c" > /dev/null
    first="$(rss_kib)"
    run_wrk "$last_c" > /dev/null
    run_wrk "$last_c" > /dev/null
    third="$(rss_kib)"
    orders="$(curl -s "http://$HOST:$server_port/stats" | sed -n 's/.*"orders":\([0-9]*\).*/\1/p')"
    stop_server
    awk -v b="$backend" -v f="$first" -v t="$third" -v o="$orders" \
        'BEGIN { printf "| %s | %.1f | %.1f | %.3f | %s |\n", b, f / 1024, t / 1024, t / f, o }'
done
