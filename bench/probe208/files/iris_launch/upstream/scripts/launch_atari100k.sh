#!/usr/bin/env bash
# Launch the Atari 100k benchmark: one IRIS run per game, round-robin over the local GPUs.
#
#   bash scripts/launch_atari100k.sh [SEED] [NUM_GPUS]
#
# Each run is pinned to a single GPU through CUDA_VISIBLE_DEVICES, so inside the process the
# device is always cuda:0.

set -euo pipefail

SEED=${1:-0}
NUM_GPUS=${2:-$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)}
WANDB_MODE=${WANDB_MODE:-online}

GAMES=(
  Alien Amidar Assault Asterix BankHeist BattleZone Boxing Breakout
  ChopperCommand CrazyClimber DemonAttack Freeway Frostbite Gopher Hero
  Jamesbond Kangaroo Krull KungFuMaster MsPacman Pong PrivateEye Qbert
  RoadRunner Seaquest UpNDown
)

export OMP_NUM_THREADS=4
export MKL_NUM_THREADS=4

mkdir -p logs
i=0
for game in "${GAMES[@]}"; do
  gpu=$(( i % NUM_GPUS ))
  echo "[$(date +%H:%M:%S)] ${game} (seed ${SEED}) -> GPU ${gpu}"
  CUDA_VISIBLE_DEVICES=${gpu} nohup python src/main.py \
    env.train.id=${game}NoFrameskip-v4 \
    common.device=cuda:0 \
    common.seed=${SEED} \
    wandb.mode=${WANDB_MODE} \
    wandb.group=atari100k_seed${SEED} \
    > logs/${game}_seed${SEED}.log 2>&1 &
  i=$(( i + 1 ))
  # do not start more runs than GPUs at once
  if (( i % NUM_GPUS == 0 )); then
    wait
  fi
done
wait
echo "all runs finished"
