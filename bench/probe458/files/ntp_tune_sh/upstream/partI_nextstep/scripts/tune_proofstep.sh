#!/bin/bash
# Fine-tune Pythia-2.8b on Lean 4 (state, tactic) pairs extracted with LeanDojo.
# 8x A100-80GB, ~3 hours.
REPO_DIR=$(cd "$(dirname "$0")/.." && pwd)
TRAIN_FILE=${REPO_DIR}/data/leandojo_benchmark_4/proofstep-train.jsonl
VALID_FILE=${REPO_DIR}/data/leandojo_benchmark_4/proofstep-val.jsonl
MODEL=EleutherAI/pythia-2.8b-deduped
CONFIG=${REPO_DIR}/ntp_python/ds_config.json

OUTDIR=${REPO_DIR}/model/${MODEL}
NUM_STEPS=5000
BS=8
GRAD_ACC=1
LR=1e-5

export NCCL_ASYNC_ERROR_HANDLING=1
export WANDB_PROJECT=ntptutorial

deepspeed --include localhost:0,1,2,3,4,5,6,7 --master_port 29501 ${REPO_DIR}/ntp_python/tune.py \
    --deepspeed ${CONFIG} \
    --model_name_or_path ${MODEL} \
    --train_data_path ${TRAIN_FILE} \
    --valid_data_path ${VALID_FILE} \
    --fp16 False \
    --bf16 True \
    --output_dir ${OUTDIR} \
    --max_steps ${NUM_STEPS} \
    --per_device_train_batch_size ${BS} \
    --per_device_eval_batch_size ${BS} \
    --gradient_accumulation_steps ${GRAD_ACC} \
    --evaluation_strategy "steps" \
    --eval_steps 500 \
    --save_strategy "steps" \
    --save_steps 500 \
    --save_total_limit 1 \
    --learning_rate ${LR} \
    --load_best_model_at_end 1 \
    --weight_decay 0. \
    --warmup_steps 500 \
    --lr_scheduler_type "linear" \
    --logging_steps 10 \
    --logging_dir "$OUTDIR" \
    --report_to="wandb"
