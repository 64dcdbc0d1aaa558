#!/bin/bash
# ChartAssistant stage-2 (multitask instruction tuning) on SPHINX-style llama_ens.
# Usage: bash exps/finetune/mm/chartast_stage2.sh <pretrained_stage1_dir> <nnodes> <node_rank> <master_addr>

pretrained_path=$1
pretrained_type=consolidated
llama_config="$2"
tokenizer_path="$3"
data_config=configs/data/finetune/mm/chartast_stage2.yaml

NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29500}
GPUS_PER_NODE=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)

data_parallel=sdp
model_parallel=2

exp_name=finetune/mm/chartast_stage2
echo "exp name: $exp_name"
mkdir -p output/"$exp_name"

export OMP_NUM_THREADS=4
export NCCL_IB_TIMEOUT=22
export NCCL_DEBUG=WARN

torchrun --nnodes=$NNODES --node_rank=$NODE_RANK --nproc_per_node=$GPUS_PER_NODE \
    --master_addr=$MASTER_ADDR --master_port=$MASTER_PORT \
    main_finetune.py \
    --output_dir output/"$exp_name" --epochs 1 --warmup_epochs 0.03 \
    --batch_size 4 --accum_iter 4 --num_workers 4 \
    --max_words 2048 \
    --lr 0.00002 --min_lr 0 --clip_grad 8 --weight_decay 0 \
    --data_parallel "$data_parallel" --model_parallel_size "$model_parallel" --checkpointing \
    --llama_type llama_ens --llama_config $llama_config --tokenizer_path "$tokenizer_path" \
    --pretrained_path "$pretrained_path" --pretrained_type="$pretrained_type" \
    --dialog \
    --data_config $data_config \
    --image_transform padded_resize \
    --precision bf16 \
    2>&1 | tee -a output/"$exp_name"/output.log

echo "exp name: $exp_name"
