#!/usr/bin/env bash
# Train the Table Transformer (TATR) structure-recognition model on PubTables-1M.
# 8 x V100 32GB, ~ 20 epochs. Checkpoints go to ../output/structure/<timestamp>/
set -euo pipefail

DATA_ROOT=${DATA_ROOT:-/datasets/PubTables-1M-Structure}
OUT_DIR=${OUT_DIR:-../output/structure}
GPUS=${GPUS:-8}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export NCCL_IB_DISABLE=1
export OMP_NUM_THREADS=4

cd "$(dirname "$0")/../src"

python -m torch.distributed.launch --nproc_per_node=${GPUS} --use_env main.py \
    --data_type structure \
    --config_file structure_config.json \
    --data_root_dir "${DATA_ROOT}" \
    --model_save_dir "${OUT_DIR}" \
    --batch_size 4 \
    --num_workers 8 \
    --device cuda \
    "$@"
