#!/bin/sh
# TrapArena's build-and-run shim for compiled test programs:
#   sh tp_build.sh LANG SOURCE...     (LANG: cpp, java, go)
# It builds the sources, with the language's check library from this folder, into a private
# folder under $TMPDIR (never the workspace, so that no build output enters a candidate patch),
# then runs the program from the workspace. The compiler never sees the report descriptor; the
# program gets it under another number (TRAPARENA_REPORT_FD), and its check library writes the
# report there only when the program ran to its end. Exit status 86: the build failed.
set -u
lang=$1
shift
here=$(dirname "$0")
report=${TRAPARENA_REPORT_FD:-3}
out=$(mktemp -d "${TMPDIR:-/tmp}/tp-build.XXXXXX") || exit 125
need() {
  command -v "$1" >/dev/null 2>&1 || { echo "tp_build.sh: $1: command not found (install $2)" >&2; exit 127; }
}
case $lang in
cpp)
  need g++ g++
  g++ -std=c++17 -O0 -w -I "$here" -include "$here/tp_check.hpp" -o "$out/program" "$@" 3>&- || exit 86
  TRAPARENA_REPORT_FD=7 exec "$out/program" 7>&"$report" 3>&-
  ;;
java)
  need javac "a JDK"
  # The JVM's default reservations (heap from the machine's memory, a 1 GiB class space) do
  # not fit the sandbox's address-space limit: both JVMs get bounded ones.
  javac -J-Xmx512m -J-XX:CompressedClassSpaceSize=64m -J-XX:ReservedCodeCacheSize=64m -J-XX:+UseSerialGC -J-XX:TieredStopAtLevel=1 \
    -nowarn -encoding UTF-8 -d "$out" "$here/TpCheck.java" "$@" 3>&- 2>"$out/javac.err"
  status=$?
  grep -v '^Note: ' "$out/javac.err" >&2
  [ $status -eq 0 ] || exit 86
  TRAPARENA_REPORT_FD=7 exec java -Xmx512m -Xss16m -XX:CompressedClassSpaceSize=64m -XX:ReservedCodeCacheSize=64m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$out" Main 7>&"$report" 3>&-
  ;;
go)
  need go "golang-go and golang-github-stretchr-testify-dev"
  # The harness lends a warm build cache (read-only: Go builds what it lacks without storing
  # it); TRAPARENA_GO_WARM is where the harness's own warm-up build leaves one.
  cache="$out/cache"
  [ -d "$here/go-cache" ] && cache="$here/go-cache"
  [ -n "${TRAPARENA_GO_WARM:-}" ] && cache="$TRAPARENA_GO_WARM"
  mkdir "$out/src" && cp "$@" "$here/tp_check.go" "$out/src/" || exit 125
  (cd "$out/src" && GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE="$cache" GOFLAGS= CGO_ENABLED=0 \
    go build -o "$out/program" . 3>&-) || exit 86
  TRAPARENA_REPORT_FD=7 exec "$out/program" 7>&"$report" 3>&-
  ;;
*)
  echo "tp_build.sh: unknown language $lang" >&2
  exit 125
  ;;
esac
