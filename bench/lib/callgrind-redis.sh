# Sourced by the Redis instruction counters (count-redis-instructions.sh,
# count-redis-task-instructions.sh): a private redis-server under callgrind and the wait for the
# dumps it writes. Expects `OUT` (the folder of the callgrind files) to be set.

# Starts redis-server on a free loopback port (nothing saved) under callgrind, waits until it
# answers, and sets `port` and `pid`; the server is killed when the calling script exits.
# `REDIS_EXTRA` adds server options (say `--hash-max-listpack-value 8192`, to count a setting).
start_callgrind_redis() {
  port=$(node -e "const s = require('net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close() })")
  valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.out.%p" \
    redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no ${REDIS_EXTRA:-} >"$OUT/redis.log" 2>&1 &
  pid=$!
  trap 'kill $pid 2>/dev/null || true' EXIT
  for _ in $(seq 1 120); do
    redis-cli -p "$port" ping >/dev/null 2>&1 && break
    sleep 0.5
  done
}

# Waits for callgrind's dump number $1 of the server ($2 checks half a second apart, default
# 120) and prints the instructions it counted.
dump_instructions() {
  local file="$OUT/cg.out.$pid.$1"
  for _ in $(seq 1 "${2:-120}"); do
    [ -s "$file" ] && break
    sleep 0.5
  done
  awk '/^summary:/ { print $2; exit }' "$file"
}
