#!/bin/bash -x
#SBATCH --job-name=openclip-vitb32-laion400m
#SBATCH --partition=gpu
#SBATCH --nodes=16
#SBATCH --ntasks-per-node=8
#SBATCH --cpus-per-task=12
#SBATCH --gres=gpu:8
#SBATCH --exclusive
#SBATCH --time=72:00:00
#SBATCH --output=logs/%x_%j.out
#SBATCH --requeue
#
# ViT-B/32 on LAION-400M webdataset shards, 128 GPUs, global batch 32768.
# One task per GPU; torch.distributed is initialised from the SLURM_* variables
# (see training/distributed.py), so no torchrun is involved.

module purge
module load cuda/12.1 nccl/2.18.3 openmpi/4.1.5
source /opt/conda/etc/profile.d/conda.sh
conda activate open_clip

# ---- networking ---------------------------------------------------------------------------
export MASTER_PORT=12802
master_addr=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_ADDR=$master_addr

export NCCL_SOCKET_IFNAME=ib0
export NCCL_IB_DISABLE=0
export NCCL_DEBUG=WARN
export OMP_NUM_THREADS=4

# ---- data ---------------------------------------------------------------------------------
# 41,455 shards of ~10k samples; workers only untar + tokenize, images are decoded on the GPU
DATA="/scratch/laion400m/{00000..41455}.tar"
export PYTHONPATH="$PYTHONPATH:$PWD/src"

cd /shared/open_clip
srun --cpu_bind=v --accel-bind=gn python -u src/training/main.py \
    --save-frequency 1 \
    --report-to tensorboard \
    --train-data="$DATA" \
    --train-num-samples 400000000 \
    --dataset-type webdataset \
    --dataset-resampled \
    --gpu-decode \
    --warmup 2000 \
    --batch-size=256 \
    --epochs=32 \
    --lr 5e-4 \
    --wd 0.2 \
    --workers=8 \
    --model ViT-B-32 \
    --precision amp \
    --grad-checkpointing \
    --local-loss \
    --gather-with-grad \
    --dist-backend nccl \
    --name "ViT-B-32-laion400m-${SLURM_JOB_ID}" \
    --logs /shared/logs \
    --seed 0

# keep the per-node GPU inventory next to the logs for post-mortems
srun --ntasks-per-node=1 bash -c 'echo "== $(hostname)"; nvidia-smi --query-gpu=index,name,memory.total,ecc.errors.uncorrected.volatile.total --format=csv' \
    > "/shared/logs/ViT-B-32-laion400m-${SLURM_JOB_ID}/gpus.csv"
