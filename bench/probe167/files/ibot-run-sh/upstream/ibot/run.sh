#!/usr/bin/env bash
# Launcher for iBOT pre-training and evaluation on a single node or a few nodes.
#
#   ./run.sh <JOB_NAME> <ARCH> <KEY> <TYPE> [extra args passed to the python script]
#
#   TYPE = pretrain | knn | linear | unsup_cls
#   GPUS, NNODES, NODE_RANK, MASTER_ADDR, PORT may be overridden from the environment.
set -x

CURDIR=$(cd $(dirname $0); pwd)
cd $CURDIR
export PYTHONPATH="$PYTHONPATH:$CURDIR"
echo 'The work dir is: ' $CURDIR

JOB_NAME=$1
ARCH=$2
KEY=$3
TYPE=$4

GPUS=${GPUS:-8}
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
PORT=${PORT:-29500}

# which cards this job may use on the local node (default: all eight)
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export NCCL_IB_DISABLE=0
export NCCL_DEBUG=WARN
export OMP_NUM_THREADS=1

if [ $GPUS -lt 8 ]; then
    GPUS_PER_NODE=${GPUS_PER_NODE:-$GPUS}
else
    GPUS_PER_NODE=${GPUS_PER_NODE:-8}
fi

OUTPUT_DIR=$CURDIR/work_dirs/$JOB_NAME
PRETRAINED=$OUTPUT_DIR/checkpoint.pth
mkdir -p $OUTPUT_DIR

LAUNCH="python -m torch.distributed.launch --nnodes ${NNODES} --node_rank ${NODE_RANK} \
    --master_addr ${MASTER_ADDR} --master_port ${PORT} --nproc_per_node ${GPUS_PER_NODE}"

if [ "$TYPE" = "pretrain" ]; then
    $LAUNCH $CURDIR/main_ibot.py \
        --arch $ARCH \
        --output_dir $OUTPUT_DIR \
        ${@:5}
elif [ "$TYPE" = "knn" ]; then
    $LAUNCH $CURDIR/evaluation/eval_knn.py \
        --pretrained_weights $PRETRAINED \
        --arch $ARCH \
        --checkpoint_key $KEY \
        --dump_features $OUTPUT_DIR/knn_features \
        ${@:5}
elif [ "$TYPE" = "linear" ]; then
    $LAUNCH $CURDIR/evaluation/eval_linear.py \
        --pretrained_weights $PRETRAINED \
        --arch $ARCH \
        --checkpoint_key $KEY \
        --output_dir $OUTPUT_DIR/linear \
        ${@:5}
elif [ "$TYPE" = "unsup_cls" ]; then
    $LAUNCH $CURDIR/evaluation/unsupervised/unsup_cls.py \
        --pretrained_weights $PRETRAINED \
        --arch $ARCH \
        --checkpoint_key $KEY \
        ${@:5}
else
    echo "unknown TYPE $TYPE"
    exit 1
fi
