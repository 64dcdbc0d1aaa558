#!/bin/bash
set -ux

SAVE_DIR=outputs/DailyDialog.multi
VOCAB_PATH=model/Bert/vocab.txt
DATA_DIR=data/DailyDialog
INIT_CHECKPOINT=model/PLATO.pt
DATA_TYPE=multi
USE_VISUALDL=false

# CUDA environment settings.
export CUDA_VISIBLE_DEVICES=0,1
GPU_NUM=$(echo $CUDA_VISIBLE_DEVICES | awk -F ',' '{print NF}')
export NCCL_DEBUG=WARN

# Distributed settings.
export OMP_NUM_THREADS=4

if [[ ! -e $DATA_DIR/dial.train.jsonl ]]; then
    python -u \
        ./preprocess.py \
        --vocab_path $VOCAB_PATH \
        --data_dir $DATA_DIR \
        --data_type $DATA_TYPE
fi

python -m torch.distributed.launch --use_env \
    --nproc_per_node=$GPU_NUM \
    ./run.py \
    --do_train true \
    --use_data_distributed true \
    --vocab_path $VOCAB_PATH \
    --data_dir $DATA_DIR \
    --data_type $DATA_TYPE \
    --batch_size 6 \
    --valid_steps 2000 \
    --num_type_embeddings 2 \
    --use_discriminator true \
    --num_epoch 20 \
    --lr 1e-5 \
    --use_amp true \
    --save_checkpoint false \
    --init_checkpoint $INIT_CHECKPOINT \
    --save_dir $SAVE_DIR
