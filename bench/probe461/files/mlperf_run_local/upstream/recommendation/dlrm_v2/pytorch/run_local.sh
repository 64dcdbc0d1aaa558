#!/bin/bash

source ./run_common.sh

common_opt="--mlperf_conf ../../../mlperf.conf"
OUTPUT_DIR=`pwd`/output/$name
if [ ! -d $OUTPUT_DIR ]; then
    mkdir -p $OUTPUT_DIR
fi

set -x # echo the next command
# NCCL only needs the loopback interface for the single-node sharded model
export NCCL_SOCKET_IFNAME=lo
export NCCL_IB_DISABLE=1
export WORLD_SIZE=${WORLD_SIZE:-$(echo $CUDA_VISIBLE_DEVICES | tr ',' '\n' | wc -l)}

python python/main.py --profile $profile $common_opt --model $model --model-path $model_path \
       --dataset $dataset --dataset-path $DATA_DIR \
       --output $OUTPUT_DIR $EXTRA_OPS $@
