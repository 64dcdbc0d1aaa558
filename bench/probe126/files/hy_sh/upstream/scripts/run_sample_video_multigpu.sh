#!/bin/bash
# Description: This script demonstrates how to inference a video based on HunyuanVideo model
#              on 8 GPUs with xDiT (Ulysses x Ring sequence parallelism).

export TOKENIZERS_PARALLELISM=false
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7

export NPROC_PER_NODE=8
export ULYSSES_DEGREE=8
export RING_DEGREE=1

# Supported Parallel Configurations
# |     --video-size     | --video-length | --ulysses-degree x --ring-degree | --nproc_per_node |
# |----------------------|----------------|----------------------------------|------------------|
# | 1280 720 or 720 1280 | 129            | 8x1,4x2,2x4,1x8                  | 8                |
# | 1280 720 or 720 1280 | 129            | 1x5                              | 5                |
# | 1280 720 or 720 1280 | 129            | 4x1,2x2,1x4                      | 4                |
# | 1280 720 or 720 1280 | 129            | 3x1,1x3                          | 3                |
# | 1280 720 or 720 1280 | 129            | 2x1,1x2                          | 2                |
# | 1104 832 or 832 1104 | 129            | 4x1,2x2,1x4                      | 4                |
# | 960 960              | 129            | 6x1,3x2,2x3,1x6                  | 6                |
# | 832 624 or 624 832   | 129            | 4x1,2x2,1x4,8x1                  | 8                |

torchrun --nproc_per_node=$NPROC_PER_NODE sample_video.py \
	--video-size 1280 720 \
	--video-length 129 \
	--infer-steps 50 \
	--prompt "A cat walks on the grass, realistic style." \
	--flow-reverse \
	--seed 42 \
	--ulysses-degree $ULYSSES_DEGREE \
	--ring-degree $RING_DEGREE \
	--save-path ./results
