#!/usr/bin/env bash
# Instructions per enqueued task in a PostgreSQL backend: the store's write with and without its
# five list indexes, and pg-boss's insert (bench/lib/pg-enqueue-instructions.ts). Starts a
# private PostgreSQL (a fresh cluster in a temporary folder, its own port, run by the postgres
# user) under callgrind, counts, and stops it. Needs valgrind and the server binaries
# (/usr/lib/postgresql/<version>/bin); about two minutes.
#
#   npx tsc -p tsconfig.bench.json && node scripts/copy-assets.mjs bench/.out/src
#   bash bench/lib/count-pg-instructions.sh
set -euo pipefail
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
script=bench/.out/bench/lib/pg-enqueue-instructions.js
[ -f "$script" ] || { echo "compile the bench first (see the header)" >&2; exit 2; }
work=$(mktemp -d)
chown postgres "$work"
port=$(node -e "const s = require('net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close() })")
su postgres -c "$bin/initdb -D $work/data -A trust -U postgres" >"$work/initdb.log"
mkdir "$work/out" && chown postgres "$work/out"
su postgres -c "valgrind --tool=callgrind --trace-children=yes --callgrind-out-file=$work/out/cg.out.%p \
  $bin/postgres -D $work/data -p $port -k $work -c listen_addresses=127.0.0.1" >"$work/server.log" 2>&1 &
stop() { su postgres -c "$bin/pg_ctl -D $work/data stop -m immediate" >/dev/null 2>&1 || true; }
trap stop EXIT
for _ in $(seq 1 240); do
  psql -h 127.0.0.1 -p "$port" -U postgres -c 'select 1' postgres >/dev/null 2>&1 && break
  sleep 0.5
done
psql -h 127.0.0.1 -p "$port" -U postgres -c 'create database test' postgres >/dev/null
node "$script" "$port" "$work/out"
echo "callgrind files: $work/out"
