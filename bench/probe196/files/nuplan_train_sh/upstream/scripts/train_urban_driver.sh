#!/bin/bash
# Train the Urban Driver open-loop baseline on nuPlan mini/trainval with 4 GPUs on one node.
# Usage: bash scripts/train_urban_driver.sh [EXPERIMENT_NAME]
set -euo pipefail

EXPERIMENT=${1:-urban_driver_open_loop}
NUPLAN_DEVKIT_ROOT=${NUPLAN_DEVKIT_ROOT:-$HOME/nuplan-devkit}
export NUPLAN_DATA_ROOT=${NUPLAN_DATA_ROOT:-/data/sets/nuplan}
export NUPLAN_MAPS_ROOT=${NUPLAN_MAPS_ROOT:-/data/sets/nuplan/maps}
export NUPLAN_EXP_ROOT=${NUPLAN_EXP_ROOT:-/data/exp/nuplan}

# GPUs 4-7 are reserved for the simulation workers
export CUDA_VISIBLE_DEVICES=0,1,2,3
export NCCL_DEBUG=WARN
export NCCL_P2P_DISABLE=1            # PCIe box without NVLink; P2P hangs on this driver
export NCCL_SOCKET_IFNAME=eno1
export OMP_NUM_THREADS=8

CACHE_PATH=$NUPLAN_EXP_ROOT/cache/urban_driver_cache

python $NUPLAN_DEVKIT_ROOT/nuplan/planning/script/run_training.py \
    experiment_name=$EXPERIMENT \
    job_name=urban_driver_open_loop_model \
    py_func=train \
    +training=training_urban_driver_open_loop_model \
    cache.cache_path=$CACHE_PATH \
    cache.use_cache_without_dataset=true \
    data_loader.params.batch_size=64 \
    data_loader.params.num_workers=8 \
    data_loader.params.pin_memory=true \
    lightning.trainer.params.max_epochs=50 \
    lightning.trainer.params.accelerator=gpu \
    lightning.trainer.params.gpus=4 \
    lightning.trainer.params.precision=16 \
    lightning.trainer.params.strategy=ddp_find_unused_parameters_false \
    optimizer=adamw \
    optimizer.lr=1e-4 \
    lr_scheduler=one_cycle_lr \
    worker=ray_distributed \
    worker.threads_per_node=32 \
    worker.use_distributed=false \
    gpu=true
