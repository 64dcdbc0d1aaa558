#!/bin/bash
#SBATCH --job-name=be-wrn28-ddp
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gres=gpu:8
#SBATCH --cpus-per-task=64
#SBATCH --time=24:00:00
#SBATCH --output=logs/%x-%j.out
#
# Multi-node DDP training of a BatchEnsemble WRN-28-10 (or one deep-ensemble member).
#   sbatch scripts/launch_ddp_multinode.sh --arch be_wrn28 --ensemble-size 4 --amp

module purge
module load cuda/11.8 cudnn/8.9 nccl/2.18
source ~/venvs/uq/bin/activate

export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_PORT=29500
export GPUS_PER_NODE=8

# NCCL settings for our InfiniBand cluster
export NCCL_DEBUG=INFO
export NCCL_SOCKET_IFNAME=ib0
export NCCL_IB_HCA=mlx5
export NCCL_ASYNC_ERROR_HANDLING=1
export OMP_NUM_THREADS=8

echo "master: $MASTER_ADDR:$MASTER_PORT, nodes: $SLURM_NNODES"
srun --kill-on-bad-exit=1 bash -c 'nvidia-smi -L; torchrun \
    --nnodes=$SLURM_NNODES \
    --nproc_per_node=$GPUS_PER_NODE \
    --node_rank=$SLURM_NODEID \
    --rdzv_id=$SLURM_JOB_ID \
    --rdzv_backend=c10d \
    --rdzv_endpoint=$MASTER_ADDR:$MASTER_PORT \
    deep_ensembles/train_ddp.py --dist-backend nccl '"$*"
