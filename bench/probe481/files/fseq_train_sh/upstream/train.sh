#!/usr/bin/env bash
# Fine-tune the copy-augmented transformer on Lang-8 + NUCLE (after pre-training
# on the denoising auto-encoder data, see pretrain.sh).
source ./config.sh

device=0,1,2,3
exp=${1:-ft_lang8}

DATA_BIN=$DATA_BIN_DIR
OUT=$OUT_DIR/models_$exp
mkdir -p $OUT

cp ./train.sh $OUT/

CUDA_VISIBLE_DEVICES=$device python train.py $DATA_BIN \
    --save-dir $OUT \
    -s src -t tgt \
    --lr 0.0002 --lr-scheduler inverse_sqrt --warmup-init-lr 1e-07 --warmup-updates 4000 \
    --min-lr 1e-09 --dropout 0.2 --relu-dropout 0.2 --attention-dropout 0.2 --copy-attention-dropout 0.2 \
    --encoder-embed-dim 512 --decoder-embed-dim 512 \
    --max-tokens 3000 --update-freq 4 \
    --arch copy_augmented_transformer \
    --optimizer adam --adam-betas '(0.9, 0.98)' \
    --clip-norm 2 \
    --criterion label_smoothed_cross_entropy --label-smoothing 0.1 \
    --max-epoch 9 \
    --seed 4321 \
    --positive-label-weight 1.2 \
    --copy-attention --copy-attention-heads 1 \
    --no-ema \
    --pretrained-model $OUT_DIR/models_pretrain/checkpoint9.pt \
    --ddp-backend no_c10d \
    --fp16 \
    2>&1 | tee $OUT/log.out

# generate on CoNLL-2014
CUDA_VISIBLE_DEVICES=0 python interactive.py $DATA_BIN \
    --path $OUT/checkpoint_last.pt \
    --beam 12 --nbest 12 --replace-unk --max-len-b 400 \
    --copy-ext-dict \
    --input $DATA_RAW/test.src-tgt.src --buffer-size 1024 --batch-size 128 \
    > $OUT/output.nbest.txt
