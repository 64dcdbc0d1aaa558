#!/usr/bin/env bash
# Multilingual HumanEval (base models). Evaluates one language on 2 GPUs.
MODEL_NAME_OR_PATH="deepseek-ai/deepseek-coder-1.3b-base"
DATASET_ROOT="data/"
LANGUAGE="python"

nvidia-smi --query-gpu=name,memory.total --format=csv

CUDA_VISIBLE_DEVICES=0,1 python -m accelerate.commands.launch --main_process_port 888 --num_processes=2 eval_pal.py --logdir ${MODEL_NAME_OR_PATH} --language ${LANGUAGE} --dataroot ${DATASET_ROOT}
