#!/usr/bin/env bash
# Train ResShift (and the SinSR student) on one node with 4 A100 GPUs.
# Usage: bash scripts/train_realsr.sh [save_dir] [stage]
set -e

export CUDA_VISIBLE_DEVICES=0,1,2,3
export NCCL_P2P_DISABLE=1        # consumer cards (RTX 3090/4090) hang in all_reduce without this
export NCCL_IB_DISABLE=1
export OMP_NUM_THREADS=8
export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512

NGPUS=$(echo $CUDA_VISIBLE_DEVICES | tr ',' '\n' | wc -l)
SAVE_DIR=${1:-./save_dir/realsr_swinunet}
STAGE=${2:-resshift}

echo "training ${STAGE} on ${NGPUS} GPUs, logs in ${SAVE_DIR}"

if [ "$STAGE" == "resshift" ]; then
    torchrun --standalone --nproc_per_node=$NGPUS --nnodes=1 main.py \
        --cfg_path configs/realsr_swinunet_realesrgan256_journal.yaml \
        --save_dir $SAVE_DIR
else
    # distillation into the one-step SinSR student
    torchrun --standalone --nproc_per_node=$NGPUS --nnodes=1 main_distill.py \
        --cfg_path configs/SinSR.yaml \
        --save_dir $SAVE_DIR
fi
