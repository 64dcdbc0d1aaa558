#!/bin/bash
# sh scripts/basics/cifar10/train_cifar10.sh
#
# Trains the ResNet-18 (32x32) CIFAR-10 baseline used by every OpenOOD v1.5
# CIFAR-10 benchmark. Three seeds are trained back to back; checkpoints end up
# in results/cifar10_resnet18_32x32_base_e100_lr0.1_default/s{0,1,2}.
#
# Uses two GPUs (one process per GPU via openood.utils.launch). On a pair of
# V100s one seed takes ~35 min.

# GPU=2
# CPU=1
# node=73
# jobname=openood

export CUDA_VISIBLE_DEVICES=2,3
export NCCL_DEBUG=WARN
export NCCL_P2P_DISABLE=1
export OMP_NUM_THREADS=4

NUM_GPUS=2
SEEDS="0 1 2"

for SEED in ${SEEDS}; do
PYTHONPATH='.':$PYTHONPATH \
#srun -p dsta --mpi=pmi2 --gres=gpu:${GPU} -n1 \
#--cpus-per-task=${CPU} --ntasks-per-node=${GPU} \
#--kill-on-bad-exit=1 --job-name=${jobname} -w SG-IDC1-10-51-2-${node} \
python main.py \
    --config configs/datasets/cifar10/cifar10.yml \
    configs/networks/resnet18_32x32.yml \
    configs/pipelines/train/baseline.yml \
    configs/preprocessors/base_preprocessor.yml \
    --num_gpus ${NUM_GPUS} \
    --num_workers 8 \
    --dataset.train.batch_size 64 \
    --optimizer.num_epochs 100 \
    --seed ${SEED}
done

# quick sanity check of the three checkpoints on the MSP baseline
# (single GPU is enough for evaluation)
CUDA_VISIBLE_DEVICES=2 python scripts/eval_ood.py \
    --id-data cifar10 \
    --root ./results/cifar10_resnet18_32x32_base_e100_lr0.1_default \
    --postprocessor msp \
    --save-score --save-csv
