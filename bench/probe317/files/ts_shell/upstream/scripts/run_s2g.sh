#!/bin/bash
# TwoStream-SLR: Sign2Gloss training on Phoenix-2014T / Phoenix-2014 / CSL-Daily.
# Usage:
#   bash scripts/run_s2g.sh phoenix-2014t            # single node, 8 GPUs
#   NNODES=2 NODE_RANK=0 MASTER_ADDR=10.0.0.1 bash scripts/run_s2g.sh csl-daily
#
# The two single-stream networks (video / keypoint) have to be trained first, their
# checkpoints are loaded by the two-stream config via `pretrained_path_rgb/keypoint`.

DATASET=${1:-phoenix-2014t}
NGPUS=${NGPUS:-8}
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29999}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=0
export NCCL_SOCKET_IFNAME=eth0
export OMP_NUM_THREADS=8
export enable_pbar=0
export TF_CPP_MIN_LOG_LEVEL=3   # silence TF (only used for ctc beam search)
export TOKENIZERS_PARALLELISM=false

for STREAM in video keypoint; do
    CFG=experiments/configs/SingleStream/${DATASET}_s2g_${STREAM}.yaml
    if [ ! -f results/${DATASET}_${STREAM}/ckpts/best.ckpt ]; then
        echo "[run_s2g] training single stream: ${STREAM}"
        python -m torch.distributed.launch \
            --nproc_per_node=${NGPUS} --nnodes=${NNODES} --node_rank=${NODE_RANK} \
            --master_addr=${MASTER_ADDR} --master_port=${MASTER_PORT} --use_env \
            training.py --config ${CFG}
    fi
done

echo "[run_s2g] training two-stream network"
python -m torch.distributed.launch \
    --nproc_per_node=${NGPUS} --nnodes=${NNODES} --node_rank=${NODE_RANK} \
    --master_addr=${MASTER_ADDR} --master_port=$((MASTER_PORT + 1)) --use_env \
    training.py --config experiments/configs/TwoStream/${DATASET}_s2g.yaml

# evaluation on a single card
CUDA_VISIBLE_DEVICES=0 python -m torch.distributed.launch --nproc_per_node=1 --use_env \
    prediction.py --config experiments/configs/TwoStream/${DATASET}_s2g.yaml
