#!/usr/bin/env bash
# Train / evaluate the CSLR baseline on PHOENIX-2014 (RWTH).
#   bash scripts/train_phoenix2014.sh 0,1        # two cards
#   bash scripts/train_phoenix2014.sh 0 test ./work_dir/baseline/_best_model.pt
set -e

GPUS=${1:-0}
PHASE=${2:-train}
WEIGHTS=${3:-}
WORK_DIR=./work_dir/baseline_res18/
CONFIG=./configs/baseline.yaml

# keep the dataloader workers from fighting for cores
export OMP_NUM_THREADS=4
export MKL_NUM_THREADS=4
export CUDA_VISIBLE_DEVICES=${GPUS}
# cudnn CTC is non-deterministic on Ampere; comment out for exact reproduction
export CUBLAS_WORKSPACE_CONFIG=:4096:8

NUM_GPUS=$(echo ${GPUS} | awk -F',' '{print NF}')
echo "Using ${NUM_GPUS} GPU(s): ${GPUS}"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

if [ ! -d ./preprocess/phoenix2014 ]; then
    echo "Run python preprocess/dataset_preprocess.py --process-image --multiprocessing first"
    exit 1
fi

if [ ! -f ./evaluation/slr_eval/sclite ] && ! command -v sclite >/dev/null 2>&1; then
    echo "sclite not found; falling back to the python WER implementation"
    EVAL_TOOL=python
else
    EVAL_TOOL=sclite
fi

if [ "${PHASE}" == "train" ]; then
    python main.py \
        --config ${CONFIG} \
        --device 0 \
        --work-dir ${WORK_DIR} \
        --evaluate-tool ${EVAL_TOOL} \
        2>&1 | tee ${WORK_DIR%/}.log
else
    python main.py \
        --config ${CONFIG} \
        --device 0 \
        --phase test \
        --load-weights ${WEIGHTS} \
        --work-dir ${WORK_DIR} \
        --evaluate-tool ${EVAL_TOOL}
fi
