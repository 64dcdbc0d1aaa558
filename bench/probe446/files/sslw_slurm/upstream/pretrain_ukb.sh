#!/bin/bash
#SBATCH -J ssl-mtl
#SBATCH -A doherty.prj
#SBATCH -p gpu_long
#SBATCH --gres gpu:4
#SBATCH --cpus-per-task 24
#SBATCH --mem 256G
#SBATCH -o logs/mtl-%j.out
#SBATCH -e logs/mtl-%j.err

# Multi-task self-supervised pre-training on the UK Biobank accelerometry (one node, 4 GPUs).

echo "------------------------------------------------"
echo "Run on host: "`hostname`
echo "Operating system: "`uname -s`
echo "Username: "`whoami`
echo "Started at: "`date`
echo "------------------------------------------------"

module load Anaconda3/2020.11
module load CUDA/11.3.1
eval "$(conda shell.bash hook)"
conda activate ssl_env

export NCCL_DEBUG=INFO
export NCCL_SOCKET_IFNAME=ib0
export OMP_NUM_THREADS=6

nvidia-smi --query-gpu=name,memory.total --format=csv

python mtl.py \
    data=ukb \
    task=all \
    augmentation=all \
    model=resnet \
    dataloader=ten_sec \
    runtime.num_epoch=20 \
    runtime.multiprocessing_distributed=true \
    runtime.dist_url=tcp://127.0.0.1:23456 \
    runtime.world_size=1 \
    runtime.rank=0

echo "Finished at: "`date`
