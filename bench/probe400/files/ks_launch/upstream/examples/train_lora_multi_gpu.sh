#!/usr/bin/env bash
# Launch LoRA training on 2 GPUs of one node with accelerate.
# Run from the repository root:  bash examples/train_lora_multi_gpu.sh
set -e

source venv/bin/activate

export CUDA_VISIBLE_DEVICES=0,1
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True

accelerate launch --num_cpu_threads_per_process 2 --multi_gpu --num_processes 2 --mixed_precision fp16 \
  train_network.py \
  --config_file=examples/lora_sd15_config.toml \
  --dataset_config=examples/dataset_subject.toml \
  --ddp_timeout=60 \
  --ddp_gradient_as_bucket_view
