#!/bin/bash
#SBATCH --job-name=tfuse_train
#SBATCH --ntasks=1
#SBATCH --nodes=1
#SBATCH --cpus-per-task=64
#SBATCH --partition=gpu-2080ti
#SBATCH --gres=gpu:8
#SBATCH --time=3-00:00
#SBATCH --mem=400G
#SBATCH --output=/mnt/qb/work/geiger/%u/slurmlogs/%x_%j.out
#SBATCH --error=/mnt/qb/work/geiger/%u/slurmlogs/%x_%j.err

# print info about current job
scontrol show job $SLURM_JOB_ID

export CARLA_ROOT=/mnt/qb/work/geiger/${USER}/carla/carla_0_9_10
export WORK_DIR=/mnt/qb/work/geiger/${USER}/transfuser
export PYTHONPATH=$PYTHONPATH:${CARLA_ROOT}/PythonAPI/carla
export PYTHONPATH=$PYTHONPATH:${WORK_DIR}/team_code_transfuser

source ~/.bashrc
conda activate tfuse
cd ${WORK_DIR}/team_code_transfuser

export OMP_NUM_THREADS=64  # Limits pytorch to spawn at most num cpus cores threads
export OPENBLAS_NUM_THREADS=1  # Shuts off numpy multithreading, to avoid threads spawning other threads.
export NCCL_DEBUG=INFO  # print which network interface NCCL picked, useful when the job hangs in init

# Effective batch size is 12 * 8 GPUs = 96
CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 torchrun --nnodes=1 --nproc_per_node=8 --max_restarts=0 --rdzv_id=1234576890 --rdzv_backend=c10d \
    train.py --id transfuser --batch_size 12 --setting all \
    --root_dir /mnt/qb/work/geiger/${USER}/datasets/transfuser_23_11 \
    --logdir /mnt/qb/work/geiger/${USER}/logs \
    --use_target_point_image 1 --use_velocity 0 --n_layer 4 \
    --parallel_training 1 --sync_batch_norm 0 --zero_redundancy_optimizer 1 --use_disk_cache 1
