#!/usr/bin/env bash
# ------------------------------------------------------------------------
# Distributed training launcher for BasicSR-style restoration models
# (NAFNet / Restormer / Real-ESRGAN configs all go through basicsr/train.py).
#
# Usage:
#   bash scripts/dist_train.sh 8 options/train/GoPro/NAFNet-width64.yml [--auto_resume]
#   SLURM=1 PARTITION=gpu bash scripts/dist_train.sh 16 options/train/SIDD/NAFNet-width64.yml
# ------------------------------------------------------------------------
set -e

GPUS=${1:-8}
CONFIG=$2
PORT=${PORT:-4321}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}
CPUS_PER_TASK=${CPUS_PER_TASK:-6}
PARTITION=${PARTITION:-gpu}
JOB_NAME=${JOB_NAME:-$(basename ${CONFIG%.*})}

if [ -z "$CONFIG" ]; then
    echo "usage: $0 NUM_GPUS CONFIG [extra args]"
    exit 1
fi

# ------------------------------ environment ------------------------------
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export BASICSR_JIT=True            # build dcn / fused_act / upfirdn2d on the fly
export OMP_NUM_THREADS=4
export NCCL_IB_DISABLE=1
export NCCL_DEBUG=WARN
export PYTHONPATH="$(dirname $0)/..:${PYTHONPATH}"

# ------------------------------ sanity checks ------------------------------
if ! command -v nvidia-smi >/dev/null 2>&1; then
    echo "nvidia-smi not found: this script needs NVIDIA GPUs"
    exit 1
fi
NUM_VISIBLE=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
if [ "$GPUS" -gt "$NUM_VISIBLE" ] && [ -z "$SLURM" ]; then
    echo "requested $GPUS GPUs but only $NUM_VISIBLE are visible"
    exit 1
fi
nvcc --version | tail -n1
python -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.is_available())"

mkdir -p logs
LOG=logs/${JOB_NAME}_$(date +%Y%m%d_%H%M%S).log
echo "config: $CONFIG  gpus: $GPUS  port: $PORT  log: $LOG"

# ------------------------------ launch ------------------------------
if [ -n "$SLURM" ]; then
    srun -p ${PARTITION} \
        --job-name=${JOB_NAME} \
        --gres=gpu:${GPUS_PER_NODE} \
        --ntasks=${GPUS} \
        --ntasks-per-node=${GPUS_PER_NODE} \
        --cpus-per-task=${CPUS_PER_TASK} \
        --kill-on-bad-exit=1 \
        python -u basicsr/train.py -opt $CONFIG --launcher="slurm" ${@:3} 2>&1 | tee $LOG
else
    python -m torch.distributed.launch --nproc_per_node=$GPUS --master_port=$PORT \
        basicsr/train.py -opt $CONFIG --launcher pytorch ${@:3} 2>&1 | tee $LOG
fi

# ------------------------------ after training ------------------------------
LATEST=$(ls -t experiments/${JOB_NAME}/models/net_g_*.pth 2>/dev/null | head -n1)
if [ -n "$LATEST" ]; then
    echo "latest checkpoint: $LATEST"
    nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv
fi
