#!/usr/bin/env bash
# Extract BERT features for the train / dev / test splits.
# Requires the fine-tuned checkpoint from ../pretrained_models/BERT-Pair (see README).
set -e

GPU=${GPU:-2}
BERT=../pretrained_models/BERT-Pair
DATA=../data/gear

export CUDA_VISIBLE_DEVICES=$GPU
echo "Using GPU $GPU ($(nvidia-smi --query-gpu=name --format=csv,noheader -i $GPU))"

for split in train dev test; do
  python extractor.py \
    --input_file $DATA/gear-$split-set-0_001.tsv \
    --output_file ../data/bert/bert-nli-$split-sr-set.tsv \
    --bert_model $BERT \
    --model_checkpoint $BERT/pytorch_model.bin \
    --do_lower_case \
    --max_seq_length 128 \
    --batch_size 32
done
