#!/bin/bash
# Lifelong editing with WISE / GRACE / MEMIT on ZsRE and hallucination (SelfCheckGPT) data.
# Each method runs on its own GPU so the three jobs can go in parallel on one 8-GPU node.
#
#   bash examples/run_wise_editing.sh llama-7b 1000
#
MODEL=${1:-llama-7b}
N_EDITS=${2:-1000}
DATA_DIR=${DATA_DIR:-./data/wise}
OUT_DIR=${OUT_DIR:-./outputs/wise_${MODEL}_${N_EDITS}}
mkdir -p ${OUT_DIR}

# Keep tokenizer threads from fighting with the dataloader workers
export TOKENIZERS_PARALLELISM=false
export HF_HOME=${HF_HOME:-./hugging_cache}
# Report CUDA errors at the failing kernel rather than at the next sync
export CUDA_LAUNCH_BLOCKING=1

nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

run_method () {
    local METHOD=$1
    local GPU=$2
    local DS=$3
    echo "[$(date +%H:%M:%S)] ${METHOD} on ${DS} -> GPU ${GPU}"
    CUDA_VISIBLE_DEVICES=${GPU} python run_wise_editing.py \
        --editing_method=${METHOD} \
        --hparams_dir=../hparams/${METHOD}/${MODEL}.yaml \
        --data_dir=${DATA_DIR} \
        --ds_size=${N_EDITS} \
        --data_type=${DS} \
        --sequential_edit \
        > ${OUT_DIR}/${METHOD}_${DS}.log 2>&1 &
}

run_method WISE 0 ZsRE
run_method GRACE 1 ZsRE
run_method MEMIT 2 ZsRE
run_method WISE 3 hallucination
run_method GRACE 4 hallucination

wait
echo "All jobs finished; logs in ${OUT_DIR}"
grep -h "Metrics Summary" ${OUT_DIR}/*.log || true
