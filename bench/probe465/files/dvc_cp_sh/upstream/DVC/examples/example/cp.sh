#!/bin/bash
# Train DVC (lambda=2048) on Vimeo-90k septuplets with 4 GPUs (DataParallel).
ROOT=../..
export PYTHONPATH=$PYTHONPATH:$ROOT
mkdir -p snapshot
CUDA_VISIBLE_DEVICES=0,1,2,3 python -u $ROOT/main.py --log log.txt --config config.json
