#!/usr/bin/env bash
# Train LERF on a nerfstudio-format capture and dump relevancy maps for a few queries.
#
#   GPU=1 bash scripts/train_lerf.sh data/nerfstudio/figurines "rubber duck;waldo;jake"
#
# Needs ~22GB of GPU memory with the default lerf config (lerf-lite fits in 12GB).
set -e

DATA=${1:-data/nerfstudio/figurines}
QUERIES=${2:-"rubber duck"}
METHOD=${METHOD:-lerf}
GPU=${GPU:-0}
OUT=outputs/$(basename ${DATA})

export CUDA_VISIBLE_DEVICES=${GPU}
# tiny-cuda-nn compiles its kernels for this SM only (RTX 3090 / A6000)
export TCNN_CUDA_ARCHITECTURES=86

python -c "import tinycudann" 2>/dev/null || \
    pip install ninja git+https://github.com/NVlabs/tiny-cuda-nn/#subdirectory=bindings/torch

ns-train ${METHOD} --data ${DATA} \
    --output-dir outputs \
    --machine.num-devices 1 \
    --machine.device-type cuda \
    --pipeline.model.implementation tcnn \
    --max-num-iterations 30000 \
    --mixed-precision True \
    --vis viewer+wandb \
    --viewer.quit-on-train-completion True

CONFIG=$(ls -td ${OUT}/${METHOD}/*/ | head -1)config.yml
echo "trained ${METHOD}: ${CONFIG}"

python scripts/render_relevancy.py \
    --load-config ${CONFIG} \
    --queries "${QUERIES}" \
    --device cuda:0 \
    --downscale 2 \
    --output-path ${OUT}/relevancy
