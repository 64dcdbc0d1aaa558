#!/bin/bash
#SBATCH --job-name=usp-llama3-128k
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=1
#SBATCH --gres=gpu:8
#SBATCH --cpus-per-task=96
#SBATCH --exclusive
#SBATCH --output=logs/%x-%j.out

# USP (Ulysses x Ring) fine-tuning of Llama-3-8B at 128K on 4 nodes x 8 H100.
# ulysses degree 8 stays inside a node (all-to-all over NVLink), ring degree 4 crosses nodes (P2P over IB).

module load cuda/12.1 nccl/2.18

export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_PORT=29500
export GPUS_PER_NODE=8
export NNODES=$SLURM_NNODES
export WORLD_SIZE=$((GPUS_PER_NODE * NNODES))

# NCCL over InfiniBand
export NCCL_SOCKET_IFNAME=ib0
export NCCL_IB_HCA=mlx5
export NCCL_DEBUG=INFO
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1
export CUDA_LAUNCH_BLOCKING=0

mkdir -p logs

srun --kill-on-bad-exit=1 bash -c '
torchrun \
  --nnodes $NNODES --nproc_per_node $GPUS_PER_NODE \
  --node_rank $SLURM_PROCID \
  --rdzv_id $SLURM_JOB_ID --rdzv_backend c10d --rdzv_endpoint $MASTER_ADDR:$MASTER_PORT \
  train_usp.py \
    --model meta-llama/Meta-Llama-3-8B \
    --seq-length 131072 \
    --ulysses-degree 8 --ring-degree 4 \
    --ring-impl zigzag \
    --attn-impl fa \
    --use-ulysses-lowdim \
    --bf16 \
    --gradient-checkpointing \
    --output-dir checkpoints/llama3-8b-128k
'
