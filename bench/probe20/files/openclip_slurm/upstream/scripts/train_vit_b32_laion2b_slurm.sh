#!/bin/bash -x
#SBATCH --nodes=32
#SBATCH --gres=gpu:4
#SBATCH --ntasks-per-node=4
#SBATCH --cpus-per-task=12
#SBATCH --wait-all-nodes=1
#SBATCH --job-name=open_clip_vit_b32
#SBATCH --account=laion
#SBATCH --partition=booster
#SBATCH --time=24:00:00
#SBATCH --output=logs/%x_%j.out
#SBATCH --exclusive

# Reference launch script for ViT-B/32 on LAION-2B (32 nodes x 4 GPUs).
# Each SLURM task drives exactly one GPU; open_clip_train reads SLURM_LOCALID / SLURM_PROCID.

set -euo pipefail

eval "$(/p/project/laion/miniconda3/bin/conda shell.bash hook)"
conda activate open_clip

module load Stages/2023
module load CUDA/12
module load NCCL/default-CUDA-12

export CUDA_VISIBLE_DEVICES=0,1,2,3
export MASTER_PORT=12802
master_addr=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
# Allow communication over InfiniBand cells.
master_addr="${master_addr}i"
export MASTER_ADDR=$master_addr
echo "MASTER_ADDR=$MASTER_ADDR"

# NCCL tuning for the booster partition (4x HDR200 per node)
export NCCL_IB_TIMEOUT=50
export NCCL_SOCKET_IFNAME=ib0
export NCCL_ASYNC_ERROR_HANDLING=1
export NCCL_DEBUG=WARN
export UCX_RC_TIMEOUT=4s
export OMP_NUM_THREADS=1

# python environment
export PYTHONPATH="$PYTHONPATH:$PWD/src"
export HF_HOME=/p/scratch/laion/hf_cache
export TOKENIZERS_PARALLELISM=false

# where the shards live
DATA="/p/fastdata/datasets/laion2b-en/{00000..231349}.tar"
LOGS="/p/scratch/laion/open_clip_logs"

# quick sanity check of the node before we burn the allocation
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
python -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.device_count())"

srun --cpu_bind=v --accel-bind=gn python -u -m open_clip_train.main \
    --save-frequency 1 \
    --zeroshot-frequency 1 \
    --report-to=tensorboard \
    --train-data="$DATA" \
    --train-num-samples 2000000000 \
    --dataset-type webdataset \
    --dataset-resampled \
    --warmup 2000 \
    --batch-size=256 \
    --epochs=16 \
    --lr 5e-4 \
    --wd 0.2 \
    --workers=8 \
    --model ViT-B-32 \
    --name "ViT-B-32-laion2b-e16" \
    --seed 0 \
    --logs "$LOGS" \
    --local-loss \
    --gather-with-grad \
    --grad-checkpointing \
    --precision amp \
    --dist-backend nccl \
    --ddp-static-graph

# Horovod variant (kept for reference, slower on this cluster):
# srun python -u -m open_clip_train.main --horovod --precision amp ...

echo "done: $(date)"
