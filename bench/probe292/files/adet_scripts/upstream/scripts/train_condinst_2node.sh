#!/usr/bin/env bash
# Two-node CondInst / BlendMask training (2 x 8 V100-32G).
#
#   node 0:  NODE_RANK=0 MASTER_ADDR=10.10.1.11 bash scripts/train_condinst_2node.sh
#   node 1:  NODE_RANK=1 MASTER_ADDR=10.10.1.11 bash scripts/train_condinst_2node.sh
#
# MODEL can be condinst (default) or blendmask.
set -e

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export NCCL_DEBUG=INFO
export NCCL_SOCKET_IFNAME=eth0
export NCCL_IB_DISABLE=0
export NCCL_IB_HCA=mlx5_0,mlx5_1
export OMP_NUM_THREADS=4

NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-50152}
NUM_GPUS=8
MODEL=${MODEL:-condinst}

if [ "${MODEL}" = "blendmask" ]; then
    CONFIG=configs/BlendMask/R_50_3x.yaml
    OUTPUT_DIR=training_dir/blendmask_R_50_3x
else
    CONFIG=configs/CondInst/MS_R_50_3x.yaml
    OUTPUT_DIR=training_dir/CondInst_MS_R_50_3x
fi

mkdir -p ${OUTPUT_DIR}
# record the hardware we trained on next to the checkpoints
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv > ${OUTPUT_DIR}/gpus.csv

python tools/train_net.py \
    --config-file ${CONFIG} \
    --num-gpus ${NUM_GPUS} \
    --num-machines 2 \
    --machine-rank ${NODE_RANK} \
    --dist-url tcp://${MASTER_ADDR}:${MASTER_PORT} \
    SOLVER.IMS_PER_BATCH 32 \
    SOLVER.BASE_LR 0.02 \
    OUTPUT_DIR ${OUTPUT_DIR} 2>&1 | tee ${OUTPUT_DIR}/train_node${NODE_RANK}.log
