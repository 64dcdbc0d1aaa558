#!/usr/bin/env bash
# Launch a Sample Factory APPO run (and an optional multi-node learner) on a GPU box.
set -euo pipefail

ENV=${ENV:-doom_battle}
EXPERIMENT=${EXPERIMENT:-appo_${ENV}_$(date +%Y%m%d_%H%M%S)}
NUM_WORKERS=${NUM_WORKERS:-32}
NUM_GPUS=${NUM_GPUS:-$(nvidia-smi --list-gpus | wc -l)}

echo "Detected ${NUM_GPUS} GPUs"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-$(seq -s, 0 $((NUM_GPUS - 1)))}
export OMP_NUM_THREADS=1
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=1
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export PYTHONUNBUFFERED=1

mkdir -p train_dir/"${EXPERIMENT}"

if [[ "${NUM_GPUS}" -gt 1 && "${DDP:-0}" == "1" ]]; then
    torchrun --standalone --nproc_per_node="${NUM_GPUS}" \
        -m sf_examples.vizdoom.train_vizdoom \
        --env="${ENV}" --experiment="${EXPERIMENT}" \
        --num_workers="${NUM_WORKERS}" --device=gpu \
        --dist_backend=nccl
else
    python -m sf_examples.vizdoom.train_vizdoom \
        --env="${ENV}" --experiment="${EXPERIMENT}" \
        --num_workers="${NUM_WORKERS}" --num_envs_per_worker=16 \
        --num_policies=1 --batch_size=2048 \
        --device=gpu --serial_mode=False --async_rl=True
fi

# keep a record of the hardware used
nvidia-smi > train_dir/"${EXPERIMENT}"/nvidia-smi.txt
python -c "import torch; print(torch.version.cuda, torch.backends.cudnn.version())" > train_dir/"${EXPERIMENT}"/cuda_version.txt
