#!/usr/bin/env bash
# The image's entrypoint: `holon <role> [options]` (serve, api, runner, settler, evaluator), and beside the roles
# that run agents (serve, runner, evaluator) the reference MCP agent host of agents/ on 127.0.0.1:7474 (or
# HOLON_AGENT_HOST_PORT), where the gateway calls the shipped agents (gateway.md §7 "Operating": the gateway and the real MCP agents in one
# container). Only in production: in dev, `holon serve` starts that host itself. HOLON_AGENT_HOST=0 turns it off.
#
# SIGTERM / SIGINT go to the gateway only. It stops taking work and waits for the runs in flight, each of which ends
# by its hard timeout (runtime.limits.timeout_s, at most 300 s); the agent host those runs are talking to is stopped
# once the gateway has exited. If either process dies on its own, the other is stopped and the container exits
# non-zero, so the orchestrator restarts it.
set -uo pipefail
cd "$(dirname "$(readlink -f "$0")")/.."

log() { printf 'holon-entrypoint: %s\n' "$*" >&2; }

role="${1:-serve}"
agents=""
gateway=""
stop=0
trap 'stop=1; [[ -n "$gateway" ]] && kill -TERM "$gateway" 2>/dev/null' TERM INT
case "$role" in
  serve | runner | evaluator)
    case "${HOLON_AGENT_HOST:-1},${NODE_ENV:-}" in
      0,* | off,* | false,* | OFF,* | FALSE,*) ;;
      *,production)
        node agents/host.mjs --host 127.0.0.1 --port "${HOLON_AGENT_HOST_PORT:-7474}" &
        agents=$!
        ;;
    esac
    ;;
esac

node bin/holon.mjs "$@" &
gateway=$!
if [[ "$stop" == 1 ]]; then kill -TERM "$gateway" 2>/dev/null; fi

gateway_rc=""
agents_failed=0
while [[ -z "$gateway_rc" ]]; do
  unset ended
  if [[ -n "$agents" ]]; then wait -n -p ended "$gateway" "$agents"; else wait -n -p ended "$gateway"; fi
  rc=$?
  if [[ "${ended:-}" == "$gateway" ]]; then
    gateway_rc=$rc
  elif [[ -n "$agents" && "${ended:-}" == "$agents" ]]; then
    log "the agent host exited ($rc): stopping the gateway"
    agents=""
    agents_failed=1
    kill -TERM "$gateway" 2>/dev/null
  fi
  # Otherwise a signal interrupted the wait; the trap has passed it on: keep waiting for the gateway.
done

if [[ -n "$agents" ]]; then
  kill -TERM "$agents" 2>/dev/null
  wait "$agents"
fi
if [[ "$gateway_rc" == 0 && "$agents_failed" == 1 ]]; then exit 1; fi
exit "$gateway_rc"
