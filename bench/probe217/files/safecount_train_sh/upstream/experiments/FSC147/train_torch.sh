#!/usr/bin/env bash
# Train SAFECount on FSC147 with torch.distributed.launch (no slurm).
#   usage: sh train_torch.sh <num_gpus> <gpu_ids> [extra args for train_val.py]
#   e.g.   sh train_torch.sh 4 0,1,2,3
# On the cluster use train.sh instead (srun --gres=gpu:N ...).
ROOT=../../
export PYTHONPATH=$ROOT:$PYTHONPATH
export NCCL_P2P_DISABLE=1      # the A6000 boxes hang in all_reduce without this
export OMP_NUM_THREADS=4

NUM_GPUS=$1
GPU_IDS=$2
shift 2

mkdir -p log
CUDA_VISIBLE_DEVICES=$GPU_IDS \
python -m torch.distributed.launch \
    --nproc_per_node=$NUM_GPUS \
    --master_port=${PORT:-29501} \
    $ROOT/tools/train_val.py --config config.yaml "$@" 2>&1 | tee log/train_$(date +%Y%m%d_%H%M%S).log
