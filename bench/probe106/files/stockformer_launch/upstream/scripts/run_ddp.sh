#!/bin/bash
# Launch train_ddp.py on one or more 8-GPU nodes.
#
#   bash scripts/run_ddp.sh configs/stockformer_csi800.yaml
#   NNODES=2 NODE_RANK=1 MASTER_ADDR=10.0.0.11 bash scripts/run_ddp.sh configs/stockformer_csi800.yaml
#
# Every node runs this script; NODE_RANK 0 hosts the rendezvous.

CONFIG=${1:-configs/stockformer_csi800.yaml}
shift || true
EXTRA_ARGS="$@"

NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29500}
GPUS_PER_NODE=${GPUS_PER_NODE:-$(nvidia-smi -L | wc -l)}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}

# NCCL tuning for our cluster (ConnectX-6, 2x200G per node)
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-bond0}
export NCCL_IB_DISABLE=${NCCL_IB_DISABLE:-0}
export NCCL_IB_HCA=${NCCL_IB_HCA:-mlx5_0,mlx5_1}
export NCCL_IB_GID_INDEX=3
export NCCL_P2P_LEVEL=NVL

export OMP_NUM_THREADS=${OMP_NUM_THREADS:-4}
export PYTHONPATH=$(pwd):${PYTHONPATH}
export TOKENIZERS_PARALLELISM=false

RUN_NAME=${RUN_NAME:-$(basename "${CONFIG}" .yaml)_$(date +%m%d_%H%M)}
OUT_DIR=runs/${RUN_NAME}
mkdir -p "${OUT_DIR}"

echo "node ${NODE_RANK}/${NNODES}: ${GPUS_PER_NODE} GPUs, master ${MASTER_ADDR}:${MASTER_PORT}"
echo "config ${CONFIG} -> ${OUT_DIR}"

torchrun \
  --nnodes="${NNODES}" \
  --node_rank="${NODE_RANK}" \
  --nproc_per_node="${GPUS_PER_NODE}" \
  --master_addr="${MASTER_ADDR}" \
  --master_port="${MASTER_PORT}" \
  train_ddp.py --config "${CONFIG}" --output_dir "${OUT_DIR}" --amp bf16 ${EXTRA_ARGS} \
  2>&1 | tee "${OUT_DIR}/train_node${NODE_RANK}.log"

exit ${PIPESTATUS[0]}
