#!/usr/bin/env bash
# Multi-GPU / multi-node training of the 3-D U-Net (pytorch-3dunet config) with torchrun.
#
#   NNODES=2 NODE_RANK=0 MASTER_ADDR=10.0.0.1 bash scripts/train_unet3d_ddp.sh resources/3DUnet_lightsheet_boundary/train_config.yml
#
set -euo pipefail

CONFIG=${1:?usage: train_unet3d_ddp.sh CONFIG.yml}
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29500}
GPUS_PER_NODE=${GPUS_PER_NODE:-$(nvidia-smi --list-gpus | wc -l)}

# pin the GPUs this job may use (scheduler may have set it already)
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-$(seq -s, 0 $((GPUS_PER_NODE - 1)))}

# NCCL settings for the lab cluster (InfiniBand between nodes, eth0 for bootstrap)
export NCCL_SOCKET_IFNAME=eth0
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1
export GLOO_SOCKET_IFNAME=eth0

# allocator: large 3-D patches fragment the caching allocator
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True

export OMP_NUM_THREADS=4
export PYTHONPATH=$(pwd):${PYTHONPATH:-}

RUN_DIR=runs/unet3d_$(date +%Y%m%d_%H%M%S)_n${NODE_RANK}
mkdir -p "$RUN_DIR"
cp "$CONFIG" "$RUN_DIR/"

echo "nodes=$NNODES node_rank=$NODE_RANK gpus/node=$GPUS_PER_NODE master=$MASTER_ADDR:$MASTER_PORT"
nvidia-smi topo -m | tee "$RUN_DIR/topo.txt"

torchrun \
    --nnodes "$NNODES" \
    --node_rank "$NODE_RANK" \
    --nproc_per_node "$GPUS_PER_NODE" \
    --master_addr "$MASTER_ADDR" \
    --master_port "$MASTER_PORT" \
    pytorch3dunet/train.py \
    --config "$CONFIG" \
    2>&1 | tee "$RUN_DIR/train.log"

# quick prediction on the held-out volume with the best checkpoint (single GPU)
if [[ "$NODE_RANK" == "0" ]]; then
    CUDA_VISIBLE_DEVICES=0 python pytorch3dunet/predict.py \
        --config "${CONFIG%train_config.yml}test_config.yml" \
        --model_path "$RUN_DIR/best_checkpoint.pytorch" \
        --device cuda
fi
