#!/bin/bash
# DIFUSCO: categorical diffusion on TSP-50, 4 GPUs (A100 40GB), ~1 day.
# Then evaluate on TSP-500 with the sparse (KNN-50) graph on a single GPU.
#
# Usage: STORAGE=/data/difusco bash scripts/tsp50_categorical.sh

export PYTHONPATH="$PWD:$PYTHONPATH"
export CUDA_VISIBLE_DEVICES=0,1,2,3
export WANDB_MODE=${WANDB_MODE:-online}
STORAGE=${STORAGE:-/path/to/storage}

python -u difusco/train.py \
  --task "tsp" \
  --wandb_logger_name "tsp_diffusion_graph_categorical_tsp50" \
  --diffusion_type "categorical" \
  --do_train \
  --do_test \
  --learning_rate 0.0002 \
  --weight_decay 0.0001 \
  --lr_scheduler "cosine-decay" \
  --storage_path "${STORAGE}" \
  --training_split "data/tsp/tsp50_train_concorde.txt" \
  --validation_split "data/tsp/tsp50_test_concorde.txt" \
  --test_split "data/tsp/tsp50_test_concorde.txt" \
  --batch_size 64 \
  --num_epochs 50 \
  --validation_examples 8 \
  --inference_schedule "cosine" \
  --inference_diffusion_steps 50 \
  --fp16

# ---------------------------------------------------------------------------
# Generalisation test: TSP-50 checkpoint on TSP-500, sparse graph, 16x parallel sampling + 2-opt
# ---------------------------------------------------------------------------
CKPT=$(ls -t ${STORAGE}/models/tsp_diffusion_graph_categorical_tsp50/*/checkpoints/last.ckpt | head -n 1)

CUDA_VISIBLE_DEVICES=0 python -u difusco/train.py \
  --task "tsp" \
  --wandb_logger_name "tsp_diffusion_graph_categorical_tsp50_test_tsp500" \
  --diffusion_type "categorical" \
  --do_test \
  --storage_path "${STORAGE}" \
  --training_split "data/tsp/tsp500_train_concorde.txt" \
  --validation_split "data/tsp/tsp500_test_concorde.txt" \
  --test_split "data/tsp/tsp500_test_concorde.txt" \
  --sparse_factor 50 \
  --inference_schedule "cosine" \
  --inference_diffusion_steps 50 \
  --parallel_sampling 16 \
  --two_opt_iterations 5000 \
  --ckpt_path "${CKPT}" \
  --resume_weight_only
