#!/bin/bash -x
#SBATCH --nodes=32
#SBATCH --gres=gpu:4
#SBATCH --ntasks-per-node=4
#SBATCH --cpus-per-task=6
#SBATCH --wait-all-nodes=1
#SBATCH --job-name=open_clip
#SBATCH --account=ACCOUNT_NAME
#SBATCH --partition PARTITION_NAME
#SBATCH --output=logs/%x_%j.out
#SBATCH --exclusive

# LAION-400M ViT-B/32 run, 32 nodes x 4 A100 40GB

eval "$(/path/to/conda/bin/conda shell.bash hook)" # init conda
conda activate open_clip

export CUDA_VISIBLE_DEVICES=0,1,2,3
export MASTER_PORT=12802
export PYTHONFAULTHANDLER=1

# interconnect settings for this cluster (IB on ens*, see wiki)
export NCCL_DEBUG=INFO
export NCCL_SOCKET_IFNAME=ens
export NCCL_IB_TIMEOUT=22

master_addr=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_ADDR=$master_addr

echo "MASTER_ADDR=${MASTER_ADDR} NODES=${SLURM_NNODES} TASKS=${SLURM_NTASKS}"

cd /shared/open_clip
export PYTHONPATH="$PYTHONPATH:$PWD/src"
srun --cpu_bind=v --accel-bind=gn python -u src/training/main.py \
    --save-frequency 1 \
    --report-to tensorboard \
    --train-data="/data/LAION-400M/{00000..41455}.tar" \
    --train-num-samples 400000000 \
    --dataset-type webdataset \
    --warmup 2000 \
    --batch-size=256 \
    --epochs=32 \
    --workers=6 \
    --precision amp \
    --model ViT-B-32 \
    --name "ViT-B-32-Vanilla" \
    --seed 0 \
    --local-loss \
    --gather-with-grad \
    --grad-checkpointing \
    --imagenet-val /data/imagenet/val/
