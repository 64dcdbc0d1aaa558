#!/bin/bash
# Transformer (big) on WMT'16 En-De, one node with 8 x V100 32GB, following
# "Scaling Neural Machine Translation" (Ott et al., 2018):
#   --max-tokens 3584 per GPU, --update-freq 16 ~ 128 GPUs worth of batch, fp16.
#
# Data: bash prepare-wmt14en2de.sh --icml17, then fairseq-preprocess with a
# joined dictionary into data-bin/wmt16_en_de_bpe32k.

set -e

DATA_BIN=${DATA_BIN:-data-bin/wmt16_en_de_bpe32k}
SAVE_DIR=${SAVE_DIR:-checkpoints/transformer_vaswani_wmt_en_de_big}
NUM_GPUS=${NUM_GPUS:-8}
UPDATE_FREQ=${UPDATE_FREQ:-16}

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export NCCL_SOCKET_IFNAME=eth0
export NCCL_DEBUG=WARN
export OMP_NUM_THREADS=1
export PYTHONUNBUFFERED=1

mkdir -p $SAVE_DIR

fairseq-train $DATA_BIN \
    --arch transformer_vaswani_wmt_en_de_big --share-all-embeddings \
    --optimizer adam --adam-betas '(0.9, 0.98)' --clip-norm 0.0 \
    --lr 0.001 --lr-scheduler inverse_sqrt --warmup-updates 4000 --warmup-init-lr 1e-07 \
    --dropout 0.3 --weight-decay 0.0 \
    --criterion label_smoothed_cross_entropy --label-smoothing 0.1 \
    --max-tokens 3584 --update-freq $UPDATE_FREQ \
    --distributed-world-size $NUM_GPUS --distributed-backend nccl \
    --ddp-backend=legacy_ddp \
    --fp16 --fp16-init-scale 128 --threshold-loss-scale 1 \
    --save-dir $SAVE_DIR --keep-last-epochs 10 --max-epoch 40 \
    --log-format simple --log-interval 100 2>&1 | tee $SAVE_DIR/train.log

# average the last 5 checkpoints and evaluate on newstest2014
python scripts/average_checkpoints.py \
    --inputs $SAVE_DIR \
    --num-epoch-checkpoints 5 \
    --output $SAVE_DIR/checkpoint.avg5.pt

CUDA_VISIBLE_DEVICES=0 fairseq-generate $DATA_BIN \
    --path $SAVE_DIR/checkpoint.avg5.pt \
    --beam 4 --lenpen 0.6 --remove-bpe --batch-size 128 > $SAVE_DIR/gen.out

bash scripts/compound_split_bleu.sh $SAVE_DIR/gen.out
