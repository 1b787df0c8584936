#!/usr/bin/env bash
# Instructions per request of one server of bench/rate-limit.ts, counted by callgrind (for
# machines whose `perf` cannot read the hardware counters, such as most virtual machines).
#
#   npx tsc -p tsconfig.bench.json && node scripts/copy-assets.mjs bench/.out/src
#   bash bench/lib/count-instructions.sh <variant> [counted] [warm-up]
#
# <variant> is an RL_VARIANT of bench/rate-limit-servers/server.ts (bare, hook-floor,
# headers-floor, switchyard, switchyard-429-headers, ...). The server runs under valgrind; the
# count starts after `warm-up` requests (default 20,000) and covers `counted` requests (default
# 10,000) of `GET /r25`, 10 connections, main thread only. Why so many: under valgrind V8's
# optimising compiler runs late, and with 4,000 requests of warm-up and 2,000 counted, bare
# Fastify measured 81k instructions per request where it measures 64k warmed up; compare only
# counts taken with the same two numbers. Two counts of one build differ by about ±0.5k.
# Prints `<variant> <instructions per request>`; the callgrind file and the JIT symbol map stay
# in $OUT (default a temporary folder) for callgrind_annotate.
set -euo pipefail
variant=${1:?usage: count-instructions.sh <variant> [counted] [warm-up]}
counted=${2:-10000}
warmup=${3:-20000}
OUT=${OUT:-$(mktemp -d)}
server=bench/.out/bench/rate-limit-servers/server.js
[ -f "$server" ] || { echo "compile the bench first (see the header)" >&2; exit 2; }

RL_VARIANT=$variant valgrind --tool=callgrind --fair-sched=yes --smc-check=all-non-file \
  --separate-threads=yes --callgrind-out-file="$OUT/cg.out.%p" \
  node --perf-basic-prof "$server" >"$OUT/server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do
  grep -q '^READY' "$OUT/server.log" && break
  sleep 0.5
done
port=$(awk '/^READY/ { print $2; exit }' "$OUT/server.log")
[ -n "$port" ] || { echo "the server did not start: $OUT/server.log" >&2; exit 1; }
url="http://127.0.0.1:$port/r25"
npx autocannon -a "$warmup" -c 10 "$url" >/dev/null 2>&1
callgrind_control -z "$pid" >/dev/null 2>&1
npx autocannon -a "$counted" -c 10 "$url" >/dev/null 2>&1
callgrind_control -d "$pid" >/dev/null 2>&1
# The dump of the main thread: cg.out.<pid>.1-01.
for _ in $(seq 1 60); do
  [ -s "$OUT/cg.out.$pid.1-01" ] && break
  sleep 0.5
done
cp "/tmp/perf-$pid.map" "$OUT/perf.map" 2>/dev/null || true
total=$(awk '/^summary:/ { print $2; exit }' "$OUT/cg.out.$pid.1-01")
echo "$variant $((total / counted))"
