#!/usr/bin/env bash
# Starts the local Redis topologies the cluster and sentinel tests and drills use, on loopback:
#   - a Redis Cluster of 6 nodes (3 primaries + 3 replicas) on ports 7000-7005;
#   - a Sentinel setup: primary 6380, replica 6381, sentinels 26379-26381 watching `switchyard`.
# Idempotent: starts only what is down, creates the cluster only when it does not exist yet,
# and waits until the cluster state is ok and every sentinel sees the primary. No persistence.
# Usage: scripts/redis-topologies.sh [cluster|sentinel|all]   (default: all)
set -euo pipefail

what="${1:-all}"
base="${REDIS_TOPOLOGIES_DIR:-/tmp/redis-topologies}"
host=127.0.0.1
cluster_ports=(7000 7001 7002 7003 7004 7005)
sentinel_ports=(26379 26380 26381)

up() { redis-cli -h "$host" -p "$1" ping >/dev/null 2>&1; }

wait_for() {
  # wait_for <seconds> <description> <command...>
  local seconds="$1" what="$2"
  shift 2
  for _ in $(seq 1 $((seconds * 10))); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  echo "redis-topologies: timed out waiting for $what" >&2
  return 1
}

start_node() {
  # start_node <port> [extra redis-server arguments...]
  local port="$1"
  shift
  if up "$port"; then return 0; fi
  # A cluster node keeps its nodes.conf (cluster membership, not data): a node restarted after
  # a drill killed it rejoins the cluster as a replica instead of coming back alone.
  mkdir -p "$base/$port"
  redis-server --daemonize yes --bind "$host" --port "$port" --save "" --appendonly no \
    --dir "$base/$port" --logfile "$base/$port/redis.log" --pidfile "$base/$port/redis.pid" "$@"
  wait_for 10 "redis on port $port" up "$port"
}

cluster_ok() { redis-cli -h "$host" -p 7000 cluster info | grep -q 'cluster_state:ok'; }

cluster_complete() {
  # every node knows all 6 nodes and sees the cluster ok
  for port in "${cluster_ports[@]}"; do
    redis-cli -h "$host" -p "$port" cluster info | grep -q 'cluster_state:ok' || return 1
    [ "$(redis-cli -h "$host" -p "$port" cluster nodes | grep -vc fail)" -ge 6 ] || return 1
  done
}

start_cluster() {
  local port
  for port in "${cluster_ports[@]}"; do
    start_node "$port" --cluster-enabled yes --cluster-config-file nodes.conf \
      --cluster-node-timeout 2000 --appendonly no
  done
  if ! cluster_ok; then
    local known
    known="$(redis-cli -h "$host" -p 7000 cluster info | sed -n 's/^cluster_known_nodes:\([0-9]*\).*/\1/p')"
    if [ "${known:-1}" -le 1 ]; then
      redis-cli --cluster create $(printf "$host:%s " "${cluster_ports[@]}") \
        --cluster-replicas 1 --cluster-yes >"$base/cluster-create.log"
    fi
  fi
  wait_for 30 "cluster state ok on every node" cluster_complete
  echo "redis-topologies: cluster ok on $host:7000-7005"
}

sentinel_sees_primary() {
  local port
  for port in "${sentinel_ports[@]}"; do
    redis-cli -h "$host" -p "$port" sentinel get-master-addr-by-name switchyard | grep -q . || return 1
    # the sentinels know each other (a quorum for failover)
    [ "$(redis-cli -h "$host" -p "$port" sentinel master switchyard | grep -A1 '^num-other-sentinels$' | tail -1)" -ge 2 ] || return 1
  done
}

start_sentinel() {
  # The data nodes: whichever of 6380/6381 a previous failover promoted stays primary; a node
  # started fresh becomes a replica of the current primary (or 6380 is primary on first start).
  local primary_port=6380 port found=""
  for port in "${sentinel_ports[@]}"; do
    if up "$port"; then
      local addr
      addr="$(redis-cli -h "$host" -p "$port" sentinel get-master-addr-by-name switchyard | tail -1)"
      if [ -n "$addr" ] && up "$addr"; then
        primary_port="$addr"
        found=yes
      fi
      break
    fi
  done
  # No sentinel to ask: a data node still running as a primary stays the primary.
  if [ -z "$found" ]; then
    for port in 6380 6381; do
      if up "$port" && redis-cli -h "$host" -p "$port" role | head -1 | grep -q master; then
        primary_port="$port"
        break
      fi
    done
  fi
  local replica_port=6381
  [ "$primary_port" = 6381 ] && replica_port=6380
  start_node "$primary_port"
  start_node "$replica_port" --replicaof "$host" "$primary_port"
  for port in "${sentinel_ports[@]}"; do
    if up "$port"; then continue; fi
    mkdir -p "$base/$port"
    cat >"$base/$port/sentinel.conf" <<EOF
port $port
bind $host
daemonize yes
dir $base/$port
logfile $base/$port/sentinel.log
pidfile $base/$port/sentinel.pid
sentinel monitor switchyard $host $primary_port 2
sentinel down-after-milliseconds switchyard 1000
sentinel failover-timeout switchyard 5000
sentinel parallel-syncs switchyard 1
EOF
    redis-server "$base/$port/sentinel.conf" --sentinel
    wait_for 10 "sentinel on port $port" up "$port"
  done
  wait_for 30 "sentinels to see the primary and each other" sentinel_sees_primary
  echo "redis-topologies: sentinel ok (primary $host:$primary_port, sentinels 26379-26381)"
}

mkdir -p "$base"
case "$what" in
  cluster) start_cluster ;;
  sentinel) start_sentinel ;;
  all)
    start_cluster
    start_sentinel
    ;;
  *)
    echo "usage: $0 [cluster|sentinel|all]" >&2
    exit 2
    ;;
esac
