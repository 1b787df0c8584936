#!/usr/bin/env bash
# Instructions Redis spends per task on the task store's writes and on BullMQ's, counted on a
# private redis-server (its own port, nothing saved) under callgrind: each case of
# bench/lib/redis-task-costs.ts runs with CALLGRIND_PID set, so that only its measured part
# (after its warm-up, before its cleanup) is counted. Needs valgrind; a few minutes.
#
#   npx tsc -p tsconfig.bench.json && node scripts/copy-assets.mjs bench/.out/src
#   bash bench/lib/count-redis-task-instructions.sh [count] [cases]
#
# `cases` as for redis-task-costs.ts (default enqueue,bull-enqueue,e2e,bull-e2e). Prints
# `<case> <instructions per task>`; the callgrind files stay in $OUT (default a temporary
# folder) for callgrind_annotate (one dump per case: cg.out.<pid>.<n>).
set -euo pipefail
count=${1:-5000}
cases=${2:-enqueue,bull-enqueue,e2e,bull-e2e}
OUT=${OUT:-$(mktemp -d)}
driver=bench/.out/bench/lib/redis-task-costs.js
[ -f "$driver" ] || { echo "compile the bench first (see the header)" >&2; exit 2; }
# shellcheck source=bench/lib/callgrind-redis.sh
source "$(dirname "$0")/callgrind-redis.sh"
start_callgrind_redis
dump=0
for c in ${cases//,/ }; do
  CALLGRIND_PID=$pid node "$driver" "redis://127.0.0.1:$port" "$count" "$c" >"$OUT/$c.txt"
  dump=$((dump + 1))
  total=$(dump_instructions "$dump")
  echo "$c $((total / count))"
done
echo "callgrind files in $OUT" >&2
