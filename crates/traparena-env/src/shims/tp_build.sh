#!/bin/sh
# TrapArena's build-and-run shim for compiled test programs:
#   sh tp_build.sh LANG SOURCE...     (LANG: cpp, java, go, rust)
# It builds the sources, with the language's check library from this folder, into a private
# folder under $TMPDIR (never the workspace, so that no build output enters a candidate patch),
# then runs the program from the workspace. The compiler never sees the report descriptor; the
# program gets it under another number (TRAPARENA_REPORT_FD), which its check library moves to
# a number of its own, and writes the report there only when the program ran to its end.
# Descriptor 3 is /dev/null in the program, so that nothing the library opens lands on it. Exit status 86: the build failed.
set -u
lang=$1
shift
here=$(dirname "$0")
report=${TRAPARENA_REPORT_FD:-3}
out=$(mktemp -d "${TMPDIR:-/tmp}/tp-build.XXXXXX") || exit 125
# A missing tool is said in the report too (`missing_program`), so that the harness records a
# run that could not build as not checkable here, never as failing tests.
need() {
  command -v "$1" >/dev/null 2>&1 || {
    echo "tp_build.sh: $1: command not found (install $2)" >&2
    printf '{"missing_program": "%s"}\n' "$1" >&"$report"
    exit 127
  }
}
case $lang in
cpp)
  need g++ g++
  g++ -std=c++17 -O0 -w -I "$here" -include "$here/tp_check.hpp" -o "$out/program" "$@" 3>&- || exit 86
  TRAPARENA_REPORT_FD=7 exec "$out/program" 7>&"$report" 3>/dev/null
  ;;
java)
  need javac "a JDK"
  need java "a JDK"
  # The JVM's default reservations (heap from the machine's memory, a 1 GiB class space) do
  # not fit the sandbox's address-space limit: both JVMs get bounded ones.
  javac -J-Xmx512m -J-XX:CompressedClassSpaceSize=64m -J-XX:ReservedCodeCacheSize=64m -J-XX:+UseSerialGC -J-XX:TieredStopAtLevel=1 \
    -nowarn -encoding UTF-8 -d "$out" "$here/TpCheck.java" "$@" 3>&- 2>"$out/javac.err"
  status=$?
  grep -v '^Note: ' "$out/javac.err" >&2
  [ $status -eq 0 ] || exit 86
  TRAPARENA_REPORT_FD=7 exec java -Xmx512m -Xss16m -XX:CompressedClassSpaceSize=64m -XX:ReservedCodeCacheSize=64m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 --add-opens java.base/java.io=ALL-UNNAMED -cp "$out" TpLaunch 7>&"$report" 3>/dev/null
  ;;
go)
  need go "golang-go and golang-github-stretchr-testify-dev"
  # The harness lends a warm build cache (read-only: Go builds what it lacks without storing
  # it); TRAPARENA_GO_WARM is where the harness's own warm-up build leaves one.
  cache="$out/cache"
  [ -d "$here/go-cache" ] && cache="$here/go-cache"
  [ -n "${TRAPARENA_GO_WARM:-}" ] && cache="$TRAPARENA_GO_WARM"
  # The library's file sorts first, so that its package variables (the report) are
  # initialised before any of the test's or the module's.
  mkdir "$out/src" && cp "$@" "$out/src/" && cp "$here/tp_check.go" "$out/src/0000_tp_check.go" || exit 125
  (cd "$out/src" && GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE="$cache" GOFLAGS= CGO_ENABLED=0 \
    go build -o "$out/program" . 3>&-) || exit 86
  TRAPARENA_REPORT_FD=7 exec "$out/program" 7>&"$report" 3>/dev/null
  ;;
rust)
  need rustc "rustc, and librust-rand-dev librust-regex-dev librust-md5-dev for the crates"
  # The sources are included, in order, into one crate root after the check library. The
  # harness lends prebuilt crates (rand, regex, md5: HumanEvalPack's Rust declarations use
  # them), built once from Debian's packaged sources.
  {
    printf 'include!("%s");\n' "$here/tp_check.rs"
    for f in "$@"; do printf 'include!("%s");\n' "$PWD/$f"; done
  } > "$out/main.rs"
  set --
  crates="$here/rust-crates/deps"
  if [ -d "$crates" ]; then
    set -- -L "dependency=$crates"
    for c in rand regex md5; do
      for lib in "$crates/lib$c-"*.rlib; do
        [ -f "$lib" ] && set -- "$@" --extern "$c=$lib"
      done
    done
  fi
  rustc --edition 2021 --cap-lints allow -C debuginfo=0 -o "$out/program" "$@" "$out/main.rs" 3>&- || exit 86
  RUST_BACKTRACE=0 TRAPARENA_REPORT_FD=7 exec "$out/program" 7>&"$report" 3>/dev/null
  ;;
rust-crates)
  # The harness's warm-up: build the crates of the Cargo project in the workspace, offline.
  need cargo "cargo"
  RUSTC=$(command -v rustc) CARGO_HOME="$out/cargo-home" CARGO_TARGET_DIR="$TRAPARENA_RUST_WARM" \
    cargo build --offline --quiet 3>&- || exit 86
  ;;
*)
  echo "tp_build.sh: unknown language $lang" >&2
  exit 125
  ;;
esac
