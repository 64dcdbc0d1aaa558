#!/bin/bash
#SBATCH --job-name=ddppo
#SBATCH --output=logs.ddppo.out
#SBATCH --error=logs.ddppo.err
#SBATCH --gres gpu:8
#SBATCH --nodes 2
#SBATCH --cpus-per-task 10
#SBATCH --ntasks-per-node 8
#SBATCH --mem=480GB
#SBATCH --time=72:00:00
#SBATCH --signal=USR1@90
#SBATCH --requeue
#SBATCH --partition=learnlab

# DD-PPO PointNav training on 2 nodes x 8 GPUs.
# Every SLURM task drives one GPU: the simulator renders on it and the policy trains on it.

export GLOG_minloglevel=2
export HABITAT_SIM_LOG=quiet
export MAGNUM_LOG=quiet

# NCCL: keep the rendezvous on the cluster fabric and print the ring set-up once.
export NCCL_DEBUG=INFO
export NCCL_DEBUG_SUBSYS=INIT
export NCCL_IB_DISABLE=0
export NCCL_SOCKET_IFNAME=ib0

MAIN_ADDR=$(srun --ntasks=1 hostname 2>&1 | tail -n1)
export MAIN_ADDR
export MAIN_PORT=8738

# Uncomment while debugging a crash in a CUDA kernel (serialises every launch)
# export CUDA_LAUNCH_BLOCKING=1

EXP_NAME=${EXP_NAME:-"ddppo_pointnav_gibson"}
CHECKPOINT_DIR="data/new_checkpoints/${EXP_NAME}"
TB_DIR="tb/${EXP_NAME}"
mkdir -p "${CHECKPOINT_DIR}" "${TB_DIR}"

echo "Launching ${EXP_NAME} on ${SLURM_JOB_NUM_NODES} nodes, main node ${MAIN_ADDR}"
srun --ntasks=1 nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv

set -x
srun python -u -m habitat_baselines.run \
    --config-name=pointnav/ddppo_pointnav.yaml \
    habitat_baselines.evaluate=False \
    habitat_baselines.num_environments=4 \
    habitat_baselines.rl.ddppo.distrib_backend=NCCL \
    habitat_baselines.rl.ddppo.sync_frac=0.6 \
    habitat_baselines.rl.ddppo.pretrained=False \
    habitat_baselines.rl.ppo.num_mini_batch=2 \
    habitat_baselines.checkpoint_folder="${CHECKPOINT_DIR}" \
    habitat_baselines.tensorboard_dir="${TB_DIR}" \
    habitat_baselines.total_num_steps=2.5e9 \
    habitat_baselines.num_checkpoints=100 \
    habitat.simulator.habitat_sim_v0.gpu_device_id=0 \
    habitat_baselines.torch_gpu_id=0
