#!/usr/bin/env bash
# Train a Descript Audio Codec model on a single multi-GPU node.
#
#   bash scripts/train.sh conf/final/44khz.yml runs/44khz
#
# Multi-node jobs go through scripts/slurm_train.sh instead.
set -euo pipefail

CONF=${1:-conf/final/44khz.yml}
SAVE_PATH=${2:-runs/$(basename "${CONF}" .yml)}
shift $(( $# > 2 ? 2 : $# ))

# ----------------------------------------------------------------------------- devices
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
NGPU=$(nvidia-smi --list-gpus | wc -l)
echo "[train.sh] ${NGPU} GPUs visible on $(hostname), using ${CUDA_VISIBLE_DEVICES}"

if [[ "${NGPU}" -lt 1 ]]; then
    echo "[train.sh] no GPU found, aborting" >&2
    exit 1
fi

# ----------------------------------------------------------------------------- comms
export NCCL_P2P_DISABLE=0
export NCCL_IB_DISABLE=1
export NCCL_SOCKET_IFNAME=eth0
export NCCL_ASYNC_ERROR_HANDLING=1

# ----------------------------------------------------------------------------- misc
export OMP_NUM_THREADS=8
export CUDNN_BENCHMARK=1
export PYTHONPATH=${PYTHONPATH:-}:$(pwd)
export TORCH_HOME=${TORCH_HOME:-$HOME/.cache/torch}

mkdir -p "${SAVE_PATH}"
cp "${CONF}" "${SAVE_PATH}/config.yml"
git rev-parse HEAD > "${SAVE_PATH}/commit.txt" 2>/dev/null || true
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "${SAVE_PATH}/gpus.csv"

# resume automatically when a latest checkpoint exists
RESUME_ARGS=""
if [[ -d "${SAVE_PATH}/latest/dac" ]]; then
    echo "[train.sh] resuming from ${SAVE_PATH}/latest"
    RESUME_ARGS="--resume"
fi

# ----------------------------------------------------------------------------- launch
if [[ "${NGPU}" -eq 1 ]]; then
    python scripts/train.py \
        --args.load "${CONF}" \
        --save_path "${SAVE_PATH}" \
        ${RESUME_ARGS} "$@"
else
    torchrun --nproc_per_node gpu --master_port ${MASTER_PORT:-29500} \
        scripts/train.py \
        --args.load "${CONF}" \
        --save_path "${SAVE_PATH}" \
        ${RESUME_ARGS} "$@"
fi

# ----------------------------------------------------------------------------- export
# package the latest generator for `python -m dac encode --weights_path ...`
python - <<PY
import torch
from dac.model import DAC
model, _ = DAC.load_from_folder("${SAVE_PATH}/latest", package=False, map_location="cpu")
torch.save({"state_dict": model.state_dict(), "metadata": model.metadata},
           "${SAVE_PATH}/weights.pth")
print("exported ${SAVE_PATH}/weights.pth")
PY
