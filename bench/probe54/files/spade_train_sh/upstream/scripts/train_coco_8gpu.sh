#!/usr/bin/env bash
# Train SPADE (GauGAN) on COCO-Stuff at 256x256 on a single 8-GPU node,
# then evaluate FID on the validation split.
#
#   bash scripts/train_coco_8gpu.sh coco_spade_8gpu /data/cocostuff
#
# Notes
#  * gpu_ids are handed to DataParallelWithCallback; the batch is split
#    evenly across them, so batchSize must be a multiple of the GPU count.
#  * the default norm_G (spectralspadesyncbatch3x3) uses synchronized
#    batchnorm across the GPUs listed in --gpu_ids.
#  * mixed precision (--use_amp) needs a GPU with tensor cores.

set -euo pipefail

NAME=${1:-coco_spade_8gpu}
DATAROOT=${2:-/data/cocostuff}
GPUS=${GPUS:-0,1,2,3,4,5,6,7}
BATCH=${BATCH:-32}
NITER=${NITER:-50}
NITER_DECAY=${NITER_DECAY:-50}
CKPT_DIR=${CKPT_DIR:-./checkpoints}

# ---------------------------------------------------------------------------
# environment
# ---------------------------------------------------------------------------
export CUDA_VISIBLE_DEVICES=${GPUS}
export CUDA_DEVICE_ORDER=PCI_BUS_ID
export CUDA_LAUNCH_BLOCKING=${CUDA_LAUNCH_BLOCKING:-0}
export OMP_NUM_THREADS=4
export PYTHONUNBUFFERED=1

NUM_GPUS=$(echo "${GPUS}" | tr ',' '\n' | wc -l)
# --gpu_ids is relative to CUDA_VISIBLE_DEVICES
GPU_IDS=$(seq -s, 0 $((NUM_GPUS - 1)))

if ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "nvidia-smi not found: this script needs NVIDIA GPUs" >&2
  exit 1
fi
nvidia-smi -L

mkdir -p "${CKPT_DIR}/${NAME}" logs

# ---------------------------------------------------------------------------
# train
# ---------------------------------------------------------------------------
python train.py \
  --name "${NAME}" \
  --dataset_mode coco \
  --dataroot "${DATAROOT}" \
  --checkpoints_dir "${CKPT_DIR}" \
  --gpu_ids "${GPU_IDS}" \
  --batchSize "${BATCH}" \
  --niter "${NITER}" --niter_decay "${NITER_DECAY}" \
  --norm_G spectralspadesyncbatch3x3 \
  --use_vae --use_amp \
  --nThreads 16 \
  --tf_log \
  2>&1 | tee "logs/${NAME}_train.log"

# ---------------------------------------------------------------------------
# test + FID (single GPU)
# ---------------------------------------------------------------------------
python test.py \
  --name "${NAME}" \
  --dataset_mode coco \
  --dataroot "${DATAROOT}" \
  --checkpoints_dir "${CKPT_DIR}" \
  --gpu_ids 0 \
  --batchSize 1 \
  --results_dir "./results/${NAME}" \
  --which_epoch latest

python -m pytorch_fid "./results/${NAME}/test_latest/images/synthesized_image" \
  "${DATAROOT}/val_img" --device cuda:0 --batch-size 50 \
  | tee "logs/${NAME}_fid.txt"
