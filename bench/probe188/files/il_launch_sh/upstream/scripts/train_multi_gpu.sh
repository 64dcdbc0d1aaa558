#!/usr/bin/env bash
# Multi-GPU PPO training for Isaac Lab locomotion tasks on a single node.
#
# Each rank simulates NUM_ENVS environments on its own GPU and the rsl_rl runner
# all-reduces gradients over NCCL, so the effective batch is NUM_GPUS x NUM_ENVS.
#
#   NUM_GPUS=4 TASK=Isaac-Velocity-Rough-Anymal-D-v0 bash scripts/train_multi_gpu.sh
set -euo pipefail

TASK=${TASK:-Isaac-Velocity-Rough-Anymal-D-v0}
NUM_GPUS=${NUM_GPUS:-4}
NUM_ENVS=${NUM_ENVS:-4096}
MAX_ITERS=${MAX_ITERS:-3000}
ISAACLAB_PATH=${ISAACLAB_PATH:-$HOME/IsaacLab}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
export NCCL_DEBUG=WARN
export NCCL_P2P_DISABLE=0
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export OMP_NUM_THREADS=8

# Isaac Sim EULA / telemetry for headless containers
export ACCEPT_EULA=Y
export PRIVACY_CONSENT=Y

cd "${ISAACLAB_PATH}"

echo "Launching ${NUM_GPUS} ranks for ${TASK} (${NUM_ENVS} envs per rank)"

./isaaclab.sh -p -m torch.distributed.run \
    --nnodes=1 \
    --nproc_per_node=${NUM_GPUS} \
    --rdzv_backend=c10d \
    --rdzv_endpoint=localhost:29500 \
    scripts/reinforcement_learning/rsl_rl/train.py \
    --task "${TASK}" \
    --num_envs ${NUM_ENVS} \
    --max_iterations ${MAX_ITERS} \
    --headless \
    --distributed \
    agent.logger=tensorboard
