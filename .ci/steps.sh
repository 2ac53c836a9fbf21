# Step bookkeeping for .ci/run (sourced): every step's start, seconds, whether it found its cache,
# and its result go to one table that is printed however the run ends, so a slow or failed run
# shows where its time went without a rerun.
#
#   timed NAME STATE CMD...   run CMD, recording it as step NAME (STATE: cold, cached, ...)
#   bg NAME CMD...            run CMD (usually a function of timed steps) in the background,
#                             its output in $CI_LOGS/NAME.log
#   await NAME                wait for a background job; on failure show its log's tail
#   step_table                print the table (an EXIT trap calls it)
#
# Steps are appended to $CI_LOGS/steps.tsv, so that steps inside background jobs are recorded
# too. Background jobs overlap, so a step's seconds do not add up to the run's.

CI_LOGS="${CI_LOGS:-$(mktemp -d /tmp/traparena-ci-logs.XXXXXX)}"
mkdir -p "$CI_LOGS"
: >"$CI_LOGS/steps.tsv"
declare -A CI_BG=()

timed() {
  local name="$1" state="$2" start=$SECONDS rc=0
  shift 2
  echo "ci: $name: start at ${SECONDS}s ($state)"
  "$@" || rc=$?
  local result=ok
  [ "$rc" -eq 0 ] || result="FAILED (exit $rc)"
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$start" "$((SECONDS - start))" "$state" "$result" \
    >>"$CI_LOGS/steps.tsv"
  echo "ci: $name: $result after $((SECONDS - start))s"
  return "$rc"
}

bg() {
  local name="$1"
  shift
  ("$@") >"$CI_LOGS/$name.log" 2>&1 &
  CI_BG[$name]=$!
  echo "ci: $name: started in the background (log $CI_LOGS/$name.log)"
}

await() {
  local name="$1" start=$SECONDS rc=0
  wait "${CI_BG[$name]}" || rc=$?
  printf '%s\t%s\t%s\t%s\t%s\n' "waiting for $name" "$start" "$((SECONDS - start))" "-" \
    "$([ "$rc" -eq 0 ] && echo ok || echo "FAILED (exit $rc)")" >>"$CI_LOGS/steps.tsv"
  if [ "$rc" -ne 0 ]; then
    echo "ci: $name failed (exit $rc); the end of its log ($CI_LOGS/$name.log):" >&2
    tail -n 40 "$CI_LOGS/$name.log" >&2
    return "$rc"
  fi
}

step_table() {
  echo
  echo "ci: steps (start and seconds from the beginning of the run; background steps overlap)"
  printf 'ci: %-44s %6s %7s  %-30s %s\n' step start seconds state result
  while IFS=$'\t' read -r name start secs state result; do
    printf 'ci: %-44s %6s %7s  %-30s %s\n' "$name" "$start" "$secs" "$state" "$result"
  done <"$CI_LOGS/steps.tsv"
  printf 'ci: %-44s %6s %7s\n' "whole run" 0 "$SECONDS"
}
