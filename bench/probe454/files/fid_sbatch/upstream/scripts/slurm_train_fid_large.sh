#!/bin/bash
#SBATCH --job-name=fid_large_tqa
#SBATCH --output=logs/%x-%j.out
#SBATCH --error=logs/%x-%j.err
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=8
#SBATCH --gres=gpu:8
#SBATCH --cpus-per-task=10
#SBATCH --mem=400G
#SBATCH --time=72:00:00
#SBATCH --signal=USR1@140
#SBATCH --open-mode=append

# FiD-large on TriviaQA, 4 nodes x 8 GPUs, one task per GPU (SLURM sets SLURM_LOCALID/SLURM_PROCID).
module purge
module load anaconda3
module load cuda/11.0
source activate fid

mkdir -p logs
port=$(shuf -i 15000-16000 -n 1)

srun --label python train_reader.py \
    --main_port $port \
    --train_data open_domain_data/TQA/train.json \
    --eval_data open_domain_data/TQA/dev.json \
    --model_size large \
    --per_gpu_batch_size 1 \
    --n_context 100 \
    --text_maxlength 250 \
    --use_checkpoint \
    --lr 0.00005 \
    --optim adamw \
    --scheduler linear \
    --weight_decay 0.01 \
    --total_steps 10000 \
    --warmup_steps 1000 \
    --accumulation_steps 2 \
    --name tqa_reader_large \
    --checkpoint_dir checkpoint
