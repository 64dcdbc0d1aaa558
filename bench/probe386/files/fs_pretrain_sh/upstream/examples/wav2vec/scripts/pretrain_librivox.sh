#!/usr/bin/env bash
# Pre-train wav2vec 2.0 LARGE on LibriVox (LV-60k) on a single 8-GPU node,
# simulating the paper's 128 GPUs with update_freq.
#
#   bash examples/wav2vec/scripts/pretrain_librivox.sh /data/lv60k/manifest /checkpoints/w2v2_large
#
set -euo pipefail

MANIFEST=${1:?path to the directory with train.tsv / valid.tsv}
SAVE_DIR=${2:?where to write checkpoints}
FAIRSEQ_ROOT=${FAIRSEQ_ROOT:-$(cd "$(dirname "$0")/../../.." && pwd)}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export OMP_NUM_THREADS=4
export NCCL_DEBUG=WARN

NGPU=$(echo "${CUDA_VISIBLE_DEVICES}" | tr ',' '\n' | wc -l)
UPDATE_FREQ=$((128 / NGPU))

echo "training on ${NGPU} GPUs, update_freq=${UPDATE_FREQ}"
mkdir -p "${SAVE_DIR}"

fairseq-hydra-train \
    task.data="${MANIFEST}" \
    checkpoint.save_dir="${SAVE_DIR}" \
    distributed_training.distributed_world_size="${NGPU}" \
    +optimization.update_freq="[${UPDATE_FREQ}]" \
    common.fp16=true \
    --config-dir "${FAIRSEQ_ROOT}/examples/wav2vec/config/pretraining" \
    --config-name wav2vec2_large_librivox \
    2>&1 | tee "${SAVE_DIR}/train.log"
