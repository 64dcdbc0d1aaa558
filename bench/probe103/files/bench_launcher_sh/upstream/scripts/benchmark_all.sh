#!/usr/bin/env bash
# Runs the SDXL benchmark matrix on one GPU (eager / torch.compile / stable-fast / DeepCache)
# and a 2-GPU DistriFusion patch-parallel run. Results land in results/<timestamp>/.
set -euo pipefail

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
export TORCHINDUCTOR_CACHE_DIR=${TORCHINDUCTOR_CACHE_DIR:-$HOME/.cache/inductor}
export TORCHINDUCTOR_FX_GRAPH_CACHE=1
export CUDA_LAUNCH_BLOCKING=0
export HF_HUB_ENABLE_HF_TRANSFER=1

OUT=results/$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT"

# record the box we ran on
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$OUT/gpu.csv"
python -c "import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version())" | tee "$OUT/env.txt"

CKPT=${CKPT:-stabilityai/stable-diffusion-xl-base-1.0}
STEPS=${STEPS:-30}

echo "== eager baselines"
python run_benchmark.py --ckpt "$CKPT" --num_inference_steps "$STEPS" --no_bf16 --no_sdpa --output_dir "$OUT" --tag fp32-eager
python run_benchmark.py --ckpt "$CKPT" --num_inference_steps "$STEPS" --output_dir "$OUT" --tag bf16-sdpa

echo "== torch.compile"
python run_benchmark.py --ckpt "$CKPT" --num_inference_steps "$STEPS" --compile_unet --compile_vae \
    --enable_fused_projections --output_dir "$OUT" --tag compile-default --compile_mode reduce-overhead
python run_benchmark.py --ckpt "$CKPT" --num_inference_steps "$STEPS" --compile_unet --compile_vae \
    --enable_fused_projections --change_comp_config --compile_mode max-autotune --output_dir "$OUT" --tag compile-max-autotune

echo "== stable-fast"
python examples/optimize_stable_diffusion_pipeline.py --model "$CKPT" --steps "$STEPS" --compiler sfast \
    --output-image "$OUT/sfast.png" 2>&1 | tee "$OUT/sfast.log"

echo "== DeepCache (SD1.5, N=3)"
python DeepCache/stable_diffusion.py --model runwayml/stable-diffusion-v1-5 --steps 50 --update_interval 3 \
    --uniform --output_dir "$OUT/deepcache" 2>&1 | tee "$OUT/deepcache.log"

echo "== DistriFusion, 2 GPUs patch parallel"
export NCCL_P2P_DISABLE=0
export NCCL_IB_DISABLE=1
export NCCL_DEBUG=WARN
CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node=2 --master_port=29511 scripts/sdxl_distri.py \
    --mode benchmark --parallelism patch --output_path "$OUT/distri.png" 2>&1 | tee "$OUT/distri.log"

python - <<PY
import glob
from run_benchmark import collate_csv
collate_csv(sorted(glob.glob("$OUT/*.csv")), "$OUT/summary.csv")
PY

# peak memory left behind by leaked processes, if any
nvidia-smi --query-gpu=memory.used --format=csv,noheader
echo "done -> $OUT/summary.csv"
