#!/usr/bin/env bash
# Train the volumetric (softmax aggregation) model on Human3.6M.
#
# usage: bash scripts/train_h36m_vol.sh "0,1,2,3" [extra train.py flags]
#
# The first argument selects the GPUs; one process is started per GPU through
# torch.distributed.launch (NCCL backend, see init_distributed in train.py).

set -e

GPU_IDS=${1:-"0,1,2,3"}
shift || true
NUM_GPUS=$(echo "${GPU_IDS}" | tr ',' '\n' | wc -l)

CONFIG=experiments/human36m/train/human36m_vol_softmax.yaml
LOGDIR=./logs

export CUDA_VISIBLE_DEVICES=${GPU_IDS}
export OMP_NUM_THREADS=4
export NCCL_DEBUG=WARN

mkdir -p "${LOGDIR}"

echo "training on ${NUM_GPUS} GPU(s): ${GPU_IDS}"
python3 -m torch.distributed.launch \
    --nproc_per_node=${NUM_GPUS} \
    --master_port=2345 \
    train.py \
    --config ${CONFIG} \
    --logdir ${LOGDIR} \
    "$@"

# evaluation on the validation split with the last checkpoint
# python3 train.py --eval --eval_dataset val --config ${CONFIG} --logdir ${LOGDIR}
