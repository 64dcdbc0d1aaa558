#!/bin/bash
# Zero-shot entity linking (Zeshel, Logeswaran et al. 2019) with BLINK:
#   1. train the bi-encoder  2. dump top-64 candidates  3. train the cross-encoder
#
# Usage: bash examples/zeshel/train_zeshel.sh [GPU_IDS]
# Tested on 8x V100-32GB; on smaller cards halve the batch sizes.

GPUS=${1:-0,1,2,3,4,5,6,7}
export CUDA_VISIBLE_DEVICES=$GPUS
export PYTHONPATH=.

DATA=data/zeshel/blink_format
OUT=models/zeshel
mkdir -p $OUT

echo "== visible GPUs =="
nvidia-smi -L

# 1. bi-encoder (in-batch negatives, DataParallel over all visible GPUs)
python blink/biencoder/train_biencoder.py \
  --data_path $DATA \
  --output_path $OUT/biencoder \
  --learning_rate 1e-05 --num_train_epochs 5 \
  --max_context_length 128 --max_cand_length 128 \
  --train_batch_size 128 --eval_batch_size 64 \
  --bert_model bert-large-uncased \
  --type_optimization all_encoder_layers --data_parallel \
  --fp16 --fp16_opt_level O1

# 2. candidate generation with the trained bi-encoder
python blink/biencoder/eval_biencoder.py \
  --path_to_model $OUT/biencoder/pytorch_model.bin \
  --data_path $DATA \
  --output_path $OUT \
  --encode_batch_size 256 --eval_batch_size 1 \
  --top_k 64 --save_topk_result \
  --bert_model bert-large-uncased \
  --mode train,valid,test \
  --zeshel True --data_parallel

# 3. cross-encoder; one process per GPU would be faster but train_cross.py only supports DataParallel
CUDA_VISIBLE_DEVICES=0,1,2,3 python blink/crossencoder/train_cross.py \
  --data_path $OUT/top64_candidates/ \
  --output_path $OUT/crossencoder \
  --learning_rate 2e-05 --num_train_epochs 5 \
  --max_context_length 128 --max_cand_length 128 \
  --train_batch_size 2 --eval_batch_size 2 \
  --bert_model bert-large-uncased \
  --type_optimization all_encoder_layers \
  --add_linear --data_parallel \
  --zeshel True
