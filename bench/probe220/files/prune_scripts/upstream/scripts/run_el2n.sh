#!/bin/bash
# Score CIFAR-10 with EL2N / forgetting on one 4-GPU node, then prune and retrain.
#   bash scripts/run_el2n.sh [num_gpus] [keep_ratio]
set -e

NGPUS=${1:-4}
KEEP=${2:-0.5}
CONFIG=configs/el2n_cifar10.yaml

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
export NCCL_DEBUG=WARN
export NCCL_SOCKET_IFNAME=eth0
export NCCL_IB_DISABLE=1
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1
export OMP_NUM_THREADS=4
export PYTHONPATH=$(pwd):$PYTHONPATH

echo "GPUs visible: ${CUDA_VISIBLE_DEVICES} (nproc_per_node=${NGPUS})"
nvidia-smi -L || true

# 1) scores (one independent replica per GPU)
torchrun --standalone --nproc_per_node=${NGPUS} compute_scores.py \
    --config ${CONFIG} --out_dir ./scores/cifar10_el2n_ep20

# 2) semantic de-duplication on CLIP embeddings (optional)
if [ -f ./embs/cifar10_clip_b16.npy ]; then
    torchrun --standalone --nproc_per_node=${NGPUS} semdedup_clustering.py \
        --config ${CONFIG} --emb_path ./embs/cifar10_clip_b16.npy --out ./scores/semdedup_keep.npy
fi

# 3) prune + retrain on a single GPU
CUDA_VISIBLE_DEVICES=0 python train_pruned.py \
    --scores ./scores/cifar10_el2n_ep20/scores.npz --score_key el2n \
    --keep_ratio ${KEEP} --epochs 200 --amp
