#!/bin/bash
# Run SplaTAM on all 8 Replica scenes, two scenes per GPU, 4 GPUs in parallel.
# Usage: bash bash_scripts/replica_eval_all.bash [seed]

SEED=${1:-0}
NUM_GPUS=4
export OMP_NUM_THREADS=4

echo "Visible GPUs:"
nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader

mkdir -p logs/replica
for SCENE_NUM in 0 1 2 3 4 5 6 7
do
    GPU=$((SCENE_NUM % NUM_GPUS))
    echo "Running scene ${SCENE_NUM} on GPU ${GPU} (seed ${SEED})"
    CUDA_VISIBLE_DEVICES=${GPU} SCENE_NUM=${SCENE_NUM} SEED=${SEED} \
        python scripts/splatam.py configs/replica/splatam.py > logs/replica/scene_${SCENE_NUM}.log 2>&1 &
    if [ $(( (SCENE_NUM + 1) % NUM_GPUS )) -eq 0 ]; then
        wait
    fi
done
wait

for SCENE_NUM in 0 1 2 3 4 5 6 7
do
    grep -h "Final Average ATE RMSE" logs/replica/scene_${SCENE_NUM}.log
done
