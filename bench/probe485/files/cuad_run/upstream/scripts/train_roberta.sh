#!/bin/bash
# Fine-tune RoBERTa on CUAD (contract clause extraction as SQuAD 2.0-style QA).
# Usage: bash scripts/train_roberta.sh [roberta-base|roberta-large|deberta-v2-xlarge] [num_gpus]
set -e

MODEL=${1:-roberta-base}
NUM_GPUS=${2:-8}
OUTPUT_DIR=./train_models/${MODEL}

# Make NCCL chatty so hangs in the first all-reduce are easy to attribute
export NCCL_DEBUG=INFO
export OMP_NUM_THREADS=8

mkdir -p ${OUTPUT_DIR}

python -m torch.distributed.launch --nproc_per_node=${NUM_GPUS} train.py \
    --output_dir ${OUTPUT_DIR} \
    --model_type roberta \
    --model_name_or_path ${MODEL} \
    --train_file ./data/train_separate_questions.json \
    --predict_file ./data/test.json \
    --do_train \
    --do_eval \
    --version_2_with_negative \
    --learning_rate 1e-4 \
    --num_train_epochs 4 \
    --per_gpu_eval_batch_size=40 \
    --per_gpu_train_batch_size=40 \
    --max_seq_length 512 \
    --max_answer_length 512 \
    --doc_stride 256 \
    --save_steps 1000 \
    --n_best_size 20 \
    --overwrite_output_dir \
    --threads 16 \
    --fp16 \
    --fp16_opt_level O1 \
    2>&1 | tee ${OUTPUT_DIR}/train.log

python evaluate.py --model_path ${OUTPUT_DIR} --test_json ./data/test.json
