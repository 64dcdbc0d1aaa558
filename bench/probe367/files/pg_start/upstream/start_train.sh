#!/usr/bin/env bash
# usage: sh start_train.sh [model_file_for_retraining]
export PYTHONPATH=`pwd`
export CUDA_VISIBLE_DEVICES=0
MODEL=$1
mkdir -p ../log
python training_ptr_gen/train.py -m $MODEL >& ../log/training_log &
