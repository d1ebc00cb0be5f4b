#!/usr/bin/env bash
# Fuzz each target for a while (default 60s each): scripts/fuzz.sh [DURATION] [TARGET...]
#
#   scripts/fuzz.sh               every target, 60s each
#   scripts/fuzz.sh 10s FuzzRun   one target, 10s
#   FUZZ_PARALLEL=1 scripts/fuzz.sh 20s   one fuzzing worker (default: one per CPU)
#   FUZZ_MINIMIZE=60s scripts/fuzz.sh     time to minimize each new input (default 5s: the
#                                         loader's refusals re-parse a broken file, so a long
#                                         minimization would eat a short run)
#
# go test runs every target on its seed corpus (testdata/fuzz/<Target>/) as an ordinary test;
# this script searches beyond it. A crasher is written by go test to
# <package>/testdata/fuzz/<Target>/<hash>: fix the bug, keep the file (it is then a regression
# test that go test runs), and give it a name that says what it is.
set -euo pipefail
cd "$(dirname "$0")/.."

duration=${1:-60s}
shift || true

targets=(
  "./scenarios FuzzLoad"        # scenarios.Load: YAML text → a scenario or a located refusal
  "./scenarios FuzzRun"         # text → load → validate → a short run of every lane
  "./trace FuzzReader"          # trace.NewReader / Next on arbitrary bytes
  "./limiters FuzzParseSpec"    # limiters.ParseSpec → Validate → New on a virtual clock
  "./sweep FuzzMergeCSV"        # sweep merge of two arbitrary shards: a row or a refusal naming the shard
  "./lessons FuzzLoad"          # lessons.LoadWithin: YAML text → a lesson that runs, or a located refusal
)

parallel=()
if [ -n "${FUZZ_PARALLEL:-}" ]; then
  parallel=(-parallel "$FUZZ_PARALLEL")
fi

status=0
for entry in "${targets[@]}"; do
  read -r pkg name <<<"$entry"
  if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$name"; then
    continue
  fi
  echo "== $name ($pkg) for $duration"
  if ! go test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "$duration" \
    -fuzzminimizetime "${FUZZ_MINIMIZE:-5s}" "${parallel[@]}"; then
    echo "!! $name failed: see the crasher above (written under $pkg/testdata/fuzz/$name/)"
    status=1
  fi
done
exit $status
