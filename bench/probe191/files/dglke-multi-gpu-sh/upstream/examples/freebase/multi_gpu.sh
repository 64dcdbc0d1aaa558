#!/usr/bin/env bash
# Train TransE_l2 / ComplEx / RotatE on full Freebase (86M nodes, 338M edges)
# with DGL-KE on one 8-GPU machine (p3.16xlarge / DGX-1).
#
# Embeddings live in CPU shared memory (--mix_cpu_gpu); each trainer process
# gathers the rows it needs, computes on its GPU and pushes sparse Adagrad
# updates back asynchronously (--async_update).
#
# usage: bash multi_gpu.sh [model] [num_gpus]
set -euo pipefail

MODEL=${1:-TransE_l2}
NUM_GPUS=${2:-8}
DATA_PATH=${DATA_PATH:-/data/dglke}
SAVE_PATH=${SAVE_PATH:-/ckpts/freebase}
LOG_DIR=${LOG_DIR:-./logs}

export DGLBACKEND=pytorch
export OMP_NUM_THREADS=4

# Use the first NUM_GPUS devices of the machine.
export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((NUM_GPUS - 1)))

AVAILABLE=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
if [ "${AVAILABLE}" -lt "${NUM_GPUS}" ]; then
    echo "requested ${NUM_GPUS} GPUs but only ${AVAILABLE} found" >&2
    exit 1
fi

GPU_IDS=$(seq -s' ' 0 $((NUM_GPUS - 1)))
mkdir -p "${LOG_DIR}" "${SAVE_PATH}"

case "${MODEL}" in
    TransE_l2)
        EXTRA="--hidden_dim 400 --gamma 10 --lr 0.1 --regularization_coef 1e-9"
        ;;
    ComplEx)
        EXTRA="--hidden_dim 400 --gamma 143.0 --lr 0.1 --regularization_coef 2.00E-06"
        ;;
    RotatE)
        EXTRA="--hidden_dim 200 --gamma 12.0 --lr 0.1 -de --regularization_coef 1e-9"
        ;;
    *)
        echo "unknown model ${MODEL}" >&2
        exit 1
        ;;
esac

dglke_train --model_name "${MODEL}" --dataset Freebase --data_path "${DATA_PATH}" \
    --batch_size 1000 --neg_sample_size 200 ${EXTRA} -adv \
    --max_step 300000 --log_interval 10000 --batch_size_eval 1000 --neg_sample_size_eval 1000 \
    --gpu ${GPU_IDS} --mix_cpu_gpu --num_proc "${NUM_GPUS}" --num_thread 4 \
    --async_update --rel_part --force_sync_interval 1000 \
    --test -adv --save_path "${SAVE_PATH}" \
    2>&1 | tee "${LOG_DIR}/${MODEL}_freebase_${NUM_GPUS}gpu.log"

# Keep a snapshot of the GPU state at the end of the run for the benchmark table.
nvidia-smi > "${LOG_DIR}/${MODEL}_nvidia_smi.txt"
