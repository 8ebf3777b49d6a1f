#!/usr/bin/env bash
# kiln against ONNX Runtime on the benchmark models, back to back, on the same inputs and threads:
#
#   bench/run.sh [--threads N] [--models "a b ..."] [--iterations N] [--warmup N] [--rounds N]
#                [--kiln PATH] [--work DIR] [--models-dir DIR] [--ops]
#                [--stream MODEL:NAME=LO..HI | --stream none] [--stream-runs N] [--stream-chunk N]
#
# For each model: the ONNX file (a name tools/models/export.py knows, exported once into the
# models folder by scripts/get-models.sh, or a path to any .onnx file), one set of seeded inputs
# (tools/models/make_inputs.py: batch 1, seq 128), then `kiln bench --json` and ONNX Runtime's
# `tools/ort/bench.js --json` on those inputs with the same thread count (--rounds N alternates
# them N times and keeps each side's best p50), then `kiln run` and `tools/ort/run.js` once each,
# compared at rtol 1e-3, atol 1e-4 times the output's largest magnitude where above 1
# (bench/compare_outputs.py). Prints the table (bench/report.py)
# and writes it to WORK/results.md: p50s, session creation, and each side's peak RSS, less what
# its process costs on a one-Identity model (measured first). A time measured alone is noise on a
# shared machine: the ratio of two runs back to back is the figure.
#
# A model written NAME@int8 or NAME@int8-dynamic is NAME quantized by kiln first (`kiln quantize
# --mode static`, per-channel weights, calibrated on 16 seeded random sets; or `--mode dynamic`),
# NAME@bf16 or NAME@fp16 converted (`kiln quantize --mode bf16`: bf16 weights read through a Cast,
# which kiln computes in bf16 where the CPU has it and ONNX Runtime in float32; `--mode fp16`: fp16
# weights and activations, which both compute in float32 between Casts),
# into WORK/quantized/: kiln and ONNX Runtime then run that same file, its outputs agree at a
# cosine similarity of 0.99 (the two runtimes may round a requantization differently), each
# side's cosine with the float model's outputs is noted, and the table says how its p50 compares
# with kiln's fp32 one when NAME is in the same run.
#
# Defaults: --threads = the number of cores, the five models of issue 5 and the two quantized ones
# of issue 15 (resnet50@int8, bert_base@int8-dynamic), 50 iterations after 5 warmup runs, 1 round,
# build/kiln, WORK = build/bench, models in build/models (where tests/models/run_vs_ort.sh exports
# them too). Exit 0 when every model ran on both sides and the outputs agree; 1 otherwise; 2 on a
# bad flag or a missing kiln binary. --ops then adds the op table (bench/ops.py on the same
# models, kiln and threads: each kind of node alone, kernel time against ONNX Runtime's) to
# WORK/results.md; it does not change the exit status.
#
# The stream row (issue 19): MODEL (a name or a path, as above) served with its symbolic dim NAME
# drawn anew for every run from LO..HI, `kiln bench --vary` and `tools/ort/bench.js --vary` on the
# same draws (seeded splitmix64) and threads, in chunks of --stream-chunk runs (default 10, a seed
# each; the two sides take turns per chunk, so the machine's other load falls on both alike) up to
# --stream-runs (default 200); the table gives p50, p99 and max over all runs, the median of the
# per-draw ratios, and the plans kiln made and reused. Default: bert_base:seq=1..512 when
# bert_base is in the model list, else none.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

threads=$(nproc)
models="resnet50 mobilenet_v2 efficientnet_b0 bert_base mlp resnet50@int8 bert_base@int8-dynamic"
iterations=50
warmup=5
rounds=1
kiln=$root/build/kiln
work=$root/build/bench
models_dir=$root/build/models
ops=0
stream=default
stream_runs=200
stream_chunk=10

usage() {
  sed -n '2,37p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
}
while (($#)); do
  case $1 in
    --threads) threads=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --iterations) iterations=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --kiln) kiln=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --models-dir) models_dir=$2; shift 2 ;;
    --ops) ops=1; shift ;;
    --stream) stream=$2; shift 2 ;;
    --stream-runs) stream_runs=$2; shift 2 ;;
    --stream-chunk) stream_chunk=$2; shift 2 ;;
    -h | --help) usage ;;
    *) echo "bench/run.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
for n in "$threads" "$iterations" "$warmup" "$rounds" "$stream_runs" "$stream_chunk"; do
  [[ $n =~ ^[0-9]+$ ]] || { echo "bench/run.sh: '$n' is not a number" >&2; exit 2; }
done
if [[ ! -x $kiln ]]; then
  echo "bench/run.sh: no kiln binary at $kiln (make build, or --kiln PATH)" >&2
  exit 2
fi
kiln=$(cd "$(dirname "$kiln")" && pwd)/$(basename "$kiln")
if [[ $stream == default ]]; then
  stream=none
  [[ " $models " == *" bert_base "* ]] && stream=bert_base:seq=1..512
fi
if [[ $stream != none && ! $stream =~ ^[^:]+:[^=]+=[0-9]+\.\.[0-9]+$ ]]; then
  echo "bench/run.sh: --stream '$stream': expected MODEL:NAME=LO..HI or none" >&2
  exit 2
fi
((stream_chunk > 0)) || { echo "bench/run.sh: --stream-chunk must be at least 1" >&2; exit 2; }
py=/usr/bin/python3

"$root/tools/ort/install.sh" || { echo "bench/run.sh: ONNX Runtime is not available" >&2; exit 1; }

mkdir -p "$models_dir" "$work/results"
# Names tools/models/export.py knows are exported (once); paths are used as they are.
declare -A model_path
to_export=()
for m in $models; do
  if [[ $m == *@* ]]; then
    base=${m%@*}
    model_path[$m]=$work/quantized/$m.onnx
    to_export+=("$base")
  elif [[ $m == *.onnx ]]; then
    [[ -f $m ]] || { echo "bench/run.sh: no model file '$m'" >&2; exit 2; }
    model_path[$m]=$(cd "$(dirname "$m")" && pwd)/$(basename "$m")
  else
    model_path[$m]=$models_dir/$m.onnx
    to_export+=("$m")
  fi
done
((${#to_export[@]} == 0)) || "$root/scripts/get-models.sh" "$models_dir" "${to_export[@]}"
# The quantized ones, made by kiln from the float models (each once per run).
mkdir -p "$work/quantized"
for m in $models; do
  [[ $m == *@* ]] || continue
  base=${m%@*}
  # batch 1 and seq 128, for the symbolic dims the model has (kiln refuses a --dim it lacks)
  dims=()
  for d in $("$py" -c 'import onnx, sys
m = onnx.load(sys.argv[1], load_external_data=False)
print(" ".join({d.dim_param for i in m.graph.input for d in i.type.tensor_type.shape.dim}))' \
    "$models_dir/$base.onnx"); do
    case $d in batch) dims+=(--dim batch=1) ;; seq) dims+=(--dim seq=128) ;; esac
  done
  case ${m#*@} in
    int8) how=(--mode static --per-channel --calibrate-random 16 "${dims[@]}") ;;
    int8-dynamic) how=(--mode dynamic "${dims[@]}") ;;
    bf16 | fp16) how=(--mode "${m#*@}") ;;
    *) echo "bench/run.sh: unknown precision in '$m' (int8, int8-dynamic, bf16 or fp16)" >&2; exit 2 ;;
  esac
  echo "== quantizing $base (${m#*@})" >&2
  "$kiln" quantize "$models_dir/$base.onnx" -o "${model_path[$m]}" "${how[@]}" --latency-runs 0 \
    --no-progress --report "$work/quantized/$m.json" >"$work/quantized/$m.log" 2>&1 ||
    { echo "bench/run.sh: kiln quantize failed on $base:" >&2; tail -3 "$work/quantized/$m.log" >&2; }
done

# What each runtime's process costs before any model: kiln and node with onnxruntime-node on a
# one-Identity model (peak RSS; report.py subtracts each from its side's figures).
baseline=$work/results/_baseline
rm -rf "$baseline"
mkdir -p "$baseline/inputs"
"$py" -c 'import onnx, sys
from onnx import TensorProto, helper
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])
g = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "empty", [x], [y])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1])' \
  "$baseline/model.onnx"
"$py" "$root/tools/models/make_inputs.py" "$baseline/model.onnx" "$baseline/inputs" >/dev/null 2>&1
"$kiln" bench "$baseline/model.onnx" --inputs "$baseline/inputs" --threads "$threads" --iterations 1 \
  --warmup 0 --json >"$baseline/kiln_0.json" 2>"$baseline/kiln_0.err" || true
node "$root/tools/ort/bench.js" "$baseline/model.onnx" --inputs "$baseline/inputs" --threads "$threads" \
  --iterations 1 --warmup 0 --json >"$baseline/ort_0.json" 2>"$baseline/ort_0.err" || true

# Each side's JSON line goes to NAME/<side>_<round>.json, its stderr beside it; bench/report.py
# reads them all (the best p50 of the rounds, or the error a side ended with).
for m in $models; do
  name=$(basename "$m" .onnx)
  model=${model_path[$m]}
  tolerance=()
  [[ $m == *@* ]] && tolerance=(--cosine 0.99)
  res=$work/results/$name
  inputs=$res/inputs
  rm -rf "$res"
  mkdir -p "$inputs"
  echo "== $name" >&2
  # (--dim seq is for the sequence models; the others warn that it matched nothing.)
  "$py" "$root/tools/models/make_inputs.py" "$model" "$inputs" --dim batch=1 --dim seq=128 \
    >/dev/null 2>"$res/inputs.err" || cat "$res/inputs.err" >&2
  for ((r = 0; r < rounds; r++)); do
    "$kiln" bench "$model" --inputs "$inputs" --threads "$threads" --iterations "$iterations" \
      --warmup "$warmup" --json >"$res/kiln_$r.json" 2>"$res/kiln_$r.err" ||
      echo "kiln bench exited with status $?" >>"$res/kiln_$r.err"
    node "$root/tools/ort/bench.js" "$model" --inputs "$inputs" --threads "$threads" \
      --iterations "$iterations" --warmup "$warmup" --json >"$res/ort_$r.json" 2>"$res/ort_$r.err" ||
      echo "bench.js exited with status $?" >>"$res/ort_$r.err"
  done
  # Outputs: kiln's fast engine against ONNX Runtime, on the same inputs.
  "$kiln" run "$model" --inputs "$inputs" --outputs "$res/kiln_out" --threads "$threads" \
    >/dev/null 2>"$res/kiln_run.err" || echo "kiln run exited with status $?" >>"$res/kiln_run.err"
  node "$root/tools/ort/run.js" "$model" --inputs "$inputs" --outputs "$res/ort_out" \
    --threads "$threads" 2>"$res/ort_run.err" || echo "run.js exited with status $?" >>"$res/ort_run.err"
  "$py" "$root/bench/compare_outputs.py" "$res/kiln_out" "$res/ort_out" "${tolerance[@]}" >"$res/compare.json" \
    2>"$res/compare.err" || true
  # A quantized file: each side's outputs against the float model's (ONNX Runtime's run of it),
  # which says whose rounding moved when the two disagree (a CPU without VNNI: ORT saturates).
  if [[ $m == *@* ]]; then
    node "$root/tools/ort/run.js" "$models_dir/${m%@*}.onnx" --inputs "$inputs" --outputs "$res/float_out" \
      --threads "$threads" 2>"$res/float_run.err" || echo "run.js exited with status $?" >>"$res/float_run.err"
    for side in kiln ort; do
      "$py" "$root/bench/compare_outputs.py" "$res/${side}_out" "$res/float_out" --cosine 0 \
        >"$res/float_vs_$side.json" 2>>"$res/compare.err" || true
    done
  fi
done

# The stream: the same draws on both sides, a chunk (one seed) at a time, taking turns.
stream_flags=()
if [[ $stream != none ]]; then
  stream_flags=(--stream "$stream")
  sm=${stream%%:*}
  vary=${stream#*:}
  if [[ $sm == *.onnx ]]; then
    smodel=$sm
  else
    smodel=$models_dir/$sm.onnx
    [[ -f $smodel ]] || "$root/scripts/get-models.sh" "$models_dir" "$sm"
  fi
  res=$work/results/stream
  rm -rf "$res"
  mkdir -p "$res"
  echo "== stream $stream ($stream_runs runs)" >&2
  for ((c = 0, left = stream_runs; left > 0; c++, left -= stream_chunk)); do
    n=$((left < stream_chunk ? left : stream_chunk))
    "$kiln" bench "$smodel" --vary "$vary" --seed "$c" --iterations "$n" --warmup "$warmup" \
      --threads "$threads" --json >"$res/kiln_$c.json" 2>"$res/kiln_$c.err" ||
      echo "kiln bench exited with status $?" >>"$res/kiln_$c.err"
    node "$root/tools/ort/bench.js" "$smodel" --vary "$vary" --seed "$c" --iterations "$n" \
      --warmup "$warmup" --threads "$threads" --json >"$res/ort_$c.json" 2>"$res/ort_$c.err" ||
      echo "bench.js exited with status $?" >>"$res/ort_$c.err"
  done
fi

names=()
for m in $models; do names+=("$(basename "$m" .onnx)"); done
set +e
"$py" "$root/bench/report.py" "$work/results" --threads "$threads" --baseline "$baseline" "${stream_flags[@]}" \
  "${names[@]}" >"$work/results.md"
status=$?
if ((ops)); then
  # The float models only (a quantized NAME@... has no file of that name before the run).
  float_models=()
  for m in $models; do [[ $m == *@* ]] || float_models+=("$m"); done
  { echo; "$py" "$root/bench/ops.py" --kiln "$kiln" --models "${float_models[*]}" --models-dir "$models_dir" \
      --work "$work/ops" --threads "$threads" --iterations "$iterations" --warmup "$warmup" 2>"$work/ops.err" ||
      echo "bench/ops.py failed: $(tail -1 "$work/ops.err")"; } >>"$work/results.md"
fi
cat "$work/results.md"
exit $status
