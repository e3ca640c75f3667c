#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: records a small CUDA program and a small PyTorch training script
# under the agent and prints PASS/FAIL for what must appear (kernels, memcpy pageable and pinned,
# memset, sync, API records, with sane times); then records every sample of samples/ and its --fixed
# twin and prints what each captured (GEMM shapes, conv algorithm choice, probe values, fills per step,
# copies, Python facts, findings) with PASS/FAIL (scripts/gpu_sample_check.py). Keeps the recordings
# in OUTDIR for test fixtures.
#
#   scripts/gpu-check.sh [OUTDIR]            (default: $OUT, else ./gpu-check-out)
#
# Binaries: uses build/gpu/{bin/tuneup,lib/libtuneup-agent.so,bin/cuda_check} when present, else builds
# them here with CMake. A GPU machine that cannot build takes the GPU bundle instead
# (scripts/gpu-bundle.sh, docs/gpu-check.md).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-${OUT:-gpu-check-out}}
mkdir -p "$out"
build=${TUNEUP_GPU_BUILD:-build/gpu}
python=${PYTHON:-python3}

if [ ! -x "$build/bin/tuneup" ] || [ ! -f "$build/lib/libtuneup-agent.so" ] || [ ! -x "$build/bin/cuda_check" ]; then
  echo "== building tuneup in $build"
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DTUNEUP_BUILD_TESTS=ON -DTUNEUP_BUILD_SAMPLES=OFF \
    -DTUNEUP_BUILD_BENCH=OFF -DTUNEUP_BUILD_GUI=OFF >"$out/configure.log" 2>&1 \
    && cmake --build "$build" -j "$(nproc)" --target tuneup tuneup-agent cuda_check >"$out/build.log" 2>&1 \
    || { echo "FAIL build (see $out/configure.log, $out/build.log)"; exit 1; }
fi
tuneup=$build/bin/tuneup

echo "== machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo "nvidia-smi not available"
$python -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())' 2>&1

status=0
check() { # name, SQL returning one number, condition on it (a bash arithmetic test on $v), file
  local name=$1 sql=$2 cond=$3 db=$4 v
  v=$($python -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$db" "$sql" 2>&1)
  if [[ "$v" =~ ^-?[0-9]+$ ]] && (( $cond )); then
    printf 'PASS  %-44s %s\n' "$name" "$v"
  else
    printf 'FAIL  %-44s %s\n' "$name" "$v"
    status=1
  fi
}

echo "== CUDA program (driver API, PTX kernel)"
$tuneup record -o "$out/cuda.db" --force -- "$build/bin/cuda_check" 2>&1 | tail -n 3
db=$out/cuda.db
check "cuda: capture on" "select value = 'on' from meta where key = 'capture.cuda'" 'v == 1' "$db"
check "cuda: 10 kernels" "select count(*) from kernels" 'v == 10' "$db"
check "cuda: kernel times sane (0 < dur < 1 s)" "select count(*) from kernels where end_ns > start_ns and end_ns - start_ns < 1e9" 'v == 10' "$db"
check "cuda: pageable HtoD copy" "select count(*) from memcpys where copy_kind = 1 and src_kind = 1" 'v >= 1' "$db"
check "cuda: pinned HtoD copy" "select count(*) from memcpys where copy_kind = 1 and src_kind = 2" 'v >= 1' "$db"
check "cuda: DtoH copy" "select count(*) from memcpys where copy_kind = 2" 'v >= 1' "$db"
check "cuda: memset" "select count(*) from memsets" 'v >= 1' "$db"
check "cuda: sync records" "select count(*) from syncs" 'v >= 1' "$db"
check "cuda: driver API records" "select count(*) from api_calls where api = 2" 'v >= 10' "$db"
check "cuda: launches correlate to kernels" "select count(*) from kernels k join api_calls a using (correlation_id)" 'v == 10' "$db"
check "cuda: GPU times within the run" "select count(*) from kernels, meta m where m.key = 'start_ns' and start_ns < cast(m.value as integer)" 'v == 0' "$db"
check "cuda: device properties" "select count(*) from devices where sm_count > 0" 'v >= 1' "$db"
check "cuda: nothing dropped" "select coalesce(sum(value), 0) from stats where severity = 'data_loss'" 'v == 0' "$db"

echo "== PyTorch training script"
$tuneup record -o "$out/torch.db" --force -- $python tests/gpu/torch_train.py 20 2>&1 | tail -n 3
db=$out/torch.db
check "torch: capture on" "select value = 'on' from meta where key = 'capture.cuda'" 'v == 1' "$db"
check "torch: kernels" "select count(*) from kernels" 'v >= 100' "$db"
check "torch: runtime API records" "select count(*) from api_calls where api = 1" 'v >= 100' "$db"
check "torch: pageable HtoD copies" "select count(*) from memcpys where copy_kind = 1 and src_kind = 1" 'v >= 10' "$db"
check "torch: pinned HtoD copies" "select count(*) from memcpys where copy_kind = 1 and src_kind = 2" 'v >= 10' "$db"
check "torch: NVTX step ranges" "select count(*) from nvtx_ranges r join strings s on s.id = r.name_id where s.value = 'step'" 'v == 20' "$db"
check "torch: kernels inside the steps" "select count(*) from kernels k where exists (select 1 from nvtx_ranges r join strings s on s.id = r.name_id where s.value = 'step' and k.start_ns >= r.start_ns)" 'v >= 100' "$db"
check "torch: sync records" "select count(*) from syncs" 'v >= 1' "$db"
check "torch: nothing dropped" "select coalesce(sum(value), 0) from stats where severity = 'data_loss'" 'v == 0' "$db"
check "torch: probes read cudnn.benchmark" "select count(*) from framework_flags f join strings s on s.id = f.name_id where s.value = 'cudnn.benchmark' and f.value is not null" 'v >= 1' "$db"
check "torch: bootstrap zero_grad ranges" "select count(*) from nvtx_ranges r join strings s on s.id = r.name_id where s.value = 'Optimizer.zero_grad#SGD.zero_grad'" 'v == 20' "$db"
check "torch: bootstrap set_to_none fact (0)" "select m.payload from nvtx_marks m join strings s on s.id = m.name_id where s.value = 'tuneup.zero_grad.set_to_none'" 'v == 0' "$db"
check "torch: zero_grad fills seen as kernels" "select count(*) from kernels k join nvtx_ranges r on k.start_ns >= r.start_ns join strings s on s.id = r.name_id where s.value like 'Optimizer.zero_grad%' and k.start_ns <= r.end_ns + 1000000" 'v >= 1' "$db"

echo "== samples (each anti-pattern and its --fixed twin)"
# The C++ samples need the machine's CUDA LibTorch (torch's own CMake package); without it only the
# Python samples run.
samples_build=${TUNEUP_GPU_SAMPLES_BUILD:-build/gpu-samples}
torch_dir=$($python -c 'import torch.utils; print(torch.utils.cmake_prefix_path)' 2>/dev/null)/Torch
if [ ! -x "$samples_build/samples/amp" ]; then
  cmake -S . -B "$samples_build" -DCMAKE_BUILD_TYPE=Release -DTUNEUP_BUILD_TESTS=OFF -DTUNEUP_BUILD_BENCH=OFF \
    -DTUNEUP_BUILD_GUI=OFF -DTUNEUP_BUILD_SAMPLES=ON -DTorch_DIR="$torch_dir" >"$out/samples-configure.log" 2>&1 \
    && cmake --build "$samples_build" -j "$(nproc)" --target cudnn_autotuner zero_grad_fill unaligned_linear \
      dataloader_workers anomaly pageable_copy cpu_tensor_copy conv_bias_bn amp >"$out/samples-build.log" 2>&1 \
    || echo "NOTE  C++ samples not built (see $out/samples-configure.log, $out/samples-build.log): Python samples only"
fi
$python scripts/gpu_sample_check.py --tuneup "$tuneup" --out "$out/samples" --cpp-samples "$samples_build/samples" \
  --python "$python" || status=1

echo "== files kept in $out"
ls -l "$out"/*.db 2>/dev/null
[ $status -eq 0 ] && echo "gpu-check: ALL PASS" || echo "gpu-check: SOME CHECKS FAILED"
exit $status
