#!/bin/bash
# Train DiffCSP on MP-20 (ab initio generation, with atom types).
# Tested on a single A100-80GB; a V100-32GB needs data.datamodule.batch_size.train=128
#
#   GPU=1 bash scripts/train_mp20.sh mp20_gen_run1

EXPNAME=${1:-mp20_gen}

export CUDA_VISIBLE_DEVICES=${GPU:-0}
export PROJECT_ROOT=$(pwd)
export HYDRA_JOBS=$PROJECT_ROOT/hydra_outputs
export WABDB_DIR=$PROJECT_ROOT/wandb
export WANDB_DIR=$PROJECT_ROOT/wandb
export WANDB_MODE=${WANDB_MODE:-online}
export OMP_NUM_THREADS=8

mkdir -p $HYDRA_JOBS $WANDB_DIR

echo "== node: $(hostname)  gpu: $CUDA_VISIBLE_DEVICES =="
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv

python diffcsp/run.py \
    data=mp_20 \
    model=diffusion_w_type \
    expname=$EXPNAME \
    train.pl_trainer.gpus=1 \
    train.pl_trainer.max_epochs=1000 \
    data.datamodule.batch_size.train=256 \
    optim.optimizer.lr=1e-3 \
    logging.wandb.project=diffcsp \
    model.use_amp=false

echo "done: $HYDRA_JOBS/singlerun/$(date +%Y-%m-%d)/$EXPNAME"
