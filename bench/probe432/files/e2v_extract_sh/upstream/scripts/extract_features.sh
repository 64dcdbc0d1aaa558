#!/bin/bash
# Extract emotion2vec features for a single wav (utterance level) and for the
# IEMOCAP scp list (frame level, used by iemocap_downstream/).
set -e

export CUDA_VISIBLE_DEVICES=0
export PYTHONPATH=$PYTHONPATH:$(pwd)/..

model_dir=../upstream
checkpoint_dir=${CKPT:-/path/to/emotion2vec_base.pt}

# 1) sanity check on the bundled test file
python extract_features.py \
    --source_file=test.wav \
    --target_file=test.npy \
    --model_dir=$model_dir \
    --checkpoint_dir=$checkpoint_dir \
    --granularity=utterance

# 2) IEMOCAP, frame-level features for the downstream recipe
python extract_features.py \
    --source_file=${IEMOCAP_SCP:-/path/to/iemocap/wav.scp} \
    --target_file=${FEAT_DIR:-/path/to/feats/iemocap_frame} \
    --model_dir=$model_dir \
    --checkpoint_dir=$checkpoint_dir \
    --granularity=frame
