#!/bin/bash
# Copyright (c) Meta Platforms, Inc. and affiliates.
#
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.
#
#WARNING: must have compiled PyTorch and caffe2

#check if extra argument is passed to the test
if [[ $# == 1 ]]; then
    dlrm_extra_option=$1
else
    dlrm_extra_option=""
fi
#echo $dlrm_extra_option

# pin the inference run to the first GPU of the box
export CUDA_VISIBLE_DEVICES=0

dlrm_pt_bin="python dlrm_s_pytorch.py"
dlrm_c2_bin="python dlrm_s_caffe2.py"

echo "run pytorch ..."
# WARNING: the following parameters will be set based on the data set
# --arch-embedding-size=... (sparse feature sizes)
# --arch-mlp-bot=... (the input to the first layer of bottom mlp)
$dlrm_pt_bin --arch-sparse-feature-size=16 --arch-mlp-bot="13-512-256-64-16" --arch-mlp-top="512-256-1" \
    --data-generation=dataset --data-set=kaggle --raw-data-file=./input/train.txt \
    --processed-data-file=./input/kaggleAdDisplayChallenge_processed.npz \
    --loss-function=bce --round-targets=True --learning-rate=0.1 \
    --mini-batch-size=128 --print-freq=1024 --print-time \
    --test-mini-batch-size=16384 --test-num-workers=16 \
    --inference-only --load-model=./models/dlrm_kaggle.pt \
    --use-gpu $dlrm_extra_option 2>&1 | tee run_kaggle_pt.log

echo "done"
