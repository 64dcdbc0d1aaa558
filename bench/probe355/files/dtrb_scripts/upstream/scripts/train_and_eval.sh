#!/bin/bash
# Reproduce the main comparisons of "What Is Wrong With Scene Text Recognition Model Comparisons?"
# Each model is trained on MJSynth + SynthText and evaluated on the 10 benchmark sets.
# Tested on a single V100 (16GB) and on 2x P40; for multi-GPU just list several ids in GPUS.
#
# usage: bash scripts/train_and_eval.sh [GPUS] [SEED]
set -e

GPUS=${1:-0}
SEED=${2:-1111}
DATA_ROOT=${DATA_ROOT:-data_lmdb_release}
LOG_DIR=logs
mkdir -p ${LOG_DIR}

echo "Using GPUs: ${GPUS}"
nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv

# --- CRNN baseline: None-VGG-BiLSTM-CTC
CUDA_VISIBLE_DEVICES=${GPUS} python3 train.py --exp_name None-VGG-BiLSTM-CTC-Seed${SEED} \
    --train_data ${DATA_ROOT}/training --valid_data ${DATA_ROOT}/validation \
    --select_data MJ-ST --batch_ratio 0.5-0.5 \
    --Transformation None --FeatureExtraction VGG --SequenceModeling BiLSTM --Prediction CTC \
    --manualSeed ${SEED} 2>&1 | tee ${LOG_DIR}/None-VGG-BiLSTM-CTC-Seed${SEED}.log

# --- best accuracy model: TPS-ResNet-BiLSTM-Attn
CUDA_VISIBLE_DEVICES=${GPUS} python3 train.py --exp_name TPS-ResNet-BiLSTM-Attn-Seed${SEED} \
    --train_data ${DATA_ROOT}/training --valid_data ${DATA_ROOT}/validation \
    --select_data MJ-ST --batch_ratio 0.5-0.5 \
    --Transformation TPS --FeatureExtraction ResNet --SequenceModeling BiLSTM --Prediction Attn \
    --manualSeed ${SEED} 2>&1 | tee ${LOG_DIR}/TPS-ResNet-BiLSTM-Attn-Seed${SEED}.log

# --- evaluation on the 10 benchmarks (always on one GPU, batch_size 1 for timing)
for MODEL in None-VGG-BiLSTM-CTC TPS-ResNet-BiLSTM-Attn; do
    PRED=${MODEL##*-}
    IFS='-' read -r TRANS FEAT SEQ _ <<< "${MODEL}"
    CUDA_VISIBLE_DEVICES=0 python3 test.py \
        --eval_data ${DATA_ROOT}/evaluation --benchmark_all_eval \
        --Transformation ${TRANS} --FeatureExtraction ${FEAT} --SequenceModeling ${SEQ} --Prediction ${PRED} \
        --saved_model saved_models/${MODEL}-Seed${SEED}/best_accuracy.pth
done

# --- quick qualitative check
CUDA_VISIBLE_DEVICES=0 python3 demo.py \
    --Transformation TPS --FeatureExtraction ResNet --SequenceModeling BiLSTM --Prediction Attn \
    --image_folder demo_image/ --saved_model saved_models/TPS-ResNet-BiLSTM-Attn-Seed${SEED}/best_accuracy.pth
