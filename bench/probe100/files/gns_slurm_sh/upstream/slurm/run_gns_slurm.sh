#!/bin/bash
#SBATCH -J gns_sand
#SBATCH -o gns_sand.o%j
#SBATCH -e gns_sand.e%j
#SBATCH -p gpu-a100
#SBATCH -N 1
#SBATCH -n 1
#SBATCH --gres=gpu:4
#SBATCH -t 48:00:00

# Train GNS on the Sand dataset with 4 GPUs on one node (torch.multiprocessing.spawn inside train.py)

set -e

module reset
module load cuda/11.8
module load cudnn/8.6

source $WORK/venv/gns/bin/activate

export DATASET_NAME="Sand"
export WORK_DIR=${WORK}/gns-runs/${DATASET_NAME}
mkdir -p ${WORK_DIR}/models ${WORK_DIR}/rollouts

# GPU selection and NCCL
export CUDA_VISIBLE_DEVICES=0,1,2,3
export NCCL_DEBUG=INFO
export NCCL_ASYNC_ERROR_HANDLING=1
export CUDA_LAUNCH_BLOCKING=0
export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512

nvidia-smi

python3 -m gns.train \
  --data_path="${WORK}/datasets/${DATASET_NAME}/" \
  --model_path="${WORK_DIR}/models/" \
  --output_path="${WORK_DIR}/rollouts/" \
  --batch_size=2 \
  --n_gpus=4 \
  --ntraining_steps=2000000 \
  --nsave_steps=10000

# Rollout on the test split with the latest checkpoint (single GPU)
python3 -m gns.train \
  --mode="rollout" \
  --data_path="${WORK}/datasets/${DATASET_NAME}/" \
  --model_path="${WORK_DIR}/models/" \
  --output_path="${WORK_DIR}/rollouts/" \
  --model_file="latest" \
  --train_state_file="latest" \
  --cuda_device_number=0
