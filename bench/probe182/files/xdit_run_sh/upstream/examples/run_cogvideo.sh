#!/bin/bash
set -x

# Launch CogVideoX-5b with USP (Ulysses x Ring) + CFG parallel on one 8-GPU node.
# Usage: bash examples/run_cogvideo.sh [N_GPUS]

export PYTHONPATH=$PWD:$PYTHONPATH

# NCCL tuning for PCIe boxes (L40 / 4090); harmless on NVLink machines
export NCCL_P2P_DISABLE=0
export NCCL_IB_DISABLE=1
export NCCL_DEBUG=WARN
export CUDA_DEVICE_MAX_CONNECTIONS=1
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True

# CogVideoX configuration
SCRIPT="cogvideox_example.py"
MODEL_ID="/cfs/dit/CogVideoX-5b"
INFERENCE_STEP=50

mkdir -p ./results

N_GPUS=${1:-8}
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}

# CogVideoX specific task args
TASK_ARGS="--height 480 --width 720 --num_frames 49"

# CogVideoX parallel configuration
PARALLEL_ARGS="--ulysses_degree 2 --ring_degree 2"
CFG_ARGS="--use_cfg_parallel"

# Uncomment and modify these as needed
# PIPEFUSION_ARGS="--num_pipeline_patch 8"
# OUTPUT_ARGS="--output_type latent"
ENABLE_TILING="--enable_tiling"
# COMPILE_FLAG="--use_torch_compile"

nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv

torchrun --nproc_per_node=$N_GPUS ./examples/$SCRIPT \
--model $MODEL_ID \
$PARALLEL_ARGS \
$TASK_ARGS \
$PIPEFUSION_ARGS \
$OUTPUT_ARGS \
--num_inference_steps $INFERENCE_STEP \
--warmup_steps 0 \
--prompt "A small dog." \
$CFG_ARGS \
$PARALLLEL_VAE \
$ENABLE_TILING \
$COMPILE_FLAG
