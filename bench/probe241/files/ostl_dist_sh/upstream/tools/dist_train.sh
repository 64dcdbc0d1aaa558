#!/usr/bin/env bash
# Usage: bash tools/dist_train.sh configs/sevir/simvp/SimVP_gSTA.py 4 --ex_name sevir_simvp_gsta [other args]
#   GPU_IDS=4,5,6,7 PORT=29501 bash tools/dist_train.sh ${CFG} 4

PYTHON=${PYTHON:-"python"}
CFG=$1
GPUS=$2
PY_ARGS=${@:3}
PORT=${PORT:-29500}
GPU_IDS=${GPU_IDS:-"0,1,2,3,4,5,6,7"}

WORK_DIR=$(echo ${CFG%.*} | sed -e "s/configs/work_dirs/g")/

CUDA_VISIBLE_DEVICES=$GPU_IDS \
PYTHONPATH="$(dirname $0)/..":$PYTHONPATH \
$PYTHON -m torch.distributed.launch --nproc_per_node=$GPUS --master_port=$PORT \
    tools/train.py --dist \
    --config_file $CFG \
    --ex_name $WORK_DIR --launcher="pytorch" ${PY_ARGS}
