#!/bin/bash
# Launch wav2vec2 BASE pre-training on one node with all its GPUs.
#   bash run_multigpu.sh /data/CommonVoice/en [num_gpus]
set -e

DATA=${1:?"usage: $0 <commonvoice_dir> [num_gpus]"}
NGPU=${2:-8}

nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv

export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((NGPU - 1)))
export OMP_NUM_THREADS=8

python -m torch.distributed.launch --nproc_per_node=${NGPU} --master_port=29500 \
    train_sb_wav2vec2.py hparams/wav2vec2_base.yaml \
    --data_folder="${DATA}" \
    --distributed_launch --distributed_backend=nccl \
    --find_unused_parameters \
    --grad_accumulation_factor=2
