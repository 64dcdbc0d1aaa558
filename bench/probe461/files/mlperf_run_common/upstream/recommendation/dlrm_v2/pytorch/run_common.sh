#!/bin/bash

if [ "x$DATA_DIR" == "x" ]; then
    echo "DATA_DIR not set" && exit 1
fi
if [ "x$MODEL_DIR" == "x" ]; then
    echo "MODEL_DIR not set" && exit 1
fi
if [ "x$DLRM_DIR" == "x" ]; then
    echo "DLRM_DIR not set" && exit 1
fi

# defaults
backend=pytorch
model=dlrm
dataset=multihot-criteo
device="cpu"
mode="performance"

for i in $* ; do
    case $i in
       pytorch) backend=$i; shift;;
       dlrm) model=$i; shift;;
       multihot-criteo|multihot-criteo-sample) dataset=$i; shift;;
       cpu|gpu) device=$i; shift;;
       performance|accuracy) mode=$i; shift;;
    esac
done

# debuging
# echo $backend
# echo $model
# echo $dataset
# echo $device
# echo $MODEL_DIR
# echo $DATA_DIR
# echo $DLRM_DIR
# echo $EXTRA_OPS

if [ $device == "cpu" ] ; then
    export CUDA_VISIBLE_DEVICES=""
    extra_args=""
else
    # one model replica per visible GPU; default to all GPUs on the node
    NUM_GPUS=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
    if [ -z "$CUDA_VISIBLE_DEVICES" ]; then
        export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((NUM_GPUS - 1)))
    fi
    extra_args="--use-gpu"
fi
name="$model-$dataset-$backend"

#
# pytorch
#
if [ $name == "dlrm-multihot-criteo-sample-pytorch" ] ; then
    model_path="$MODEL_DIR/dlrm-multihot-pytorch.pt"
    profile=dlrm-multihot-sample-pytorch
fi
if [ $name == "dlrm-multihot-criteo-pytorch" ] ; then
    model_path="$MODEL_DIR/model_weights"
    profile=dlrm-multihot-pytorch
fi

name="$backend-$device/$model"
EXTRA_OPS="$extra_args $EXTRA_OPS"
if [ $mode == "accuracy" ] ; then
    EXTRA_OPS="$EXTRA_OPS --accuracy"
fi
