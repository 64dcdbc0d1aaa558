#!/usr/bin/env bash
# Run Code Llama completion / infilling examples.
# Model parallel (MP) values: 7B -> 1, 13B -> 2, 34B -> 4, 70B -> 8.
# One process per GPU; torchrun sets LOCAL_RANK / WORLD_SIZE for llama/generation.py.
set -euo pipefail

MODEL=${MODEL:-CodeLlama-7b}
CKPT_DIR=${CKPT_DIR:-./${MODEL}}
TOKENIZER=${TOKENIZER:-${CKPT_DIR}/tokenizer.model}

case "${MODEL}" in
  *7b*)  MP=1 ;;
  *13b*) MP=2 ;;
  *34b*) MP=4 ;;
  *70b*) MP=8 ;;
  *) echo "unknown model ${MODEL}"; exit 1 ;;
esac

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-$(seq -s, 0 $((MP-1)))}
export NCCL_P2P_DISABLE=${NCCL_P2P_DISABLE:-0}
export OMP_NUM_THREADS=8

nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv

torchrun --nproc_per_node ${MP} example_completion.py \
    --ckpt_dir ${CKPT_DIR} \
    --tokenizer_path ${TOKENIZER} \
    --max_seq_len 256 --max_batch_size 4

torchrun --nproc_per_node ${MP} example_infilling.py \
    --ckpt_dir ${CKPT_DIR} \
    --tokenizer_path ${TOKENIZER} \
    --max_seq_len 192 --max_batch_size 4
