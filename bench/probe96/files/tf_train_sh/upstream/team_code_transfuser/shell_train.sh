#!/bin/bash
#SBATCH --job-name=tfuse_train
#SBATCH --ntasks=1
#SBATCH --nodes=1
#SBATCH --cpus-per-task=32
#SBATCH --partition=gpu-2080ti
#SBATCH --gres=gpu:4
#SBATCH --time=3-00:00
#SBATCH --mem=256G
#SBATCH --output=/mnt/qb/work/geiger/log/%j.out
#SBATCH --error=/mnt/qb/work/geiger/log/%j.err

# Training script for TransFuser on the CARLA dataset (LiDAR + 3 cameras).
# Usage: sbatch shell_train.sh <experiment_id> [extra train.py args]
# Runs on one node with all visible GPUs; see the README for the dataset layout.

set -e

EXP_ID=${1:-transfuser}
shift || true

# print info about the job into the log
scontrol show job $SLURM_JOB_ID || true
nvidia-smi

module load cuda/11.3
source ~/.bashrc
conda activate tfuse

export CARLA_ROOT=${CARLA_ROOT:-/mnt/qb/work/geiger/carla/CARLA_0.9.10.1}
export WORK_DIR=${WORK_DIR:-$HOME/transfuser}
export PYTHONPATH=$PYTHONPATH:${CARLA_ROOT}/PythonAPI/carla
export PYTHONPATH=$PYTHONPATH:${CARLA_ROOT}/PythonAPI/carla/dist/carla-0.9.10-py3.7-linux-x86_64.egg
export PYTHONPATH=$PYTHONPATH:${WORK_DIR}/team_code_transfuser

# dataset is copied to the node-local SSD by the dataloader (diskcache)
export SCRATCH=${SCRATCH:-/scratch_local/$SLURM_JOB_ID}

export OMP_NUM_THREADS=32  # Limits pytorch to spawn at most num cpus cores threads
export OPENBLAS_NUM_THREADS=1  # Shuts off numpy multithreading, to avoid threads spawning other threads.
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=1

NUM_GPUS=$(nvidia-smi --list-gpus | wc -l)
echo "Training ${EXP_ID} on ${NUM_GPUS} GPUs"

LOGDIR=${WORK_DIR}/logs
ROOT_DIR=/mnt/qb/geiger/kchitta31/datasets/carla/pami_v1_dataset_23_11
mkdir -p ${LOGDIR}

CUDA_VISIBLE_DEVICES=0,1,2,3 torchrun --nnodes=1 --nproc_per_node=${NUM_GPUS} --max_restarts=0 \
    --rdzv_id=${SLURM_JOB_ID:-1234576890} --rdzv_backend=c10d \
    ${WORK_DIR}/team_code_transfuser/train.py \
    --id ${EXP_ID} \
    --batch_size 12 \
    --setting all \
    --root_dir ${ROOT_DIR} \
    --logdir ${LOGDIR} \
    --use_target_point_image 1 \
    --parallel_training 1 \
    --sync_batch_norm 0 \
    --zero_redundancy_optimizer 1 \
    --use_disk_cache 1 \
    "$@"

# keep the best checkpoint together with the args for the leaderboard submission
cp ${LOGDIR}/${EXP_ID}/args.txt ${WORK_DIR}/model_ckpt/${EXP_ID}/ 2>/dev/null || true
cp ${LOGDIR}/${EXP_ID}/model_41.pth ${WORK_DIR}/model_ckpt/${EXP_ID}/ 2>/dev/null || true
echo "done: ${EXP_ID}"
