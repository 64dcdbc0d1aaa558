#!/bin/bash
# Grid-search hyper-parameters of several MMSA models in parallel, one model per GPU.
# Usage: bash scripts/run_tune.sh mosi 50
#
# Each model gets its own card through CUDA_VISIBLE_DEVICES, so inside the
# process the card is always gpu 0 (hence "-g 0" below).
set -e

DATASET=${1:-mosi}
TUNE_TIMES=${2:-50}
LOG_DIR=./logs/tune_${DATASET}
RES_DIR=./results/tune_${DATASET}
mkdir -p ${LOG_DIR} ${RES_DIR}

MODELS=(tfn lmf mult misa self_mm mmim)
GPUS=(0 1 2 3 4 5)
# minimum free memory (MiB) before we start a job on a card
MAX_USED_MB=2000

wait_for_gpu() {
  # block until the given GPU has less than MAX_USED_MB in use
  local gpu=$1
  while true; do
    used=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i ${gpu})
    if [ "${used}" -lt ${MAX_USED_MB} ]; then
      break
    fi
    echo "GPU ${gpu} busy (${used} MiB used), waiting..."
    sleep 60
  done
}

for i in "${!MODELS[@]}"; do
  model=${MODELS[$i]}
  gpu=${GPUS[$i]}
  wait_for_gpu ${gpu}
  echo "[$(date '+%F %T')] tuning ${model} on ${DATASET} with GPU ${gpu}"
  CUDA_VISIBLE_DEVICES=${gpu} nohup python -m MMSA -m ${model} -d ${DATASET} -t --tune-times ${TUNE_TIMES} \
      -g 0 --num-workers 4 --log-dir ${LOG_DIR} --res-save-dir ${RES_DIR} > ${LOG_DIR}/${model}.out 2>&1 &
  # give the job time to allocate its memory before polling the next card
  sleep 30
done

wait
echo "all tuning jobs finished, results in ${RES_DIR}"
