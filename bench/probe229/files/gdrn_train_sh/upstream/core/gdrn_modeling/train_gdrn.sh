#!/usr/bin/env bash
# usage: ./core/gdrn_modeling/train_gdrn.sh <config.py> <gpu_ids, e.g. 0,1,2,3> [other args]
set -x
this_dir=$(dirname "$0")
# commonly used opts:

# MODEL.WEIGHTS: resume or pretrained, or test checkpoint
CFG=$1
CUDA_VISIBLE_DEVICES=$2
IFS=',' read -ra GPUS <<< "$CUDA_VISIBLE_DEVICES"
# GPUS=($(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n'))
NGPU=${#GPUS[@]}  # echo "${GPUS[0]}"
echo "use gpu ids: $CUDA_VISIBLE_DEVICES num gpus: $NGPU"
# CUDA_LAUNCH_BLOCKING=1
NCCL_DEBUG=INFO
OMP_NUM_THREADS=1
MKL_NUM_THREADS=1
PORT=${PORT:-29500}

export NCCL_IB_DISABLE=1

if [ "$NGPU" -gt 1 ]; then
    PYTHONPATH="$this_dir/../..":$PYTHONPATH \
    CUDA_VISIBLE_DEVICES=$2 python -m torch.distributed.launch --nproc_per_node=$NGPU --master_port=$PORT \
        $this_dir/main_gdrn.py --config-file $CFG --launcher pytorch ${@:3}
else
    PYTHONPATH="$this_dir/../..":$PYTHONPATH \
    CUDA_VISIBLE_DEVICES=$2 python $this_dir/main_gdrn.py \
        --config-file $CFG --num-gpus $NGPU ${@:3}
fi
