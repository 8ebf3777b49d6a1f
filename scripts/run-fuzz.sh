#!/usr/bin/env bash
# Fuzzes kiln with its libFuzzer targets (docs/fuzzing.md), each for SECONDS seconds (default 60).
#
#   scripts/run-fuzz.sh BUILD [SECONDS] [--target NAME]... [--grow] [--keep-going]
#
#   BUILD          made by `make fuzz` (clang, -DKILN_FUZZ=ON, ASan+UBSan): BUILD/fuzz_load, BUILD/fuzz_model,
#                  BUILD/fuzz_artifact
#   SECONDS        per target, after the seeds are read
#   --target NAME  fuzz_load, fuzz_model or fuzz_artifact (repeatable; default: all, one after another)
#   --grow         merge what the run found into tests/fuzz/corpus/NAME/ (minimized with -merge=1:
#                  the kept inputs cover the edges the old corpus and the run's finds covered)
#   --keep-going   libFuzzer's fork mode: a finding is saved and the run goes on to the end (long
#                  runs); without it the first finding ends the target's run
#
# Seeds: tests/fuzz/corpus/NAME/ (read only); new inputs go to a temporary folder, or to
# FUZZ_KEEP_CORPUS/NAME/ when FUZZ_KEEP_CORPUS is set. Crashes, leaks, timeouts and out-of-memory
# inputs land in BUILD/fuzz-artifacts/NAME/; reproduce one with `BUILD/NAME FILE`, and once fixed
# copy it into tests/fuzz/regressions/ (ctest replays that folder). Each run's log is
# BUILD/fuzz-NAME.log; the last line printed per target is its coverage (cov, ft) and input count.
# FUZZ_FLAGS adds libFuzzer flags (e.g. FUZZ_FLAGS=-use_value_profile=1). FUZZ_SEED=N fixes the
# random seed and FUZZ_RUNS=N stops each target after N inputs (SECONDS still bounds it): together
# they make a run repeatable, so that CI's verdict on a commit is the one `.ci/run` gave here; a
# run without them explores anew each time (what finding bugs wants).
set -euo pipefail

usage() {
  echo "usage: $0 BUILD [SECONDS] [--target NAME]... [--grow] [--keep-going]" >&2
  exit 2
}
(($# >= 1)) || usage
build=$1
shift
seconds=60
if (($# > 0)) && [[ $1 =~ ^[0-9]+$ ]]; then
  seconds=$1
  shift
fi
targets=()
grow=0
keep_going=()
while (($# > 0)); do
  case $1 in
    --target) (($# >= 2)) || usage; targets+=("$2"); shift 2 ;;
    --grow) grow=1; shift ;;
    --keep-going) keep_going=(-fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1); shift ;;
    *) usage ;;
  esac
done
((${#targets[@]} > 0)) || targets=(fuzz_load fuzz_model fuzz_artifact)
root=$(cd "$(dirname "$0")/.." && pwd)

# One thread per process: libgomp (oneDNN's and kiln's kernels) reads this before main.
export OMP_NUM_THREADS=1
# Sanitizer reports end the run with the input saved; symbolized stacks name the line.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_stack_use_after_return=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

flags=(
  -timeout=10          # seconds for one input; fuzz_model bounds its runs well below
  -rss_limit_mb=2560   # the machine is shared; one input is bounded far below (fuzz_model.cc)
  -max_len=65536
  -dict="$root/tests/fuzz/onnx.dict"
  -print_final_stats=1
)
# shellcheck disable=SC2206
flags+=(${FUZZ_FLAGS:-})
[[ -z ${FUZZ_SEED:-} ]] || flags+=(-seed="$FUZZ_SEED")
[[ -z ${FUZZ_RUNS:-} ]] || flags+=(-runs="$FUZZ_RUNS")

status=0
for t in "${targets[@]}"; do
  fuzzer=$build/$t
  if [[ ! -x $fuzzer ]]; then
    echo "error: $fuzzer not found; build it with: make fuzz (cmake -DKILN_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++)" >&2
    exit 2
  fi
  seeds=$root/tests/fuzz/corpus/$t
  mkdir -p "$seeds"
  if [[ -n ${FUZZ_KEEP_CORPUS:-} ]]; then
    work=$FUZZ_KEEP_CORPUS/$t
    mkdir -p "$work"
  else
    work=$(mktemp -d -t "kiln-$t.XXXXXX")
  fi
  artifacts=$build/fuzz-artifacts/$t
  mkdir -p "$artifacts"
  log=$build/fuzz-$t.log
  touch "$log.start"
  echo "run-fuzz: $t for ${seconds}s${FUZZ_RUNS:+ or $FUZZ_RUNS inputs}${FUZZ_SEED:+ (seed $FUZZ_SEED)} from $(find "$seeds" -type f | wc -l) seeds; log $log"
  rc=0
  "$fuzzer" "$work" "$seeds" "${flags[@]}" "${keep_going[@]}" -max_total_time="$seconds" \
    -artifact_prefix="$artifacts/" >"$log" 2>&1 || rc=$?
  grep -E '^#[0-9]+' "$log" | tail -1 | sed "s/^/run-fuzz: $t: /" || true
  if ((rc == 0 && grow)); then
    # Minimize the union into a fresh folder, then replace the repository's corpus with it. Edges
    # only (-use_counters=0): keeping every input that reaches a new hit count of an edge doubled
    # the kept files for 0.1% more edges. (The corpus holds no finding: those go to the artifacts.)
    merged=$(mktemp -d -t "kiln-$t-merged.XXXXXX")
    "$fuzzer" -merge=1 -use_counters=0 "$merged" "$seeds" "$work" "${flags[@]}" >>"$log" 2>&1
    before=$(find "$seeds" -type f | wc -l)
    rm -rf "$seeds"
    mv "$merged" "$seeds"
    chmod 755 "$seeds"
    echo "run-fuzz: $t: corpus $before -> $(find "$seeds" -type f | wc -l) inputs ($(du -sh "$seeds" | cut -f1)) in $seeds"
  fi
  found=$(find "$artifacts" -type f -newer "$log.start" | wc -l)
  if ((rc != 0 || found > 0)); then
    echo "run-fuzz: $t found a problem (exit $rc, $found new input(s) in $artifacts/); the report in $log:" >&2
    grep -E 'ERROR|SUMMARY|==[0-9]+==|Test unit written|kInternal' "$log" | head -20 >&2 || true
    status=1
  fi
  [[ -n ${FUZZ_KEEP_CORPUS:-} ]] || rm -rf "$work"
done
exit $status
