#!/usr/bin/env bash
# Multi-GPU VITS training on LJSpeech with the 👟 Trainer's DDP launcher.
#
#   bash recipes/ljspeech/vits_tts/run_multi_gpu.sh            # all 4 GPUs
#   GPUS=0,1 bash recipes/ljspeech/vits_tts/run_multi_gpu.sh   # a subset
#
# Tested on a 4x A100 40GB node (driver 535, CUDA 11.8).
set -euo pipefail

RUN_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "${RUN_DIR}/../../.." && pwd)
GPUS=${GPUS:-0,1,2,3}
OUT_PATH=${OUT_PATH:-/data/runs/vits_ljspeech}
CONFIG=${CONFIG:-${RUN_DIR}/config.json}

cd "${REPO_ROOT}"
mkdir -p "${OUT_PATH}"

# Log the hardware for the run folder.
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv > "${OUT_PATH}/gpus.csv"

export CUDA_VISIBLE_DEVICES=${GPUS}
export OMP_NUM_THREADS=8
export NCCL_DEBUG=WARN
export NCCL_P2P_DISABLE=0
export NCCL_IB_DISABLE=1
export NCCL_SOCKET_IFNAME=eth0
export TORCH_DISTRIBUTED_DEBUG=OFF

# phoneme cache is shared between ranks, build it once on rank 0 before launching
python3 TTS/bin/compute_statistics.py --config_path "${CONFIG}" --out_path "${OUT_PATH}/scale_stats.npy" || true

python3 -m trainer.distribute \
    --script "${RUN_DIR}/train_vits.py" \
    --gpus "${GPUS}" \
    --config_path "${CONFIG}" \
    --coqpit.output_path "${OUT_PATH}" \
    --coqpit.mixed_precision true \
    --coqpit.batch_size 32 \
    2>&1 | tee "${OUT_PATH}/train.log"
