#!/bin/bash
# Multi-GPU QLoRA fine-tuning launcher (single node).
#   NUM_GPUS=4 bash scripts/finetune_qlora.sh meta-llama/Llama-2-13b-hf
set -e

MODEL=${1:-huggyllama/llama-7b}
DATASET=${DATASET:-oasst1}
OUTPUT_DIR=${OUTPUT_DIR:-./output/$(basename $MODEL)-qlora}
NUM_GPUS=${NUM_GPUS:-$(nvidia-smi --list-gpus | wc -l)}
MASTER_PORT=${MASTER_PORT:-29500}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-$(seq -s, 0 $((NUM_GPUS-1)))}
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_ASYNC_ERROR_HANDLING=1
export TORCH_NCCL_BLOCKING_WAIT=0
export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512
export TOKENIZERS_PARALLELISM=false
export WANDB_PROJECT=${WANDB_PROJECT:-qlora}
export OMP_NUM_THREADS=8

mkdir -p "$OUTPUT_DIR"
echo "model=$MODEL dataset=$DATASET gpus=$NUM_GPUS -> $OUTPUT_DIR"
nvidia-smi

python -c "import bitsandbytes, torch; assert torch.cuda.is_available(); print('bnb', bitsandbytes.__version__)"

torchrun --nproc_per_node=$NUM_GPUS --master_port=$MASTER_PORT qlora.py \
    --model_name_or_path $MODEL \
    --use_auth \
    --output_dir $OUTPUT_DIR \
    --logging_steps 10 \
    --save_strategy steps \
    --data_seed 42 \
    --save_steps 500 \
    --save_total_limit 40 \
    --evaluation_strategy steps \
    --eval_dataset_size 1024 \
    --max_eval_samples 1000 \
    --per_device_eval_batch_size 1 \
    --max_new_tokens 32 \
    --dataloader_num_workers 1 \
    --group_by_length \
    --logging_strategy steps \
    --remove_unused_columns False \
    --do_train \
    --do_eval \
    --do_mmlu_eval \
    --lora_r 64 \
    --lora_alpha 16 \
    --lora_modules all \
    --double_quant \
    --quant_type nf4 \
    --bf16 \
    --bits 4 \
    --warmup_ratio 0.03 \
    --lr_scheduler_type constant \
    --gradient_checkpointing \
    --dataset $DATASET \
    --source_max_len 16 \
    --target_max_len 512 \
    --per_device_train_batch_size 1 \
    --gradient_accumulation_steps 16 \
    --max_steps 1875 \
    --eval_steps 187 \
    --learning_rate 0.0002 \
    --adam_beta2 0.999 \
    --max_grad_norm 0.3 \
    --lora_dropout 0.1 \
    --weight_decay 0.0 \
    --optim paged_adamw_32bit \
    --seed 0 \
    --report_to wandb 2>&1 | tee "$OUTPUT_DIR/train.log"

echo "training finished; GPU memory at exit:"
nvidia-smi --query-gpu=index,memory.used --format=csv
