#!/bin/bash
# Description: This script demonstrates how to inference a video based on HunyuanVideo model
# on 8 GPUs with xDiT sequence parallelism (Ulysses x Ring).
#
# Supported parallel configurations (1280x720, 129 frames):
#   8 GPUs: --ulysses-degree 8 --ring-degree 1
#   4 GPUs: --ulysses-degree 4 --ring-degree 1
#   2 GPUs: --ulysses-degree 2 --ring-degree 1

export TOKENIZERS_PARALLELISM=false
export NPROC_PER_NODE=8
export ULYSSES_DEGREE=8
export RING_DEGREE=1

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export NCCL_ASYNC_ERROR_HANDLING=1
export TORCH_NCCL_BLOCKING_WAIT=0

# Optional: enable fp8 weights on Hopper/Ada (needs the *_fp8.pt checkpoint)
# FP8_ARGS="--use-fp8 --dit-weight ckpts/hunyuan-video-t2v-720p/transformers/mp_rank_00_model_states_fp8.pt"

torchrun --nproc_per_node=$NPROC_PER_NODE sample_video.py \
	--video-size 1280 720 \
	--video-length 129 \
	--infer-steps 50 \
	--prompt "A cat walks on the grass, realistic style." \
	--flow-reverse \
	--seed 42 \
	--ulysses-degree $ULYSSES_DEGREE \
	--ring-degree $RING_DEGREE \
	$FP8_ARGS \
	--save-path ./results
