#!/bin/bash
# AdaMatch digits benchmarks. Usage: bash scripts/run_digits.sh [num_gpus]
set -e

NGPUS=${1:-1}
export OMP_NUM_THREADS=4
export NCCL_DEBUG=WARN
export NCCL_SOCKET_IFNAME=eth0
export NCCL_IB_DISABLE=1

mkdir -p runs logs

# check that the expected number of GPUs is visible before launching anything
nvidia-smi --query-gpu=index,name,memory.total --format=csv

if [ "$NGPUS" -eq 1 ]; then
    CUDA_VISIBLE_DEVICES=0 python train_adamatch.py --source mnist --target usps --amp \
        --out runs/mnist2usps 2>&1 | tee logs/mnist2usps.log
    CUDA_VISIBLE_DEVICES=0 python train_adamatch.py --source usps --target mnist --amp \
        --out runs/usps2mnist 2>&1 | tee logs/usps2mnist.log
else
    export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((NGPUS - 1)))
    torchrun --standalone --nproc_per_node=$NGPUS train_adamatch.py --source svhn --target mnist \
        --batch-size $((256 / NGPUS)) --amp --out runs/svhn2mnist 2>&1 | tee logs/svhn2mnist.log
    torchrun --standalone --nproc_per_node=$NGPUS train_adamatch.py --source mnist --target mnistm \
        --batch-size $((256 / NGPUS)) --amp --out runs/mnist2mnistm 2>&1 | tee logs/mnist2mnistm.log
fi
