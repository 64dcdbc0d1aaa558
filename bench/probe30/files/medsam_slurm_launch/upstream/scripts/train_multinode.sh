#!/bin/bash
#SBATCH --job-name=medsam_ft
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gres=gpu:8
#SBATCH --cpus-per-task=64
#SBATCH --mem=0
#SBATCH --time=72:00:00
#SBATCH --partition=a100
#SBATCH --output=logs/%x_%j.out
#
# Multi-node MedSAM fine-tuning: one torchrun per node, 8 GPUs per node.
#   sbatch scripts/train_multinode.sh data/npy work_dir
set -euo pipefail

DATA_DIR=${1:-data/npy}
WORK_DIR=${2:-work_dir}
mkdir -p logs "${WORK_DIR}"

module purge
module load cuda/11.8 nccl/2.18.3 python/3.10
source "${HOME}/venvs/medsam/bin/activate"

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export NCCL_DEBUG=INFO
export NCCL_SOCKET_IFNAME=ib0
export NCCL_IB_DISABLE=0
export NCCL_ASYNC_ERROR_HANDLING=1
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
export OMP_NUM_THREADS=8

GPUS_PER_NODE=$(nvidia-smi --list-gpus | wc -l)
NNODES=${SLURM_NNODES:-1}
MASTER_ADDR=$(scontrol show hostnames "${SLURM_JOB_NODELIST}" | head -n 1)
MASTER_PORT=${MASTER_PORT:-29500}
WORLD_SIZE=$((GPUS_PER_NODE * NNODES))

echo "nodes=${NNODES} gpus/node=${GPUS_PER_NODE} world=${WORLD_SIZE} master=${MASTER_ADDR}:${MASTER_PORT}"
nvidia-smi

srun --kill-on-bad-exit=1 bash -c "
  torchrun \
    --nnodes=${NNODES} \
    --nproc_per_node=${GPUS_PER_NODE} \
    --node_rank=\${SLURM_NODEID} \
    --rdzv_id=${SLURM_JOB_ID} \
    --rdzv_backend=c10d \
    --rdzv_endpoint=${MASTER_ADDR}:${MASTER_PORT} \
    train_multi_gpus.py \
      -i ${DATA_DIR} \
      -task_name MedSAM-ViT-B-${NNODES}x${GPUS_PER_NODE} \
      -work_dir ${WORK_DIR} \
      -batch_size 8 \
      -num_workers 8 \
      -use_amp \
      --world_size ${WORLD_SIZE} \
      --bucket_cap_mb 25 \
      --grad_acc_steps 1
"

echo "done: $(date)"
