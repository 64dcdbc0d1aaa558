#!/bin/bash
# Single-node multi-GPU training of the E2E symbolic regression transformer.
# Usage: bash scripts/train_ddp.sh <exp_name> [n_gpus]
set -e

EXP_NAME=${1:-e2e_sr}
export NGPU=${2:-8}
export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((NGPU-1)))
export OMP_NUM_THREADS=4

echo "Launching ${EXP_NAME} on ${NGPU} GPUs"
nvidia-smi --query-gpu=index,name,memory.total --format=csv

python -m torch.distributed.launch --nproc_per_node=$NGPU train.py \
    --dump_path ./dumped \
    --exp_name ${EXP_NAME} \
    --batch_size 16 \
    --max_input_dimension 10 \
    --n_enc_layers 4 \
    --n_dec_layers 16 \
    --enc_emb_dim 512 \
    --dec_emb_dim 512 \
    --amp 1 \
    --fp16 true \
    --num_workers 10 \
    --eval_on_pmlb false \
    --save_periodic 25
