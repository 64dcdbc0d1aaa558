#!/bin/bash
#SBATCH --job-name=sao-finetune
#SBATCH --partition=a100-80g
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=8
#SBATCH --gres=gpu:8
#SBATCH --cpus-per-task=12
#SBATCH --exclusive
#SBATCH --output=logs/%x_%j.out

# Stable Audio Open fine-tune, 4 nodes x 8 GPUs, DeepSpeed ZeRO-2 via Lightning

module purge
module load cuda/12.1
module load nccl/2.18.3

source /fsx/${USER}/venvs/sat/bin/activate

export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=0
export NCCL_SOCKET_IFNAME=ens
export NCCL_ASYNC_ERROR_HANDLING=1
export CUDA_LAUNCH_BLOCKING=0
export OMP_NUM_THREADS=1
export TOKENIZERS_PARALLELISM=false
export WANDB_PROJECT=stable-audio-open

export MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1)
export MASTER_PORT=12802

echo "Master: ${MASTER_ADDR}:${MASTER_PORT}, nodes: ${SLURM_JOB_NUM_NODES}"
srun --ntasks-per-node=1 nvidia-smi --query-gpu=name,memory.total --format=csv

CKPT_DIR=/fsx/${USER}/checkpoints/sao

srun python3 train.py \
    --dataset-config configs/dataset_configs/s3_wds_example.json \
    --model-config configs/model_configs/txt2audio/stable_audio_open_1_0.json \
    --pretrained-ckpt-path /fsx/${USER}/models/stable-audio-open-1.0/model.safetensors \
    --name sao_finetune \
    --save-dir ${CKPT_DIR} \
    --num-gpus 8 \
    --num-nodes ${SLURM_JOB_NUM_NODES} \
    --batch-size 8 \
    --num-workers 8 \
    --precision 16-mixed \
    --strategy deepspeed \
    --checkpoint-every 5000 \
    --seed 42
