#!/bin/bash
# Fine-tune BART-large on CNN-DM (8 x 32GB V100, fp16).
# Follows examples/bart/README.summarization.md; run from the fairseq root after preprocess_cnndm.sh.

TOTAL_NUM_UPDATES=20000
WARMUP_UPDATES=500
LR=3e-05
MAX_TOKENS=2048
UPDATE_FREQ=4
BART_PATH=${BART_PATH:-bart.large/model.pt}
SAVE_DIR=${SAVE_DIR:-checkpoints/bart_cnndm}

export NCCL_DEBUG=WARN

CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 fairseq-train cnn_dm-bin \
    --restore-file $BART_PATH \
    --save-dir $SAVE_DIR \
    --max-tokens $MAX_TOKENS \
    --task translation \
    --source-lang source --target-lang target \
    --truncate-source \
    --layernorm-embedding \
    --share-all-embeddings \
    --share-decoder-input-output-embed \
    --reset-optimizer --reset-dataloader --reset-meters \
    --required-batch-size-multiple 1 \
    --arch bart_large \
    --criterion label_smoothed_cross_entropy \
    --label-smoothing 0.1 \
    --dropout 0.1 --attention-dropout 0.1 \
    --weight-decay 0.01 --optimizer adam --adam-betas "(0.9, 0.999)" --adam-eps 1e-08 \
    --clip-norm 0.1 \
    --lr-scheduler polynomial_decay --lr $LR --total-num-update $TOTAL_NUM_UPDATES --warmup-updates $WARMUP_UPDATES \
    --fp16 --update-freq $UPDATE_FREQ \
    --skip-invalid-size-inputs-valid-test \
    --find-unused-parameters;

# Inference on the test split (single GPU, fp16)
CUDA_VISIBLE_DEVICES=0 python examples/bart/summarize.py \
    --model-dir $SAVE_DIR \
    --model-file checkpoint_best.pt \
    --src cnn_dm/test.source \
    --out cnn_dm/test.hypo
