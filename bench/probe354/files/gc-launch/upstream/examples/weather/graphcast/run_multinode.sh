#!/bin/bash
# Launch GraphCast training on N nodes x 8 GPUs with torchrun (one task per node).
#   sbatch -N 8 run_multinode.sh
#SBATCH --job-name=graphcast
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
#SBATCH --cpus-per-task=96
#SBATCH --exclusive
#SBATCH --time=04:00:00

set -euo pipefail

readonly NPROC_PER_NODE=${NPROC_PER_NODE:-8}
readonly MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
readonly MASTER_PORT=${MASTER_PORT:-29500}

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export NCCL_SOCKET_IFNAME=ib0
export NCCL_IB_HCA=mlx5
export NCCL_NVLS_ENABLE=0
export NCCL_DEBUG=INFO
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1
export OMP_NUM_THREADS=8
export MODULUS_DISTRIBUTED_INITIALIZATION_METHOD=ENV

echo "master: ${MASTER_ADDR}:${MASTER_PORT}, nodes: ${SLURM_NNODES}"
srun --kill-on-bad-exit=1 bash -c "nvidia-smi -L && \
  torchrun \
    --nnodes=${SLURM_NNODES} \
    --nproc_per_node=${NPROC_PER_NODE} \
    --node_rank=\${SLURM_NODEID} \
    --rdzv_backend=c10d \
    --rdzv_endpoint=${MASTER_ADDR}:${MASTER_PORT} \
    train_graphcast.py \
      hydra.run.dir=outputs/graphcast_${SLURM_JOB_ID} \
      wb_mode=offline"
