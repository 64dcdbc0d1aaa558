#!/bin/bash
# Train EV-FlowNet on MVSEC outdoor_day2 and evaluate on outdoor_day1.
# Single GPU (~1.5 days on a GTX 1080 Ti for 300 epochs).
#
#   bash scripts/run_train.sh /data/mvsec

DATA=${1:-/data/mvsec}
EXP=evflownet_dt1
export CUDA_VISIBLE_DEVICES=0

python train.py \
    --data_path ${DATA} \
    --train_bag outdoor_day2 \
    --test_sequence outdoor_day1 \
    --batch_size 8 \
    --initial_learning_rate 1e-5 \
    --learning_rate_decay 0.9 \
    --smoothness_weight 0.5 \
    --skip_frames 1 \
    --num_workers 8 \
    --gpu 0 \
    --summary_path runs/${EXP} \
    --checkpoint_path checkpoints/${EXP}

LAST=$(ls -1 checkpoints/${EXP}/*.pth | tail -n 1)
echo "Evaluating ${LAST}"
python test.py \
    --data_path ${DATA} \
    --test_sequence outdoor_day1 \
    --load_path ${LAST} \
    --gpu 0
