#!/usr/bin/bash
# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the BSD-style license found in the
# LICENSE file in the root directory of this source tree.

set -ex

# use envs as local overrides for convenience
# e.g.
# LOG_RANK=0,1 NGPU=4 ./run_train.sh
NGPU=${NGPU:-"8"}
export LOG_RANK=${LOG_RANK:-0}
CONFIG_FILE=${CONFIG_FILE:-"./torchtitan/models/llama3/train_configs/debug_model.toml"}
TRAIN_FILE=${TRAIN_FILE:-"torchtitan.train"}

overrides=""
if [ $# -ne 0 ]; then
    overrides="$*"
fi

# Restrict to a subset of GPUs when requested, e.g. GPUS=4,5,6,7
if [ -n "${GPUS:-}" ]; then
    export CUDA_VISIBLE_DEVICES=${GPUS}
    NGPU=$(echo "${GPUS}" | tr ',' '\n' | wc -l)
fi

# Allocator tuning: avoid fragmentation with long sequences
export PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True"
# Surface async CUDA errors at the failing kernel when debugging
if [ "${DEBUG:-0}" = "1" ]; then
    export CUDA_LAUNCH_BLOCKING=1
    export NCCL_DEBUG=INFO
    export TORCH_DISTRIBUTED_DEBUG=DETAIL
fi

# Check that the driver sees the devices before launching
nvidia-smi -L | head -n "${NGPU}"

TORCHFT_LIGHTHOUSE=${TORCHFT_LIGHTHOUSE:-"http://localhost:29510"}

PYTORCH_ALLOC_CONF="expandable_segments:True" \
TORCHFT_LIGHTHOUSE=${TORCHFT_LIGHTHOUSE} \
torchrun --nproc_per_node=${NGPU} --rdzv_backend c10d --rdzv_endpoint="localhost:0" \
--local-ranks-filter ${LOG_RANK} --role rank --tee 3 \
-m ${TRAIN_FILE} --job.config_file ${CONFIG_FILE} $overrides
