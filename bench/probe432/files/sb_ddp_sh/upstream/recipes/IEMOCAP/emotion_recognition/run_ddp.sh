#!/usr/bin/env bash
# Multi-GPU (DDP) training of the IEMOCAP wav2vec2 emotion recognition recipe.
#   bash run_ddp.sh /path/to/IEMOCAP_full_release [seed]
set -euo pipefail

DATA=${1:?usage: run_ddp.sh /path/to/IEMOCAP_full_release [seed]}
SEED=${2:-1993}

export CUDA_VISIBLE_DEVICES=0,1,2,3
export OMP_NUM_THREADS=4
NPROC=4

# 10 speaker folds, one run per held-out speaker
for spk in $(seq 1 10); do
  torchrun --standalone --nproc_per_node=$NPROC \
    train_with_wav2vec2.py hparams/train_with_wav2vec2.yaml \
    --data_folder="$DATA" \
    --seed=$SEED \
    --test_spk_id=$spk \
    --different_speakers=True \
    --output_folder=results/train_with_wav2vec2/$SEED/spk$spk \
    --distributed_backend=nccl \
    --precision=fp16 \
    --find_unused_parameters
done
