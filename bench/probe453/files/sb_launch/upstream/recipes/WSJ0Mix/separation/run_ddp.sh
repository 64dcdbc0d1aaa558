#!/usr/bin/env bash
# Multi-GPU (DDP) launcher for the SepFormer WSJ0-2mix recipe.
# Usage: bash run_ddp.sh /path/to/wsj0-mix/2speakers [ngpu]
#
# Tested on one node with 4x V100 32GB, batch_size 1 per GPU, ~3 days for 200 epochs.
set -euo pipefail

data_folder=${1:?"usage: run_ddp.sh <data_folder> [ngpu]"}
ngpu=${2:-4}
hparams=hparams/sepformer.yaml
master_port=${MASTER_PORT:-29512}

# Pick the first $ngpu GPUs unless the caller already restricted them.
if [ -z "${CUDA_VISIBLE_DEVICES:-}" ]; then
  export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((ngpu - 1)))
fi
echo "Using GPUs: ${CUDA_VISIBLE_DEVICES}"

# Silence the tokenizers / OMP warnings in the data workers.
export OMP_NUM_THREADS=4
export NCCL_DEBUG=WARN

python -m torch.distributed.launch \
  --nproc_per_node=${ngpu} \
  --master_port=${master_port} \
  train.py ${hparams} \
  --data_folder ${data_folder} \
  --distributed_launch \
  --distributed_backend='nccl' \
  --auto_mix_prec

# Evaluation runs on a single GPU (the Brain picks cuda:0 by default).
python train.py ${hparams} \
  --data_folder ${data_folder} \
  --test_only True \
  --device cuda:0
