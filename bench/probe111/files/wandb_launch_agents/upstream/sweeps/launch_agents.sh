#!/usr/bin/env bash
# Start one W&B sweep agent per GPU on this machine.
#
#   bash sweeps/launch_agents.sh my-team/vision-sweeps/abc123xy [COUNT_PER_AGENT]
#
# Every agent is pinned to one card with CUDA_VISIBLE_DEVICES, so train.py
# always sees its GPU as cuda:0. Logs go to logs/sweep-<id>/agent-<gpu>.log.
set -euo pipefail

SWEEP_ID=${1:?usage: launch_agents.sh <entity/project/sweep_id> [count]}
COUNT=${2:-}
LOG_DIR="logs/sweep-$(basename "$SWEEP_ID")"
mkdir -p "$LOG_DIR"

# Which GPUs to use: honour an existing CUDA_VISIBLE_DEVICES, else take all of them.
if [[ -n "${CUDA_VISIBLE_DEVICES:-}" ]]; then
  IFS=',' read -r -a GPUS <<< "$CUDA_VISIBLE_DEVICES"
else
  mapfile -t GPUS < <(nvidia-smi --query-gpu=index --format=csv,noheader)
fi
echo "Launching ${#GPUS[@]} agents for sweep $SWEEP_ID on GPUs: ${GPUS[*]}"

# Skip cards that are already busy (more than 1 GiB in use).
free_gpu() {
  local used
  used=$(nvidia-smi --id="$1" --query-gpu=memory.used --format=csv,noheader,nounits)
  [[ "$used" -lt 1024 ]]
}

export WANDB_DIR=${WANDB_DIR:-/scratch/$USER/wandb}
export WANDB_CONSOLE=off
export OMP_NUM_THREADS=8

PIDS=()
for gpu in "${GPUS[@]}"; do
  if ! free_gpu "$gpu"; then
    echo "GPU $gpu busy, skipping"
    continue
  fi
  CUDA_VISIBLE_DEVICES=$gpu nohup wandb agent ${COUNT:+--count "$COUNT"} "$SWEEP_ID" \
    > "$LOG_DIR/agent-$gpu.log" 2>&1 &
  PIDS+=($!)
  echo "agent on GPU $gpu -> pid ${PIDS[-1]}"
  sleep 5   # let each agent register before the next one asks the controller for a run
done

trap 'echo "stopping agents"; kill "${PIDS[@]}" 2>/dev/null || true' INT TERM
wait
