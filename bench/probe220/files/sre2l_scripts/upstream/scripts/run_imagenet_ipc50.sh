#!/usr/bin/env bash
# SRe2L on ImageNet-1K, IPC 50: squeeze (torchvision weights) -> recover -> relabel -> train.
# Tested on 4x A100-80GB. recover runs one process per GPU, each on a slice of the IPC range.

set -euo pipefail

IMAGENET_VAL=${IMAGENET_VAL:-/datasets/imagenet/val}
EXP=rn18_bn0.01_[4K]_x_l2_x_tv.crop
SYN=./syn_data
FKD=./FKD_cutmix_fp16
NGPU=4

export OMP_NUM_THREADS=8
export NCCL_P2P_DISABLE=0
nvidia-smi --query-gpu=index,name,memory.total --format=csv

# ---------------------------------------------------------------- recover
cd recover
for i in $(seq 0 $((NGPU-1))); do
    START=$((i * 50 / NGPU))
    END=$(((i + 1) * 50 / NGPU))
    CUDA_VISIBLE_DEVICES=$i python recover_imagenet.py \
        --arch-name "resnet18" \
        --exp-name "${EXP}" \
        --batch-size 100 \
        --lr 0.25 \
        --iteration 4000 \
        --r-bn 0.01 \
        --store-best-images \
        --ipc-start ${START} --ipc-end ${END} \
        --syn-data-path ../${SYN} &
done
wait
cd ..

# ---------------------------------------------------------------- relabel
cd relabel
python generate_soft_label.py \
    -a resnet18 \
    -b 1024 \
    -j 8 \
    --epochs 300 \
    --seed 42 \
    --min_scale_crops 0.08 \
    --max_scale_crops 1 \
    --use-fp16 \
    --fkd_path ../${FKD} \
    --mode 'fkd_save' \
    --mix-type 'cutmix' \
    --dist-url 'tcp://127.0.0.1:10001' --dist-backend 'nccl' \
    --multiprocessing-distributed --world-size 1 --rank 0 \
    ../${SYN}/${EXP}
cd ..

# ---------------------------------------------------------------- train
cd train
python train_KD.py \
    --wandb-project 'final_rn18_fkd' \
    --batch-size 1024 \
    --model "resnet18" \
    --cos \
    -j 8 --gradient-accumulation-steps 2 \
    -T 20 \
    --mix-type 'cutmix' \
    --gpu-id 0,1,2,3 \
    --amp \
    --output-dir ./save/final_rn18_fkd/${EXP}/ \
    --train-dir ../${SYN}/${EXP} \
    --val-dir ${IMAGENET_VAL} \
    --fkd-path ../${FKD}
