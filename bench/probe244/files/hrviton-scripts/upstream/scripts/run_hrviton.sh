#!/usr/bin/env bash
# HR-VITON: train the try-on condition generator / image generator and run inference.
# Usage: bash scripts/run_hrviton.sh {train_tocg|train_gen|test} [GPU_IDS]
set -e

MODE=${1:-test}
GPUS=${2:-0}
DATAROOT=./data/zalando-hd-resize
NAME=hrviton_$(date +%Y%m%d)

export OMP_NUM_THREADS=8

case "$MODE" in
  train_tocg)
    CUDA_VISIBLE_DEVICES=$GPUS python3 train_condition.py \
        --cuda True \
        --gpu_ids $GPUS \
        --Ddownx2 --Ddropout --lasttvonly --interflowloss --occlusion \
        --dataroot $DATAROOT \
        --name ${NAME}_tocg \
        --keep_step 300000
    ;;
  train_gen)
    NGPU=$(echo $GPUS | tr ',' '\n' | wc -l)
    export NCCL_P2P_DISABLE=1
    export CUDA_VISIBLE_DEVICES=$GPUS
    python3 -m torch.distributed.launch --nproc_per_node=$NGPU --master_port=7129 train_generator.py \
        --cuda True \
        --distributed \
        --name ${NAME}_gen \
        -b 4 -j 8 \
        --gpu_ids $GPUS \
        --fp16 \
        --tocg_checkpoint ./eval_models/weights/v0.1/mtviton.pth \
        --occlusion \
        --dataroot $DATAROOT
    ;;
  test)
    CUDA_VISIBLE_DEVICES=$GPUS python3 test_generator.py \
        --occlusion \
        --cuda True \
        --test_name test_unpaired \
        --tocg_checkpoint ./eval_models/weights/v0.1/mtviton.pth \
        --gpu_ids $GPUS \
        --gen_checkpoint ./eval_models/weights/v0.1/gen.pth \
        --datasetting unpaired \
        --dataroot $DATAROOT \
        --data_list test_pairs.txt
    ;;
  *)
    echo "unknown mode: $MODE" >&2
    exit 1
    ;;
esac

nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv
