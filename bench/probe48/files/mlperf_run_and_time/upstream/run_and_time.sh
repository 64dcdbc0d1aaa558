#!/bin/bash

# Copyright (c) 2019-2023 NVIDIA CORPORATION. All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.

# runs benchmark and reports time to convergence
# to use the script:
#   source config_DGXA100_1x8x56x1.sh && ./run_and_time.sh

set -e

# start timing
start=$(date +%s)
start_fmt=$(date +%Y-%m-%d\ %r)
echo "STARTING TIMING RUN AT $start_fmt"

# system configuration (normally sourced from config_<SYSTEM>.sh)
: "${DGXNGPU:=8}"
: "${DGXSYSTEM:=DGXA100_1x8x56x1}"
: "${BATCHSIZE:=56}"
: "${LR:=0.00035}"
: "${MAX_STEPS:=7100}"
: "${SEED:=$RANDOM}"
: "${DATADIR_PHASE2:=/workspace/data_phase2}"
: "${EVALDIR:=/workspace/evaldata}"
: "${CHECKPOINTDIR_PHASE1:=/workspace/phase1}"
: "${LOCK_CLOCKS:=1}"
: "${SM_CLOCK_MHZ:=1410}"

# network: MLPerf runs pin the IB HCAs and the bootstrap interface explicitly
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-ib0}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}

# lock the SM clocks so that run-to-run variance comes from the workload only
if [[ "${LOCK_CLOCKS}" == "1" ]]; then
    sudo nvidia-smi -lgc ${SM_CLOCK_MHZ},${SM_CLOCK_MHZ} && trap 'sudo nvidia-smi -rgc' EXIT
fi

# drop page cache between runs (required by the rules for the timed run)
if [[ "${CLEAR_CACHES:-1}" == "1" ]]; then
    sync && sudo /sbin/sysctl vm.drop_caches=3 || echo "could not drop caches"
fi

PHASE1_CKPT="${CHECKPOINTDIR_PHASE1}/model.ckpt-28252.pt"
EXTRA_PARAMS=${EXTRA_PARAMS:-"--fp16 --fused_mha --use_cuda_graph"}

CMD=(
    python -m torch.distributed.run --standalone --nproc_per_node="${DGXNGPU}"
    ./bind.sh --cpu=exclusive --ib=single --
    python -u run_pretraining.py
    --input_dir="${DATADIR_PHASE2}"
    --eval_dir="${EVALDIR}"
    --bert_config_path="${CHECKPOINTDIR_PHASE1}/bert_config.json"
    --init_checkpoint="${PHASE1_CKPT}"
    --train_batch_size="${BATCHSIZE}"
    --learning_rate="${LR}"
    --max_steps="${MAX_STEPS}"
    --seed="${SEED}"
    --output_dir=/results
    ${EXTRA_PARAMS}
)

echo "running: ${CMD[*]}"
"${CMD[@]}"
ret_code=$?

sleep 3
if [[ $ret_code != 0 ]]; then exit $ret_code; fi

# end timing
end=$(date +%s)
end_fmt=$(date +%Y-%m-%d\ %r)
echo "ENDING TIMING RUN AT $end_fmt"

# report result
result=$(( end - start ))
result_name="bert"
echo "RESULT,$result_name,$SEED,$result,$USER,$start_fmt"
