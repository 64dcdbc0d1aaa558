#!/bin/bash
# Sweep of the contrastive frameworks on the random split of UCI-HAR / SHAR / HHAR.
# Usage: bash scripts/run_ssl.sh [framework] [backbone]

FRAMEWORK=${1:-simclr}
BACKBONE=${2:-DCL}

# pick the GPU with the least memory in use
GPU=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | nl -v 0 | sort -nk2 | head -1 | awk '{print $1}')
echo "Running ${FRAMEWORK}/${BACKBONE} on GPU ${GPU}"

for dataset in ucihar shar hhar; do
    for seed in 10 20 30; do
        python main.py \
            --framework ${FRAMEWORK} \
            --backbone ${BACKBONE} \
            --dataset ${dataset} \
            --cases random \
            --criterion NTXent \
            --aug1 t_warp --aug2 negate \
            --n_epoch 120 \
            --batch_size 128 \
            --lr 3e-3 --lr_cls 3e-4 \
            --seed ${seed} \
            --cuda ${GPU} \
            --logdir log/${FRAMEWORK}_${BACKBONE}_${dataset}/
    done
done
