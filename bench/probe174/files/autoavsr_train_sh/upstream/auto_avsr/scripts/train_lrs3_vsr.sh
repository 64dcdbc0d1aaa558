#!/usr/bin/env bash
# Train a visual-only (lip-reading) conformer on LRS3 + VoxCeleb2 pseudo-labels on one 8-GPU node.
#
#   bash scripts/train_lrs3_vsr.sh /data/lrs3_vox2_preprocessed exp/vsr_lrs3_vox2
#
set -eo pipefail

ROOT_DIR=${1:?root dir of the preprocessed dataset}
EXP_DIR=${2:-exp/vsr}
EXP_NAME=${EXP_NAME:-vsr_trlrs3vox2_base}
PRETRAINED=${PRETRAINED:-}

cd "$(dirname "$0")/.."

NUM_GPUS=$(nvidia-smi --list-gpus | wc -l)
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-$(seq -s, 0 $((NUM_GPUS - 1)))}
export OMP_NUM_THREADS=4
export NCCL_P2P_DISABLE=0
export TORCH_NCCL_BLOCKING_WAIT=0

echo "training on ${NUM_GPUS} GPUs: ${CUDA_VISIBLE_DEVICES}"

EXTRA_ARGS=()
if [ -n "${PRETRAINED}" ]; then
  EXTRA_ARGS+=(--pretrained-model-path "${PRETRAINED}" --transfer-frontend)
fi

python train.py \
    --exp-dir "${EXP_DIR}" \
    --exp-name "${EXP_NAME}" \
    --modality video \
    --root-dir "${ROOT_DIR}" \
    --train-file lrs3_vox2_train_transcript_lengths_seg16s.csv \
    --num-nodes 1 \
    --gpus "${NUM_GPUS}" \
    --precision 16-mixed \
    --max-frames 1800 \
    --max-epochs 75 \
    --lr 1e-3 \
    --logger tensorboard \
    "${EXTRA_ARGS[@]}"

# average the last 10 checkpoints and evaluate on LRS3 test
python eval.py \
    --modality video \
    --root-dir "${ROOT_DIR}" \
    --test-file lrs3_test_transcript_lengths_seg16s.csv \
    --pretrained-model-path "${EXP_DIR}/${EXP_NAME}/model_avg_10.pth"
