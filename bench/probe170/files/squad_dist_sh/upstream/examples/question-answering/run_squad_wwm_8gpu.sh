#!/bin/bash
# Fine-tune bert-large-uncased-whole-word-masking on SQuAD v1.1 with 8 x V100 (fp16, apex O1).
# Expected: f1 = 93.15, exact_match = 86.91 (see the question-answering README).
set -euo pipefail

SQUAD_DIR=${SQUAD_DIR:-$HOME/data/squad}
OUT_DIR=${OUT_DIR:-./runs/wwm_uncased_finetuned_squad}

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export NCCL_SOCKET_IFNAME=eth0
export NCCL_P2P_DISABLE=0
export OMP_NUM_THREADS=4

python -m torch.distributed.launch --nproc_per_node=8 ./examples/question-answering/run_squad.py \
    --model_type bert \
    --model_name_or_path bert-large-uncased-whole-word-masking \
    --do_train \
    --do_eval \
    --do_lower_case \
    --train_file "$SQUAD_DIR/train-v1.1.json" \
    --predict_file "$SQUAD_DIR/dev-v1.1.json" \
    --learning_rate 3e-5 \
    --num_train_epochs 2 \
    --max_seq_length 384 \
    --doc_stride 128 \
    --output_dir "$OUT_DIR" \
    --per_gpu_eval_batch_size=3 \
    --per_gpu_train_batch_size=3 \
    --fp16 --fp16_opt_level O1
