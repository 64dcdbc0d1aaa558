#!/bin/bash
# Commands to run this script:
#   sbatch accel.sh
#
#SBATCH --account=fmri
#SBATCH --partition=g40x
#SBATCH --job-name=ms
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=1     # accelerate spawns one process per GPU itself
#SBATCH --gres=gpu:8
#SBATCH --time=32:00:00          # total run time limit (HH:MM:SS)
#SBATCH -e slurms/%j.err        # first create a "slurms" folder in current directory to store logs
#SBATCH -o slurms/%j.out
#SBATCH --comment=medarc
#SBATCH --no-requeue

module load cuda/11.8  # should match torch.version.cuda

source ~/.bashrc
conda activate mindeye

export NUM_GPUS=8  # Set to equal gres=gpu:#!
export GLOBAL_BATCH_SIZE=128  # set to equal gres=gpu:# * 16

# Make sure another job doesnt use same port, here using random number
export MASTER_PORT=$((RANDOM % (19000 - 11000 + 1) + 11000))
export HOSTNAMES=$(scontrol show hostnames "$SLURM_JOB_NODELIST")
export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export COUNT_NODE=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | wc -l)
echo MASTER_ADDR=${MASTER_ADDR}
echo MASTER_PORT=${MASTER_PORT}
echo WORLD_SIZE=$(($NUM_GPUS * $COUNT_NODE))

# NCCL settings for the stability cluster (EFA / ens NICs)
export NCCL_DEBUG=INFO
export NCCL_SOCKET_IFNAME=ens
export NCCL_ASYNC_ERROR_HANDLING=1
export NCCL_PROTO=simple
export TORCH_DISTRIBUTED_DEBUG=DETAIL

model_name="final_subj01_pretrained_40sess_24bs"
echo model_name=${model_name}

cd /weka/proj-fmri/paulscotti/MindEyeV2/src
jupyter nbconvert Train.ipynb --to python
accelerate launch --num_processes=$(($NUM_GPUS * $COUNT_NODE)) --num_machines=$COUNT_NODE \
    --main_process_ip=$MASTER_ADDR --main_process_port=$MASTER_PORT --mixed_precision=fp16 \
    Train.py --data_path=/weka/proj-fmri/shared/mindeyev2_dataset --model_name=${model_name} \
    --subj=1 --batch_size=${GLOBAL_BATCH_SIZE} --max_lr=3e-4 --mixup_pct=.33 --num_epochs=150 \
    --use_prior --prior_scale=30 --clip_scale=1 --blurry_recon --blur_scale=.5 \
    --no-use_image_aug --n_blocks=4 --hidden_dim=1024 --num_sessions=40 --ckpt_interval=999 --ckpt_saving
