#!/bin/bash -x
#SBATCH --nodes=32
#SBATCH --gres=gpu:4
#SBATCH --ntasks-per-node=4
#SBATCH --cpus-per-task=12
#SBATCH --wait-all-nodes=1
#SBATCH --job-name=open_clip_vitb16
#SBATCH --account=laion
#SBATCH --partition=booster
#SBATCH --time=24:00:00
#SBATCH --output=logs/%x_%j.out
#SBATCH --exclusive

# ViT-B/16 on LAION-400M, 32 nodes x 4 A100-40GB, global batch 32768.
# Usage: sbatch scripts/train_laion400m_vitb16.sh [extra open_clip args]

set -euo pipefail

# load cluster software stack
module purge
module load Stages/2023 GCC/11.3.0 OpenMPI/4.1.4
module load CUDA/11.8 NCCL/default-CUDA-11.8 cuDNN/8.6.0.163-CUDA-11.8

# activate the training env
eval "$(/p/project/laion/miniconda3/bin/conda shell.bash hook)"
conda activate open_clip

export CUDA_VISIBLE_DEVICES=0,1,2,3
export MASTER_PORT=12802
master_addr=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
# Allow communication over InfiniBand cells.
export MASTER_ADDR="${master_addr}i"

# NCCL tuning for the booster InfiniBand fabric
export NCCL_SOCKET_IFNAME=ib0
export NCCL_IB_TIMEOUT=50
export NCCL_IB_HCA=mlx5
export NCCL_DEBUG=WARN
export NCCL_ASYNC_ERROR_HANDLING=1
export OMP_NUM_THREADS=12
export PYTHONFAULTHANDLER=1

# webdataset shards live on the scratch filesystem
DATA_ROOT=/p/scratch/laion/laion400m-data
TRAIN_SHARDS="${DATA_ROOT}/{00000..41455}.tar"
IMAGENET_VAL=/p/scratch/laion/imagenet/val
LOG_DIR=/p/scratch/laion/open_clip_logs

EXP_NAME="vitb16-laion400m-e32-$(date +%Y%m%d-%H%M%S)"

mkdir -p logs "${LOG_DIR}"

echo "Job ${SLURM_JOB_ID} on ${SLURM_JOB_NUM_NODES} nodes, master ${MASTER_ADDR}:${MASTER_PORT}"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -n 4

cd /p/project/laion/open_clip
export PYTHONPATH="$PYTHONPATH:$PWD/src"

srun --cpu_bind=v --accel-bind=gn python -u src/training/main.py \
    --save-frequency 1 \
    --zeroshot-frequency 1 \
    --report-to tensorboard \
    --train-data="${TRAIN_SHARDS}" \
    --train-num-samples 401000000 \
    --dataset-type webdataset \
    --dataset-resampled \
    --imagenet-val "${IMAGENET_VAL}" \
    --warmup 2000 \
    --batch-size=256 \
    --epochs=32 \
    --lr 1e-3 \
    --wd 0.1 \
    --workers=8 \
    --model ViT-B-16 \
    --precision amp \
    --grad-checkpointing \
    --local-loss \
    --gather-with-grad \
    --seed 0 \
    --logs "${LOG_DIR}" \
    --name "${EXP_NAME}" \
    "$@"
