#!/usr/bin/env bash
# Ablation runs for the permutation-language-modeling study (Table 5).
# Each run takes roughly 1.5 days on 2x A100 40GB with bf16 mixed precision.
#
# usage: GPU_IDS=0,1 ./tools/run_ablation.sh
set -euo pipefail

GPU_IDS=${GPU_IDS:-0,1}
NUM_GPUS=$(echo "${GPU_IDS}" | tr ',' '\n' | wc -l)

export CUDA_VISIBLE_DEVICES=${GPU_IDS}
export NCCL_P2P_DISABLE=0
export NCCL_ASYNC_ERROR_HANDLING=1
export OMP_NUM_THREADS=8

cd "$(dirname "$0")/.."

for K in 1 6 12; do
    ./train.py +experiment=parseq model.perm_num=${K} \
        trainer.accelerator=gpu trainer.devices=${NUM_GPUS} \
        hydra.run.dir=outputs/ablation/perm_num_${K}
done

# Mirrored vs. non-mirrored permutations with K=6
./train.py +experiment=parseq model.perm_num=6 model.perm_mirrored=false \
    trainer.accelerator=gpu trainer.devices=${NUM_GPUS} trainer.max_epochs=20 \
    hydra.run.dir=outputs/ablation/perm_num_6_nomirror

# Evaluate every final checkpoint on the benchmark (single GPU is enough)
for CKPT in outputs/ablation/*/checkpoints/last.ckpt; do
    ./test.py "${CKPT}" --device cuda --batch_size 512
done
