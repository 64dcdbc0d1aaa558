#!/bin/bash
# Start one wandb agent per GPU for every sweep id listed in the sweep log.
#
# usage: bash start_sweep_agents.sh <sweep_log> <start_gpu> <num_gpus> [agents_per_gpu]
#   e.g. bash start_sweep_agents.sh all_wandbs/assist2015_dkt.log 0 4 2
#
# The sweep log is produced by `python generate_wandb.py` + `sh all_start.sh`,
# one line per fold: "wandb agent <entity>/<project>/<sweep_id>"
set -e

SWEEP_LOG=${1:-"all_wandbs/sweep.log"}
START_GPU=${2:-0}
NUM_GPUS=${3:-4}
AGENTS_PER_GPU=${4:-1}
LOG_DIR=logs/agents
mkdir -p ${LOG_DIR}

if [ ! -f "${SWEEP_LOG}" ]; then
    echo "sweep log ${SWEEP_LOG} not found"
    exit 1
fi

echo "GPUs on this host:"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv,noheader

# wandb needs the key in the environment when agents run under nohup
export WANDB_API_KEY=$(python -c "import json;print(json.load(open('../configs/wandb.json'))['api_key'])")

mapfile -t AGENTS < <(grep "wandb agent" ${SWEEP_LOG} | awk '{print $NF}')
echo "found ${#AGENTS[@]} sweeps in ${SWEEP_LOG}"

i=0
for sweep in "${AGENTS[@]}"; do
    gpu=$(( START_GPU + (i / AGENTS_PER_GPU) % NUM_GPUS ))
    name=$(echo ${sweep} | tr '/' '_')
    echo "start agent for ${sweep} on gpu ${gpu}"
    CUDA_VISIBLE_DEVICES=${gpu} WANDB_CONSOLE=off nohup wandb agent ${sweep} > ${LOG_DIR}/${name}_gpu${gpu}.log 2>&1 &
    i=$(( i + 1 ))
    sleep 2
done

# a quick single-fold sanity run of dkt on the first card, without wandb
if [ "${RUN_SANITY:-0}" = "1" ]; then
    CUDA_VISIBLE_DEVICES=${START_GPU} python wandb_dkt_train.py --dataset_name=assist2015 --use_wandb=0 --add_uuid=0 --fold=0 \
        > ${LOG_DIR}/sanity_dkt.log 2>&1
fi

echo "all agents started, tail -f ${LOG_DIR}/*.log to follow"
