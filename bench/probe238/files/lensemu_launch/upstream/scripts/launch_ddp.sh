#!/usr/bin/env bash
# Single-node multi-GPU launcher for the lens emulator / SNPE scripts.
#
#   bash scripts/launch_ddp.sh lens_emulator/train_emulator.py --data /scratch/lens_sims/train_2M.h5 --amp
#   GPUS=0,1 bash scripts/launch_ddp.sh ...      # restrict to a subset of the node's GPUs
set -euo pipefail

SCRIPT=$1
shift

# which GPUs to use: all visible ones unless GPUS is given
if [[ -n "${GPUS:-}" ]]; then
    export CUDA_VISIBLE_DEVICES=${GPUS}
    NPROC=$(echo "${GPUS}" | tr ',' '\n' | wc -l)
else
    NPROC=$(nvidia-smi -L | wc -l)
fi

if [[ "${NPROC}" -lt 1 ]]; then
    echo "No GPUs found" >&2
    exit 1
fi

# conda env with the CUDA 12.1 build of torch and the lens_ops_cuda extension
source "${CONDA_PREFIX:-$HOME/miniconda3}/etc/profile.d/conda.sh"
conda activate lensemu

export OMP_NUM_THREADS=$(( $(nproc) / NPROC ))
export NCCL_P2P_LEVEL=NVL
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1
export PYTHONPATH="$(pwd):${PYTHONPATH:-}"

echo "Launching ${SCRIPT} on ${NPROC} GPU(s) (CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-all})"
nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader

torchrun \
    --standalone \
    --nnodes=1 \
    --nproc_per_node="${NPROC}" \
    "${SCRIPT}" "$@"
