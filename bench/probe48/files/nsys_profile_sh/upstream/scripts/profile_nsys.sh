#!/usr/bin/env bash
# Capture an Nsight Systems timeline of a few training steps on every local GPU.
#
# The training script opens the capture window itself (torch.cuda.profiler.start/stop between
# --profile-start and --profile-end), so nsys only records those steps.
#
#   NGPUS=8 STEPS="20 30" ./scripts/profile_nsys.sh --config configs/gpt_1b.yaml
#
# Results: ${OUT}/profile_rank<N>.nsys-rep plus kernel / NVTX summaries as CSV.
set -euo pipefail

usage() {
    echo "usage: NGPUS=<n> STEPS=\"<start> <end>\" OUT=<dir> $0 [train.py args...]" >&2
    exit 2
}
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
    usage
fi

NGPUS=${NGPUS:-8}
STEPS=${STEPS:-"20 30"}
OUT=${OUT:-/results/nsys/$(date +%Y%m%d_%H%M%S)}
read -r PROFILE_START PROFILE_END <<< "${STEPS}"

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-$(seq -s, 0 $((NGPUS - 1)))}
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-8}

mkdir -p "${OUT}"
echo "profiling steps ${PROFILE_START}..${PROFILE_END} on ${NGPUS} GPUs -> ${OUT}"

# record the environment next to the traces
python -m torch.utils.collect_env > "${OUT}/collect_env.txt" 2>&1 || true
git rev-parse HEAD > "${OUT}/commit.txt" 2>/dev/null || true

nsys profile \
    --trace=cuda,nvtx,osrt,cudnn,cublas \
    --cuda-memory-usage=true \
    --capture-range=cudaProfilerApi \
    --capture-range-end=stop \
    --sample=none \
    --cpuctxsw=none \
    --force-overwrite=true \
    --output="${OUT}/profile_rank%q{RANK}" \
    torchrun --standalone --nproc_per_node="${NGPUS}" \
        train.py "$@" \
        --profile-start "${PROFILE_START}" \
        --profile-end "${PROFILE_END}" \
        --nvtx

# per-rank summaries for the report generator
for rep in "${OUT}"/profile_rank*.nsys-rep; do
    base="${rep%.nsys-rep}"
    nsys stats --force-export=true --format csv \
        --report cuda_gpu_kern_sum,nvtx_sum,cuda_gpu_mem_time_sum \
        --output "${base}" "${rep}"
done

python tools/summarize_nsys.py --input "${OUT}" --output "${OUT}/summary.md"
echo "done: ${OUT}"
