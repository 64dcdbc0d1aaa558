#!/usr/bin/env bash
# Train CDTNet-256 / CDTNet-1024 on HAdobe5k.
# The trilinear LUT extension must be built first:
#   cd trilinear_cpp && python setup.py install && cd ..

MODEL=${MODEL:-models/CDTNet.py}
EXP_NAME=${EXP_NAME:-CDTNet_1024}
GPUS=${GPUS:-0,1}
WORKERS=${WORKERS:-16}

export OMP_NUM_THREADS=4
export NCCL_P2P_DISABLE=1

echo "Using GPUs ${GPUS}"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

python3 train.py ${MODEL} \
    --workers=${WORKERS} \
    --gpus=${GPUS} \
    --exp-name=${EXP_NAME} \
    --batch_size=4
