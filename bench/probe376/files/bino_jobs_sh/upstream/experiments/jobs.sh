#!/bin/bash
# Reproduce Table 2 of the paper. Observer and performer each get their own GPU
# (DEVICE_1 / DEVICE_2 in binoculars/detector.py), so expose exactly two devices.

export CUDA_VISIBLE_DEVICES=0,1
export TOKENIZERS_PARALLELISM=false

# CC News
python experiments/run.py \
  --dataset_path datasets/core/cc_news/cc_news-llama2_13.jsonl \
  --machine_text_source "meta-llama-Llama-2-13b-hf" \
  --job_name cc_news-llama2_13

python experiments/run.py \
  --dataset_path datasets/core/cc_news/cc_news-falcon7.jsonl \
  --machine_text_source "tiiuae-falcon-7b" \
  --job_name cc_news-falcon7

# CNN
python experiments/run.py \
  --dataset_path datasets/core/cnn/cnn-llama2_13.jsonl \
  --machine_text_source "meta-llama-Llama-2-13b-hf" \
  --job_name cnn-llama2_13

python experiments/run.py \
  --dataset_path datasets/core/cnn/cnn-falcon7.jsonl \
  --machine_text_source "tiiuae-falcon-7b" \
  --job_name cnn-falcon7

# PubMed
python experiments/run.py \
  --dataset_path datasets/core/pubmed/pubmed-llama2_13.jsonl \
  --machine_text_source "meta-llama-Llama-2-13b-hf" \
  --job_name pubmed-llama2_13

python experiments/run.py \
  --dataset_path datasets/core/pubmed/pubmed-falcon7.jsonl \
  --machine_text_source "tiiuae-falcon-7b" \
  --job_name pubmed-falcon7
