#!/usr/bin/env bash
# Two-stream SLR on Phoenix-2014T, 8x V100 (32G) per node.
#   stage 1: pretrain the video / keypoint S3D streams separately
#   stage 2: train the two-stream network (S2G)
#   stage 3: S2T with mBART initialised from stage 2
# usage: bash scripts/run_phoenix2014t.sh [stage]
set -e

STAGE=${1:-2}
GPUS=${GPUS:-8}
MASTER_PORT=${MASTER_PORT:-29999}
CKPT_ROOT=results/phoenix-2014t

export OMP_NUM_THREADS=4
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
# NCCL on our cluster hangs on P2P over PCIe switches, force it through host memory
export NCCL_P2P_DISABLE=1
export NCCL_DEBUG=WARN
export enable_pbar=0

echo "Visible GPUs:"
nvidia-smi --query-gpu=index,name,memory.total --format=csv

if [ "$STAGE" = "1" ]; then
    for stream in video keypoint; do
        config=experiments/configs/SingleStream/phoenix-2014t_${stream}.yaml
        python -m torch.distributed.launch --nproc_per_node ${GPUS} --master_port ${MASTER_PORT} --use_env \
            training.py --config ${config}
    done
elif [ "$STAGE" = "2" ]; then
    config=experiments/configs/TwoStream/phoenix-2014t_s2g.yaml
    python -m torch.distributed.launch --nproc_per_node ${GPUS} --master_port ${MASTER_PORT} --use_env \
        training.py --config ${config}
    # extract features for the translation stage (single GPU is enough)
    CUDA_VISIBLE_DEVICES=0 python -m torch.distributed.launch --nproc_per_node 1 --master_port ${MASTER_PORT} --use_env \
        extract_feature.py --config ${config}
elif [ "$STAGE" = "3" ]; then
    config=experiments/configs/TwoStream/phoenix-2014t_s2t.yaml
    python -m torch.distributed.launch --nproc_per_node ${GPUS} --master_port ${MASTER_PORT} --use_env \
        training.py --config ${config}
else
    echo "unknown stage ${STAGE}" && exit 1
fi

# final evaluation on dev / test with beam search
python -m torch.distributed.launch --nproc_per_node 1 --master_port ${MASTER_PORT} --use_env \
    prediction.py --config ${config} --ckpt_name best.ckpt
echo "done, results in ${CKPT_ROOT}"
