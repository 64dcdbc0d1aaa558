#!/bin/bash
# CC-3DT on nuScenes: train the tracking head on top of the frozen QD-3DT
# detector, then run tracking inference + evaluation.
# 8 GPUs per node; set NNODES / NODE_RANK / MASTER_ADDR for multi-node.
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export NCCL_DEBUG=WARN
export NCCL_SOCKET_IFNAME=ib0
export NCCL_IB_HCA=mlx5
export NCCL_P2P_LEVEL=NVL
export OMP_NUM_THREADS=8
export PYTHONPATH=$PWD:$PYTHONPATH

GPUS=$(nvidia-smi --list-gpus | wc -l)
NNODES=${NNODES:-1}
CONFIG=configs/cc3dt/cc3dt_frcnn_r101_fpn_nusc.py
WORK_DIR=vis4d-workspace
EXP=cc3dt_frcnn_r101_fpn_nusc

echo "training ${EXP} on ${NNODES} node(s) x ${GPUS} GPU(s)"
python -m cc3dt.engine.run fit --config ${CONFIG} --gpus ${GPUS} --nodes ${NNODES} \
    --precision 16-mixed --tf32 --work-dir ${WORK_DIR} --exp-name ${EXP} \
    --ckpt checkpoints/qd3dt_frcnn_r101_fpn_12e_nusc.ckpt

# tracking inference on val + nuScenes tracking metrics (AMOTA)
python -m cc3dt.engine.run test --config ${CONFIG} --gpus ${GPUS} --work-dir ${WORK_DIR} --exp-name ${EXP}_test \
    --ckpt ${WORK_DIR}/${EXP}/checkpoints/last.ckpt
