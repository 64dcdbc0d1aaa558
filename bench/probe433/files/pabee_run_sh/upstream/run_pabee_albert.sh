#!/bin/bash
# Fine-tune ALBERT-base with PABEE on a GLUE task, then sweep patience at inference.
# Usage: bash run_pabee_albert.sh <TASK> [GPU_ID]

TASK_NAME=${1:-MRPC}
GPU=${2:-0}
export GLUE_DIR=${GLUE_DIR:-/path/to/glue_data}
export CUDA_VISIBLE_DEVICES=$GPU

OUT=./output/albert-base-v2/${TASK_NAME}

python ./run_glue_with_pabee.py \
  --model_type albert \
  --model_name_or_path albert-base-v2 \
  --task_name $TASK_NAME \
  --do_train \
  --do_eval \
  --do_lower_case \
  --data_dir "$GLUE_DIR/$TASK_NAME" \
  --max_seq_length 128 \
  --per_gpu_train_batch_size 32 \
  --per_gpu_eval_batch_size 32 \
  --learning_rate 2e-5 \
  --save_steps 50 \
  --logging_steps 50 \
  --num_train_epochs 5 \
  --output_dir $OUT \
  --evaluate_during_training

# PABEE inference needs batch size 1 (per-sample exit decisions)
python ./run_glue_with_pabee.py \
  --model_type albert \
  --model_name_or_path $OUT \
  --task_name $TASK_NAME \
  --do_eval \
  --do_lower_case \
  --data_dir "$GLUE_DIR/$TASK_NAME" \
  --output_dir $OUT \
  --max_seq_length 128 \
  --per_gpu_eval_batch_size 1 \
  --patience 3,4,5,6,7,8 \
  --eval_all_checkpoints
