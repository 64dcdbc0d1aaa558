#!/bin/bash
# BBN training / evaluation wrapper.
#
#   bash data_parallel_train.sh configs/cifar10.yaml 0,1
#   bash data_parallel_train.sh configs/iNat18.yaml 0,1,2,3 TRAIN.BATCH_SIZE 128
#
# The second argument is the list of GPU ids; it is forwarded to the yacs
# config (cfg.GPUS) and main/train.py exports it as CUDA_VISIBLE_DEVICES.

CONFIG=$1
GPUS=${2:-0}
shift 2
EXTRA_OPTS="$@"

export PYTHONPATH=$PYTHONPATH:$(pwd)/lib
# set DEBUG=1 to get synchronous kernel launches and readable stack traces
export CUDA_LAUNCH_BLOCKING=${DEBUG:-0}

NAME=$(basename ${CONFIG} .yaml)
LOG_DIR=./output/${NAME}
mkdir -p ${LOG_DIR}

echo "config : ${CONFIG}"
echo "gpus   : ${GPUS}"

python main/train.py \
    --cfg ${CONFIG} \
    --ar False \
    GPUS "[${GPUS}]" ${EXTRA_OPTS} 2>&1 | tee ${LOG_DIR}/train.log

# evaluate the best checkpoint on one card
FIRST_GPU=${GPUS%%,*}
CUDA_VISIBLE_DEVICES=${FIRST_GPU} python main/valid.py \
    --cfg ${CONFIG} \
    TEST.MODEL_FILE best_model.pth 2>&1 | tee ${LOG_DIR}/valid.log
