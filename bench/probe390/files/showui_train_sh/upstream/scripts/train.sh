#!/bin/bash
# ShowUI-2B grounding fine-tuning on showui-desktop / showui-web / AMEX (8 x A100-80G, ~1 day).
_DATA_DIR=${_DATA_DIR:-/blob/v-lqinghong/data/GUI_database}
_SAVE_DIR=${_SAVE_DIR:-/blob/v-lqinghong/experiments/ShowUI}
_MODEL_ID=${_MODEL_ID:-Qwen/Qwen2-VL-2B-Instruct}
_EXP_ID=${_EXP_ID:-showui_2b_desktop_web_amex}

export WANDB_MODE=${WANDB_MODE:-offline}
export NCCL_P2P_LEVEL=NVL
export TOKENIZERS_PARALLELISM=false

deepspeed --include localhost:0,1,2,3,4,5,6,7 --master_port 1234 train.py \
  --wandb_key=${WANDB_KEY} \
  --model_id=${_MODEL_ID} \
  --version=${_MODEL_ID} \
  --dataset_dir=${_DATA_DIR} \
  --log_base_dir=${_SAVE_DIR} \
  --epochs=50 \
  --steps_per_epoch=100 \
  --batch_size=1 \
  --grad_accumulation_steps=2 \
  --model_max_length=8192 \
  --exp_id=${_EXP_ID} \
  --train_ratio="1,1,1" \
  --train_dataset="showui-desktop,showui-web,amex" \
  --train_json="hf_train,hf_train_rawelement,hf_train" \
  --val_dataset="screenspot" \
  --precision="bf16" \
  --ds_zero="zero2" \
  --gradient_checkpointing \
  --lm_skip_ratio=0.5 \
  --lm_skip_layer='[1,28,0]' \
  --num_turn=100 \
  --random_sample \
  --record_sample \
  --lr=0.0001 \
  --min_visual_tokens=256 \
  --max_visual_tokens=1344 \
  --uigraph_diff=1 \
  --uimask_ratio=0.5 \
  --lora_r=32 \
  --lora_alpha=64 \
  --warmup_steps=100
