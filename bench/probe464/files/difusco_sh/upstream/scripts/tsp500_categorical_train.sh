#!/bin/bash
# DIFUSCO, categorical diffusion, TSP-500 with sparse (KNN-50) graphs.
# Trained on 4x A100; fine-tuned from the TSP-100 checkpoint.

export PYTHONPATH="$PWD:$PYTHONPATH"
export CUDA_VISIBLE_DEVICES=0,1,2,3
export WANDB_MODE=offline

STORAGE=${STORAGE:-/data/difusco}

python -u difusco/train.py \
  --task "tsp" \
  --wandb_logger_name "tsp_diffusion_graph_categorical_tsp500" \
  --diffusion_type "categorical" \
  --do_train \
  --do_test \
  --learning_rate 0.0002 \
  --weight_decay 0.0001 \
  --lr_scheduler "cosine-decay" \
  --storage_path "$STORAGE" \
  --training_split "data/tsp/tsp500_train_concorde.txt" \
  --validation_split "data/tsp/tsp500_test_concorde.txt" \
  --test_split "data/tsp/tsp500_test_concorde.txt" \
  --sparse_factor 50 \
  --batch_size 64 \
  --num_epochs 50 \
  --validation_examples 8 \
  --inference_schedule "cosine" \
  --inference_diffusion_steps 50 \
  --two_opt_iterations 1000 \
  --resume_weight_only \
  --ckpt_path "$STORAGE/ckpts/tsp100_categorical.ckpt"
