#!/usr/bin/env bash
# Fine-tune VideoMAE ViT-B/16 on Kinetics-400: 4 nodes x 8 GPUs (A100 80GB), 90 epochs.
#SBATCH --job-name=videomae_ft_k400
#SBATCH --partition=video
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=8
#SBATCH --gres=gpu:8
#SBATCH --cpus-per-task=10
#SBATCH --mem=0
#SBATCH --time=72:00:00
#SBATCH --output=logs/%x-%j.out

set -x

export MASTER_PORT=${MASTER_PORT:-12320}
export MASTER_ADDR=$(scontrol show hostname "$SLURM_NODELIST" | head -n1)
export OMP_NUM_THREADS=1
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7

# NCCL over InfiniBand
export NCCL_DEBUG=INFO
export NCCL_SOCKET_IFNAME=ib0
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3
export NCCL_IB_GID_INDEX=3
export NCCL_ASYNC_ERROR_HANDLING=1
export CUDA_LAUNCH_BLOCKING=${DEBUG:-0}

OUTPUT_DIR='work_dir/videomae_vit_base_patch16_224_k400_ft'
DATA_PATH='data/kinetics400/lists'
MODEL_PATH='pretrained/videomae_vit_base_k400_pt_1600e.pth'

mkdir -p logs ${OUTPUT_DIR}

# one task per GPU; utils.init_distributed_mode reads SLURM_PROCID / SLURM_LOCALID
srun --kill-on-bad-exit=1 python -u run_class_finetuning.py \
    --model vit_base_patch16_224 \
    --data_set Kinetics-400 \
    --nb_classes 400 \
    --data_path ${DATA_PATH} \
    --finetune ${MODEL_PATH} \
    --log_dir ${OUTPUT_DIR} \
    --output_dir ${OUTPUT_DIR} \
    --batch_size 8 \
    --num_sample 2 \
    --input_size 224 \
    --short_side_size 224 \
    --save_ckpt_freq 10 \
    --num_frames 16 \
    --sampling_rate 4 \
    --opt adamw \
    --lr 1e-3 \
    --opt_betas 0.9 0.999 \
    --weight_decay 0.05 \
    --layer_decay 0.75 \
    --epochs 90 \
    --dist_eval \
    --test_num_segment 5 \
    --test_num_crop 3 \
    --enable_deepspeed

# record which GPUs the job ran on
nvidia-smi --query-gpu=index,name,memory.used --format=csv
