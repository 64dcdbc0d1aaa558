#!/bin/bash
# Copyright (c) Meta Platforms, Inc. and affiliates.
#
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.
#
#WARNING: must have compiled PyTorch and caffe2
#
# Criteo Terabyte (MLPerf v0.7 config), single node, all local GPUs, one process
# per GPU through torch.distributed.launch. Usage:
#   ./bench/dlrm_s_criteo_terabyte_multigpu.sh ["--mlperf-logging --test-freq=10240"]

#check if extra argument is passed to the test
if [[ $# == 1 ]]; then
    dlrm_extra_option=$1
else
    dlrm_extra_option=""
fi
echo "extra options: ${dlrm_extra_option}"

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
ngpus=$(nvidia-smi -L | wc -l)
if [[ -n "${NGPUS}" ]]; then
    ngpus=${NGPUS}
fi
echo "running on ${ngpus} GPUs"

# NCCL tuning for a single DGX-1/DGX-2 style box
export NCCL_DEBUG=WARN
export NCCL_P2P_LEVEL=NVL
export OMP_NUM_THREADS=4

raw_data_dir=${RAW_DATA_DIR:-/data/criteo_terabyte/day}
processed_dir=${PROCESSED_DIR:-/data/criteo_terabyte/processed}
mkdir -p "${processed_dir}" ./logs ./models

dlrm_pt_bin="python -m torch.distributed.launch --nproc_per_node=${ngpus} --use_env dlrm_s_pytorch.py"

echo "run pytorch ..."
# WARNING: the following parameters will be set based on the data set
# --arch-embedding-size=... (sparse feature sizes)
# --arch-mlp-bot=... (the input to the first layer of bottom mlp)
$dlrm_pt_bin \
    --arch-sparse-feature-size=128 \
    --arch-mlp-bot="13-512-256-128" \
    --arch-mlp-top="1024-1024-512-256-1" \
    --max-ind-range=40000000 \
    --data-generation=dataset \
    --data-set=terabyte \
    --raw-data-file="${raw_data_dir}" \
    --processed-data-file="${processed_dir}/terabyte_processed.npz" \
    --loss-function=bce \
    --round-targets=True \
    --learning-rate=1.0 \
    --mini-batch-size=32768 \
    --print-freq=1024 \
    --print-time \
    --test-freq=102400 \
    --test-mini-batch-size=131072 \
    --test-num-workers=16 \
    --memory-map \
    --mlperf-logging \
    --mlperf-auc-threshold=0.8025 \
    --mlperf-bin-loader \
    --mlperf-bin-shuffle \
    --use-gpu \
    --dist-backend=nccl \
    --save-model="./models/dlrm_terabyte_${ngpus}gpu.pt" \
    $dlrm_extra_option 2>&1 | tee "./logs/run_terabyte_mlperf_pt_${ngpus}gpu.log"

echo "done"

# quick post-run summary: best AUC and total wall time
grep -E "Testing at|AUC" "./logs/run_terabyte_mlperf_pt_${ngpus}gpu.log" | tail -n 5
nvidia-smi --query-gpu=index,utilization.gpu,memory.used --format=csv,noheader
