#!/bin/bash
# Multi-GPU inference: one process per visible GPU, each GPU renders a slice of the
# context windows and rank 0 gathers the noise predictions.
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}

python3 -m magicanimate.pipelines.animation --config configs/prompts/animation.yaml --dist
