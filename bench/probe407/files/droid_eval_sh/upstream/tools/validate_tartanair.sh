#!/bin/bash

# Runs the TartanAir validation split (hard + easy) on one GPU.
# Usage: ./tools/validate_tartanair.sh [extra args for validate_tartanair.py]

TARTANAIR_PATH=datasets/TartanAir

export CUDA_VISIBLE_DEVICES=0
export OMP_NUM_THREADS=4

python evaluation_scripts/validate_tartanair.py \
    --datapath=$TARTANAIR_PATH \
    --weights=droid.pth \
    --disable_vis $@

echo "done. results written to figures/ and results/"
