#!/bin/bash
# Multi-node Open-Sora training / HunyuanVideo-style xDiT sampling launcher.
#   NNODES=4 NODE_RANK=0 MASTER_ADDR=10.0.0.1 bash scripts/train_multinode.sh configs/opensora-v1-2/train/stage1.py
set -e

CONFIG=${1:-configs/opensora-v1-2/train/stage1.py}
MODE=${MODE:-train}            # train | sample
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29500}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}

# ---------------------------------------------------------------------------
# NCCL / CUDA environment
# ---------------------------------------------------------------------------
export CUDA_DEVICE_MAX_CONNECTIONS=1
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export NCCL_IB_HCA=${NCCL_IB_HCA:-mlx5}
export NCCL_IB_GID_INDEX=3
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1
export CUDA_LAUNCH_BLOCKING=${CUDA_LAUNCH_BLOCKING:-0}
export OMP_NUM_THREADS=8
export TOKENIZERS_PARALLELISM=false

LOG_DIR=outputs/logs
mkdir -p ${LOG_DIR}

echo "node ${NODE_RANK}/${NNODES}, master ${MASTER_ADDR}:${MASTER_PORT}, ${GPUS_PER_NODE} GPUs per node"
nvidia-smi topo -m || true

if [ "${MODE}" = "train" ]; then
    if [ "${NNODES}" -gt 1 ]; then
        # ColossalAI launcher reads the host list and starts torchrun on every node over ssh
        colossalai run --nproc_per_node ${GPUS_PER_NODE} --hostfile hostfile \
            --master_addr ${MASTER_ADDR} --master_port ${MASTER_PORT} \
            scripts/train.py ${CONFIG} --data-path ${DATA_PATH:-data/meta.csv} \
            2>&1 | tee ${LOG_DIR}/train_node${NODE_RANK}.log
    else
        torchrun --standalone --nproc_per_node ${GPUS_PER_NODE} \
            scripts/train.py ${CONFIG} --data-path ${DATA_PATH:-data/meta.csv} \
            2>&1 | tee ${LOG_DIR}/train.log
    fi
else
    # xDiT / USP sampling: ulysses x ring must equal the number of GPUs
    ULYSSES=${ULYSSES:-8}
    RING=${RING:-1}
    torchrun --nnodes ${NNODES} --node_rank ${NODE_RANK} --nproc_per_node ${GPUS_PER_NODE} \
        --master_addr ${MASTER_ADDR} --master_port ${MASTER_PORT} \
        sample_video.py \
        --video-size 720 1280 --video-length 129 --infer-steps 50 \
        --prompt "A cat walks on the grass, realistic style." \
        --flow-reverse --seed 42 \
        --ulysses-degree ${ULYSSES} --ring-degree ${RING} \
        --save-path ./results \
        2>&1 | tee ${LOG_DIR}/sample.log
fi

# keep the GPU memory report next to the logs
nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv > ${LOG_DIR}/gpu_mem_node${NODE_RANK}.csv
