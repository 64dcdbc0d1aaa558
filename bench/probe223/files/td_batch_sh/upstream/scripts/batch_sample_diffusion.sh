#!/bin/bash
# Usage: bash scripts/batch_sample_diffusion.sh configs/sampling.yml outputs_pdb 4 0 0
#   $1 config, $2 result dir, $3 number of workers (one per GPU), $4 this worker's id, $5 start index
# Each worker samples every NODE_ALL-th pocket of the 100-pocket CrossDocked test set.

TOTAL_TASKS=100
BATCH_SIZE=25

if [ $# != 5 ]; then
    echo "Error: 5 arguments required."
    exit 1
fi

CONFIG_FILE=$1
RESULT_PATH=$2
NODE_ALL=$3
NODE_THIS=$4
START_IDX=$5

# pin this worker to one card; the python side always uses cuda:0 of what it sees
export CUDA_VISIBLE_DEVICES=${NODE_THIS}
export OMP_NUM_THREADS=4

for ((i=$START_IDX;i<$TOTAL_TASKS;i++)); do
    NODE_TARGET=$(($i % $NODE_ALL))
    if [ $NODE_TARGET == $NODE_THIS ]; then
        echo "Task ${i} assigned to this worker (${NODE_THIS})"
        python -m scripts.sample_diffusion ${CONFIG_FILE} -i ${i} --batch_size ${BATCH_SIZE} --result_path ${RESULT_PATH} --device cuda:0
    fi
done

nvidia-smi --query-gpu=index,memory.used --format=csv > ${RESULT_PATH}/gpu_mem_worker${NODE_THIS}.csv || true
