#!/usr/bin/env bash
# Train GFPGAN v1 on FFHQ with 4 GPUs (BasicSR launcher).
#   bash scripts/train_gfpgan.sh options/train_gfpgan_v1.yml
# The original StyleGAN2 ops (fused_act / upfirdn2d) are compiled at install time:
#   BASICSR_EXT=True pip install basicsr

set -euo pipefail

CONFIG=${1:-options/train_gfpgan_v1.yml}
NUM_GPUS=${NUM_GPUS:-4}
PORT=${PORT:-22021}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
export BASICSR_JIT=True
export TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6"
export NCCL_P2P_DISABLE=${NCCL_P2P_DISABLE:-0}
export NCCL_IB_DISABLE=1
export OMP_NUM_THREADS=4

if ! python -c "import torch,sys; sys.exit(0 if torch.cuda.device_count() >= ${NUM_GPUS} else 1)"; then
    echo "need ${NUM_GPUS} visible GPUs (CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES})" >&2
    exit 1
fi

nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

mkdir -p experiments/pretrained_models
for f in StyleGAN2_512_Cmul1_FFHQ_B12G4_scratch_800k.pth FFHQ_eye_mouth_landmarks_512.pth arcface_resnet18.pth; do
    if [ ! -f "experiments/pretrained_models/${f}" ]; then
        wget -q -P experiments/pretrained_models "https://github.com/TencentARC/GFPGAN/releases/download/v0.1.0/${f}"
    fi
done

python -m torch.distributed.launch \
    --nproc_per_node=${NUM_GPUS} \
    --master_port=${PORT} \
    gfpgan/train.py \
    -opt "${CONFIG}" \
    --launcher pytorch \
    --auto_resume
