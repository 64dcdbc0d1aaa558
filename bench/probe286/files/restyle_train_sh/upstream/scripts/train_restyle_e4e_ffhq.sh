#!/bin/bash
# Train ReStyle-e4e on FFHQ (1024x1024 StyleGAN2 decoder).
# Tested on a single 32GB V100 and on a 40GB A100; batch 8 needs ~27GB.
#
# Usage: bash scripts/train_restyle_e4e_ffhq.sh [exp_name] [gpu_id]
set -e

EXP_NAME=${1:-restyle_e4e_ffhq}
GPU_ID=${2:-0}

export CUDA_VISIBLE_DEVICES=${GPU_ID}
export PYTHONPATH=$(pwd):$PYTHONPATH

# models/stylegan2/op is JIT-compiled on first import; keep the build cache on local disk
# so that several jobs on the same node do not race on ~/.cache/torch_extensions
export TORCH_EXTENSIONS_DIR=/tmp/torch_extensions_${USER}

nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv

mkdir -p experiments/${EXP_NAME}

python scripts/train_restyle_e4e.py \
  --dataset_type=ffhq_encode \
  --encoder_type=ProgressiveBackboneEncoder \
  --exp_dir=experiments/${EXP_NAME} \
  --workers=8 \
  --batch_size=8 \
  --test_batch_size=8 \
  --test_workers=8 \
  --val_interval=5000 \
  --save_interval=10000 \
  --start_from_latent_avg \
  --lpips_lambda=0.8 \
  --l2_lambda=1 \
  --id_lambda=0.1 \
  --w_discriminator_lambda=0.1 \
  --use_w_pool \
  --w_pool_size=50 \
  --input_nc=6 \
  --n_iters_per_batch=5 \
  --output_size=1024 \
  --stylegan_weights=pretrained_models/stylegan2-ffhq-config-f.pt \
  2>&1 | tee experiments/${EXP_NAME}/train.log
