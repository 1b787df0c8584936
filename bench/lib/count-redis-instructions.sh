#!/usr/bin/env bash
# Instructions per request that Redis spends on the rate-limit counters' script: a private
# redis-server (its own port, nothing saved) runs under callgrind, and
# bench/lib/redis-counter-batches.ts sends it batches of 18 requests with two fixed-window
# limits each (1,000 batches to warm up, then `batches`, default 2,000, counted). Needs
# valgrind; about a minute.
#
#   npx tsc -p tsconfig.bench.json && node scripts/copy-assets.mjs bench/.out/src
#   bash bench/lib/count-redis-instructions.sh [batches] [build]
#
# `build` is another compiled tree (for example an earlier commit's bench/.out) whose counters
# to count with this driver. Prints `<instructions per request>`; the callgrind file stays in
# $OUT (default a temporary folder) for callgrind_annotate.
set -euo pipefail
batches=${1:-2000}
build=${2:-}
OUT=${OUT:-$(mktemp -d)}
driver=bench/.out/bench/lib/redis-counter-batches.js
[ -f "$driver" ] || { echo "compile the bench first (see the header)" >&2; exit 2; }
# shellcheck source=bench/lib/callgrind-redis.sh
source "$(dirname "$0")/callgrind-redis.sh"
start_callgrind_redis
node "$driver" "$port" 1000 $build >/dev/null
callgrind_control -z "$pid" >/dev/null 2>&1
requests=$(node "$driver" "$port" "$batches" $build)
callgrind_control -d "$pid" >/dev/null 2>&1
# The dump taken by callgrind_control -d: cg.out.<pid>.1.
total=$(dump_instructions 1 60)
echo "$((total / requests))"
