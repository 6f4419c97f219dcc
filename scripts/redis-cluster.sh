#!/usr/bin/env bash
# A three-node Redis Cluster on loopback for the tests (tests/support/redis-cluster.ts reuses it when it is up):
# masters on 127.0.0.1:7301-7303, no replicas, nothing persisted. Idempotent: does nothing when the cluster answers
# `cluster_state:ok`. Data and node files in ${REDIS_CLUSTER_DIR:-/tmp/holon-redis-cluster}.
set -euo pipefail
ports=(${REDIS_CLUSTER_PORTS:-7301 7302 7303})
dir="${REDIS_CLUSTER_DIR:-/tmp/holon-redis-cluster}"

state() { redis-cli -h 127.0.0.1 -p "${ports[0]}" cluster info 2>/dev/null | tr -d '\r' | grep -q '^cluster_state:ok$'; }
if state; then exit 0; fi

mkdir -p "$dir"
for p in "${ports[@]}"; do
  if ! redis-cli -h 127.0.0.1 -p "$p" ping 2>/dev/null | grep -q PONG; then
    rm -f "$dir/nodes-$p.conf"
    redis-server --port "$p" --cluster-enabled yes --cluster-config-file "nodes-$p.conf" --save '' --appendonly no \
      --daemonize yes --dir "$dir" --bind 127.0.0.1 --logfile "$dir/redis-$p.log"
  fi
done
for p in "${ports[@]}"; do
  for _ in $(seq 1 50); do redis-cli -h 127.0.0.1 -p "$p" ping 2>/dev/null | grep -q PONG && break; sleep 0.1; done
done
# Nodes already up but not in one cluster (a half-made one): start over from empty nodes.
if [ "$(redis-cli -h 127.0.0.1 -p "${ports[0]}" cluster info | tr -d '\r' | sed -n 's/^cluster_known_nodes://p')" != "${#ports[@]}" ]; then
  for p in "${ports[@]}"; do redis-cli -h 127.0.0.1 -p "$p" flushall >/dev/null; redis-cli -h 127.0.0.1 -p "$p" cluster reset hard >/dev/null; done
  redis-cli --cluster create $(printf '127.0.0.1:%s ' "${ports[@]}") --cluster-replicas 0 --cluster-yes >/dev/null
fi
for _ in $(seq 1 100); do
  if state; then exit 0; fi
  sleep 0.1
done
echo "the Redis Cluster on ${ports[*]} did not reach cluster_state:ok" >&2
exit 1
