#!/usr/bin/env bash
# Usage:
#   ./scripts/dist_train.sh 4 options/train/DBCNN/train_DBCNN_koniq.yml [--auto_resume]
#   GPU_IDS=4,5,6,7 PORT=29600 ./scripts/dist_train.sh 4 options/train/MUSIQ/train_MUSIQ_koniq.yml
#
# One process per GPU is started by torch.distributed.launch; every process reads LOCAL_RANK.

GPUS=$1
CONFIG=$2
PORT=${PORT:-4321}
GPU_IDS=${GPU_IDS:-$(seq -s, 0 $((GPUS-1)))}

if [ -z "$GPUS" ] || [ -z "$CONFIG" ]; then
    echo "usage: $0 NUM_GPUS CONFIG.yml [extra args]"
    exit 1
fi

# avoid oversubscribing the CPU with the dataloader workers
export OMP_NUM_THREADS=4
export CUDA_VISIBLE_DEVICES=$GPU_IDS
# NCCL tends to hang on our cluster when P2P over PCIe is enabled
export NCCL_P2P_DISABLE=1
export NCCL_DEBUG=WARN

echo "Launching ${GPUS} processes on GPUs ${CUDA_VISIBLE_DEVICES}, master port ${PORT}"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

PYTHONPATH="$(dirname $0)/..:${PYTHONPATH}" \
python -m torch.distributed.launch --nproc_per_node=$GPUS --master_port=$PORT \
    pyiqa/train.py -opt $CONFIG --launcher pytorch ${@:3}
