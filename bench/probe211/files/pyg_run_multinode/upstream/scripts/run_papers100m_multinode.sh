#!/bin/bash
# Multi-node GCN training on ogbn-papers100M (PyG NeighborLoader + DDP).
#
# Submit with:   sbatch -N 2 scripts/run_papers100m_multinode.sh
# or run by hand on every node with NODE_RANK / MASTER_ADDR exported.
#
#SBATCH --job-name=pyg-papers100m
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
#SBATCH --cpus-per-task=96
#SBATCH --mem=1800G
#SBATCH --time=04:00:00
#SBATCH --output=logs/%x-%j.out

set -e

NNODES=${SLURM_NNODES:-2}
NODE_RANK=${SLURM_NODEID:-${NODE_RANK:-0}}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}
MASTER_ADDR=${MASTER_ADDR:-$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)}
MASTER_PORT=${MASTER_PORT:-29500}
DATA_ROOT=${DATA_ROOT:-/datasets/ogb}

module load cuda/12.1 nccl/2.18
source /opt/conda/etc/profile.d/conda.sh
conda activate pyg-cu121

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export OMP_NUM_THREADS=12

# InfiniBand fabric
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3
export NCCL_SOCKET_IFNAME=ib0
export NCCL_IB_GID_INDEX=3
export NCCL_NET_GDR_LEVEL=2
export NCCL_ASYNC_ERROR_HANDLING=1
export NCCL_DEBUG=INFO
export GLOO_SOCKET_IFNAME=ib0

mkdir -p logs

echo "node ${NODE_RANK}/${NNODES}, master ${MASTER_ADDR}:${MASTER_PORT}"
nvidia-smi --query-gpu=index,name,memory.total --format=csv

srun --ntasks-per-node=1 torchrun \
    --nnodes="${NNODES}" \
    --nproc_per_node="${GPUS_PER_NODE}" \
    --rdzv_id="${SLURM_JOB_ID:-papers100m}" \
    --rdzv_backend=c10d \
    --rdzv_endpoint="${MASTER_ADDR}:${MASTER_PORT}" \
    examples/multi_gpu/papers100m_gcn_multinode.py \
        --dataset_root "${DATA_ROOT}" \
        --epochs 3 \
        --batch_size 1024 \
        --fan_out 30 \
        --bf16
