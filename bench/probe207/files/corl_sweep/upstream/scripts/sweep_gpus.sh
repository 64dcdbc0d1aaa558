#!/usr/bin/env bash
# Launch the D4RL locomotion grid for one algorithm, round-robin over the GPUs
# of this box. Two runs share a GPU (the MLP nets are tiny), so with 8 cards
# we keep 16 processes in flight.
#
#   bash scripts/sweep_gpus.sh iql "0 1 2 3 4 5 6 7"
#   bash scripts/sweep_gpus.sh cql "0 1"
set -e

ALGO=${1:-iql}
GPUS=(${2:-0 1 2 3 4 5 6 7})
RUNS_PER_GPU=${RUNS_PER_GPU:-2}
NUM_GPUS=${#GPUS[@]}

TASKS=(halfcheetah hopper walker2d)
DATASETS=(medium medium_replay medium_expert)
SEEDS=(0 1 2 3)

export WANDB_PROJECT=${WANDB_PROJECT:-CORL}
export WANDB_GROUP="${ALGO}-sweep-$(date +%Y%m%d)"
export MUJOCO_GL=egl
export OMP_NUM_THREADS=2

mkdir -p logs/${ALGO}

i=0
for task in "${TASKS[@]}"; do
  for dataset in "${DATASETS[@]}"; do
    for seed in "${SEEDS[@]}"; do
      gpu=${GPUS[$((i % NUM_GPUS))]}
      config=configs/offline/${ALGO}/${task}/${dataset}_v2.yaml
      log=logs/${ALGO}/${task}_${dataset}_seed${seed}.log
      echo "[gpu ${gpu}] ${config} seed=${seed}"
      CUDA_VISIBLE_DEVICES=${gpu} nohup python algorithms/offline/${ALGO}.py \
        --config_path=${config} \
        --seed=${seed} \
        --device=cuda \
        > ${log} 2>&1 &
      i=$((i + 1))
      # throttle: wait for the current wave before filling the cards again
      if (( i % (NUM_GPUS * RUNS_PER_GPU) == 0 )); then
        wait
      fi
    done
  done
done
wait
echo "all ${i} runs finished"
