#!/bin/bash
# Train global retrieval + reranking on MSLS with 4 GPUs (one node).
# Tested on 4x V100 32GB; use --train_batch_size 2 on 16GB cards.

GPUS=${GPUS:-0,1,2,3}
NUM_GPUS=$(echo $GPUS | tr ',' '\n' | wc -l)
PORT=${PORT:-29501}
DATA=${DATA:-/data/vg_datasets}
OUT=${OUT:-logs/r2former_msls}

export CUDA_VISIBLE_DEVICES=$GPUS
export OMP_NUM_THREADS=4
export NCCL_DEBUG=WARN
export NCCL_P2P_DISABLE=0
export NCCL_IB_DISABLE=1
export NCCL_SOCKET_IFNAME=eth0

mkdir -p $OUT

python -m torch.distributed.launch \
    --nproc_per_node=$NUM_GPUS \
    --master_port=$PORT \
    --use_env \
    train_reranker.py \
    --datasets_folder $DATA \
    --dataset_name msls \
    --backbone deit_small_distilled_patch16_224 \
    --train_batch_size 4 \
    --rerank_batch_size 20 \
    --lr 1e-4 \
    --epochs_num 50 \
    --amp \
    --output_dir $OUT 2>&1 | tee $OUT/train.log

# Finetune on Pitts30k starting from the MSLS model
python -m torch.distributed.launch \
    --nproc_per_node=$NUM_GPUS \
    --master_port=$PORT \
    --use_env \
    train_reranker.py \
    --datasets_folder $DATA \
    --dataset_name pitts30k \
    --resume $OUT/best_model.pth \
    --train_batch_size 4 \
    --lr 1e-5 \
    --epochs_num 20 \
    --amp \
    --output_dir ${OUT}_pitts30k 2>&1 | tee ${OUT}_pitts30k/train.log
