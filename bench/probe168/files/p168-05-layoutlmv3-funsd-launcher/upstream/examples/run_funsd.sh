#!/bin/bash
# Fine-tune LayoutLMv3-base on FUNSD (entity labeling) on one 8-GPU node.
#   bash examples/run_funsd.sh [base|large] [output_dir]
set -e

MODEL_SIZE=${1:-base}
OUTPUT_DIR=${2:-./output/layoutlmv3-${MODEL_SIZE}-finetuned-funsd}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export NCCL_DEBUG=WARN
export OMP_NUM_THREADS=4
export TOKENIZERS_PARALLELISM=false

NUM_GPUS=$(echo ${CUDA_VISIBLE_DEVICES} | tr ',' '\n' | wc -l)
MASTER_PORT=${MASTER_PORT:-4398}

if [ "${MODEL_SIZE}" = "large" ]; then
    LR=2e-5
    BS=1
else
    LR=1e-5
    BS=2
fi

python -m torch.distributed.launch \
    --nproc_per_node=${NUM_GPUS} --master_port ${MASTER_PORT} \
    examples/run_funsd_cord.py \
    --dataset_name funsd \
    --do_train --do_eval \
    --model_name_or_path microsoft/layoutlmv3-${MODEL_SIZE} \
    --output_dir ${OUTPUT_DIR} \
    --segment_level_layout 1 --visual_embed 1 --input_size 224 \
    --max_steps 1000 --save_steps -1 --evaluation_strategy steps --eval_steps 100 \
    --learning_rate ${LR} --per_device_train_batch_size ${BS} --gradient_accumulation_steps 1 \
    --dataloader_num_workers 8 \
    --fp16
