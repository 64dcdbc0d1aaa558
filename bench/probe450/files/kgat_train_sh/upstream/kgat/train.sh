#!/bin/bash
# Train KGAT on the FEVER retrieval output (BERT-base).
# The default setting uses a single GPU; effective batch size = 8 x 4 (gradient accumulation).

CUDA_VISIBLE_DEVICES=1 python train.py --outdir ../checkpoint/kgat \
  --train_path ../data/bert_train.json \
  --valid_path ../data/bert_dev.json \
  --bert_pretrain ../bert_base \
  --train_batch_size 8 \
  --valid_batch_size 8 \
  --gradient_accumulation_steps 4 \
  --learning_rate 5e-5 \
  --num_train_epochs 3 \
  --eval_step 500

# Evaluate the best checkpoint on the dev set
CUDA_VISIBLE_DEVICES=1 python test.py --outdir ./output/ \
  --test_path ../data/bert_eval.json \
  --bert_pretrain ../bert_base \
  --checkpoint ../checkpoint/kgat/model.best.pt \
  --name dev.json

python fever_score_test.py --predicted_labels ./output/dev.json \
  --predicted_evidence ../data/bert_eval.json --actual ../data/dev_eval.json
