#!/bin/bash
# Fine-tune wav2vec2-large-xlsr-53 for speech emotion recognition (ShEMO / AESDD style csv).
set -e

export CUDA_VISIBLE_DEVICES=0
export WANDB_DISABLED=true
export TOKENIZERS_PARALLELISM=false

DATA_DIR=${DATA_DIR:-./content/data}
OUT_DIR=${OUT_DIR:-./content/wav2vec2-xlsr-greek-speech-emotion-recognition}

python run_wav2vec_clf.py \
    --pooling_mode="mean" \
    --model_name_or_path="lighteternal/wav2vec2-large-xlsr-53-greek" \
    --model_type="wav2vec2" \
    --output_dir=$OUT_DIR \
    --cache_dir=./content/cache \
    --train_file=$DATA_DIR/train.csv \
    --validation_file=$DATA_DIR/test.csv \
    --per_device_train_batch_size=4 \
    --per_device_eval_batch_size=4 \
    --gradient_accumulation_steps=2 \
    --learning_rate=1e-4 \
    --num_train_epochs=5.0 \
    --evaluation_strategy="steps" \
    --save_steps=10 \
    --eval_steps=10 \
    --logging_steps=10 \
    --save_total_limit=2 \
    --do_eval \
    --do_train \
    --fp16 \
    --freeze_feature_extractor
