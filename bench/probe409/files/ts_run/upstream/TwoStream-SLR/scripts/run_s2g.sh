#!/usr/bin/env bash
# Train the TwoStream-SLR recognition model (S2G) on Phoenix-2014T with 8 GPUs.
# Usage: bash scripts/run_s2g.sh [config]
set -e

config=${1:-experiments/configs/TwoStream/phoenix-2014t_s2g.yaml}
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export NCCL_DEBUG=WARN
export OMP_NUM_THREADS=4

# show what we are running on
nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv

python -m torch.distributed.launch --nproc_per_node 8 --master_port 29999 --use_env training.py --config=${config}

# evaluate the best checkpoint on dev/test
python -m torch.distributed.launch --nproc_per_node 1 --master_port 29998 --use_env prediction.py --config=${config}
