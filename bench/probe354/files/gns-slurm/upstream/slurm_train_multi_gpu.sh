#!/bin/bash
#SBATCH -J gns-sand3d
#SBATCH -o logs/gns-sand3d.o%j
#SBATCH -e logs/gns-sand3d.e%j
#SBATCH -p gpu-a100
#SBATCH -N 1
#SBATCH -n 1
#SBATCH --gres=gpu:4
#SBATCH -t 48:00:00
#SBATCH -A BCS20003

# Multi-GPU (single node) training of the GNS on the Sand-3D dataset.
# One process per GPU is spawned by torch.multiprocessing inside gns/train.py.

set -e

module reset
module load cuda/11.8

source venv-gns/bin/activate

export DATASET_NAME="Sand-3D"
export WORK_DIR=${SCRATCH}/gns
export DATA_PATH=${WORK_DIR}/datasets/${DATASET_NAME}/
export MODEL_PATH=${WORK_DIR}/models/${DATASET_NAME}/
export ROLLOUT_PATH=${WORK_DIR}/rollouts/${DATASET_NAME}/
mkdir -p ${MODEL_PATH} ${ROLLOUT_PATH} logs

# Use the four A100s on the node
export CUDA_VISIBLE_DEVICES=0,1,2,3
export NGPUS=4

# NCCL tuning for single-node runs
export NCCL_DEBUG=WARN
export NCCL_P2P_LEVEL=NVL
export NCCL_ASYNC_ERROR_HANDLING=1
export OMP_NUM_THREADS=8

nvidia-smi

python3 -m gns.train \
    --data_path=${DATA_PATH} \
    --model_path=${MODEL_PATH} \
    --output_path=${ROLLOUT_PATH} \
    --batch_size=2 \
    --noise_std=6.7e-4 \
    --ntraining_steps=5000000 \
    --nsave_steps=10000 \
    --n_gpus=${NGPUS} \
    --log_gpu_memory

# Roll out the latest checkpoint on the first GPU
python3 -m gns.train \
    --mode="rollout" \
    --data_path=${DATA_PATH} \
    --model_path=${MODEL_PATH} \
    --output_path=${ROLLOUT_PATH} \
    --model_file="latest" \
    --train_state_file="latest" \
    --cuda_device_number=0

python3 -m gns.render_rollout --output_mode="gif" --rollout_dir=${ROLLOUT_PATH} --rollout_name="rollout_ex0"
