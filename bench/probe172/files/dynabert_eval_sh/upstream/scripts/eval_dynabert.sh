#!/bin/bash
# Evaluate all width/depth sub-networks of a trained DynaBERT on a GLUE task.
# One GPU is enough; pass the GPU id as the 2nd argument.
TASK=${1:-SST-2}
GPU=${2:-0}
GLUE_DIR=${GLUE_DIR:-./data/glue}
MODEL_DIR=${MODEL_DIR:-./output/dynabert/${TASK}}

export CUDA_VISIBLE_DEVICES=${GPU}

for depth in 0.5 0.75 1.0; do
  for width in 0.25 0.5 0.75 1.0; do
    echo "== ${TASK}: depth_mult=${depth} width_mult=${width} =="
    python eval_glue.py \
      --model_type bert \
      --task_name ${TASK} \
      --data_dir ${GLUE_DIR}/${TASK} \
      --model_dir ${MODEL_DIR} \
      --output_dir ${MODEL_DIR}/eval \
      --max_seq_length 128 \
      --per_gpu_eval_batch_size 128 \
      --depth_mult_list ${depth} \
      --width_mult_list ${width}
  done
done
