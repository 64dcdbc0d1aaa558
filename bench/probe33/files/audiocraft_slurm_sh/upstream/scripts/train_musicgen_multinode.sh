#!/bin/bash
# Multi-node MusicGen training on a SLURM cluster.
# Usage: sbatch scripts/train_musicgen_multinode.sh [extra dora overrides]
#
#SBATCH --job-name=musicgen_32khz
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=1
#SBATCH --gres=gpu:8
#SBATCH --cpus-per-task=96
#SBATCH --mem=0
#SBATCH --time=72:00:00
#SBATCH --output=logs/%x_%j.out
#SBATCH --error=logs/%x_%j.err

set -euo pipefail

module purge
module load cuda/11.8 cudnn/v8.6 nccl/2.18.1-cuda.11.8
source "${HOME}/miniconda3/etc/profile.d/conda.sh"
conda activate audiocraft

# Where dora stores experiments and the team-specific paths (see audiocraft/environment.py)
export AUDIOCRAFT_TEAM=default
export AUDIOCRAFT_DORA_DIR="/checkpoint/${USER}/experiments/audiocraft"
export AUDIOCRAFT_REFERENCE_DIR="/checkpoint/${USER}/reference"

# Communication settings (InfiniBand fabric, bond0 for the bootstrap)
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=0
export NCCL_SOCKET_IFNAME=bond0
export NCCL_ASYNC_ERROR_HANDLING=1
export CUDA_DEVICE_MAX_CONNECTIONS=1
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export OMP_NUM_THREADS=8
export PYTHONUNBUFFERED=1

MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
MASTER_PORT=${MASTER_PORT:-29512}
GPUS_PER_NODE=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
WORLD_SIZE=$((SLURM_NNODES * GPUS_PER_NODE))

echo "[$(date)] job ${SLURM_JOB_ID}: ${SLURM_NNODES} nodes x ${GPUS_PER_NODE} GPUs (world=${WORLD_SIZE})"
echo "master: ${MASTER_ADDR}:${MASTER_PORT}"
nvidia-smi topo -m || true

SOLVER=${SOLVER:-musicgen/musicgen_base_32khz}
SCALE=${SCALE:-medium}
DSET=${DSET:-audio/example}

mkdir -p logs

srun --kill-on-bad-exit=1 --ntasks-per-node=1 \
  torchrun \
    --nnodes="${SLURM_NNODES}" \
    --nproc_per_node="${GPUS_PER_NODE}" \
    --rdzv_id="${SLURM_JOB_ID}" \
    --rdzv_backend=c10d \
    --rdzv_endpoint="${MASTER_ADDR}:${MASTER_PORT}" \
    -m dora run \
      solver="${SOLVER}" \
      model/lm/model_scale="${SCALE}" \
      conditioner=text2music \
      dset="${DSET}" \
      device=cuda \
      autocast=true \
      autocast_dtype=float16 \
      dataset.num_workers=10 \
      dataset.batch_size=192 \
      optim.epochs=500 \
      "$@"

echo "[$(date)] done"
