#!/usr/bin/env bash
# Benchmark Lightning Attention-2 (Triton) against FlashAttention-2 and the naive
# linear-attention reference, forward and backward, fp16 and bf16.
#
#   bash scripts/benchmark.sh                 # single GPU (GPU 0)
#   LOCK_CLOCKS=1 bash scripts/benchmark.sh   # lock SM clocks for stable numbers (root)
#   NGPUS=4 bash scripts/benchmark.sh         # + sequence-parallel test on 4 GPUs
set -euo pipefail

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
export TRITON_CACHE_DIR=${TRITON_CACHE_DIR:-$HOME/.triton/cache}
export TRITON_PRINT_AUTOTUNING=1
export CUDA_DEVICE_MAX_CONNECTIONS=1

ROOT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT_DIR"

OUT_DIR=${OUT_DIR:-bench_results/$(date +%Y%m%d_%H%M%S)}
mkdir -p "$OUT_DIR"

# record the hardware and the software stack next to the numbers
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv > "$OUT_DIR/gpu.csv"
nvidia-smi -q -d CLOCK >> "$OUT_DIR/gpu.csv" || true
python -c "import torch, triton; print(torch.__version__, torch.version.cuda, triton.__version__)" > "$OUT_DIR/versions.txt"
git rev-parse HEAD > "$OUT_DIR/commit.txt" 2>/dev/null || echo "unknown" > "$OUT_DIR/commit.txt"

if [[ "${LOCK_CLOCKS:-0}" == "1" ]]; then
    sudo nvidia-smi -pm 1
    sudo nvidia-smi --lock-gpu-clocks=1410,1410
fi

for mode in fwd bwd; do
    for dtype in bf16 fp16; do
        echo "=== mode=${mode} dtype=${dtype} ==="
        python benchmarks/benchmark_lightning.py \
            --mode "$mode" \
            --dtype "$dtype" \
            --device cuda \
            --seqlens 1024 2048 4096 8192 16384 32768 \
            --out "$OUT_DIR/lightning_${mode}_${dtype}.csv"
    done
done

# sequence-parallel correctness test (chunks of the sequence on different GPUs)
if [[ "${NGPUS:-1}" -gt 1 ]]; then
    torchrun --standalone --nproc_per_node="${NGPUS}" tests/test_sp.py --backend nccl
fi

if [[ "${LOCK_CLOCKS:-0}" == "1" ]]; then
    sudo nvidia-smi --reset-gpu-clocks
fi

python benchmarks/plot.py --input "$OUT_DIR" --output "$OUT_DIR/plots"
echo "results written to $OUT_DIR"
