#!/usr/bin/env bash
# Target adaptation on VisDA-C with 4 GPUs (one DDP process per GPU, spawned inside python).
#   bash scripts/train_VISDA-C_target.sh <src_memo> [port]

SRC_MODEL_DIR="output/VISDA-C/source/$1"
PORT=${2:-10001}
MEMO="target"
SUB_MEMO="adacontrast"

export CUDA_VISIBLE_DEVICES=0,1,2,3
export NCCL_DEBUG=WARN
export NCCL_SOCKET_IFNAME=eth0
export OMP_NUM_THREADS=8

for SEED in 2020 2021 2022; do
    python main_adacontrast.py train_source=false learn=targets \
        seed=${SEED} port=${PORT} memo=${MEMO} sub_memo=${SUB_MEMO} project="VISDA-C" \
        data.data_root="${PWD}/datasets" data.workers=8 \
        data.dataset="VISDA-C" data.source_domains="[train]" data.target_domains="[validation]" \
        dist_url="tcp://localhost:${PORT}" dist_backend=nccl multiprocessing_distributed=true \
        learn.epochs=15 \
        model_src.arch="resnet101" \
        model_tta.src_log_dir=${SRC_MODEL_DIR} \
        optim.lr=2e-4
done
