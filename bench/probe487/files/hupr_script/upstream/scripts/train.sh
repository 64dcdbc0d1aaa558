#!/bin/bash
# Train HuPR on two GPUs (DataParallel) and evaluate the best checkpoint.
set -e
cd "$(dirname "$0")/.."

export OMP_NUM_THREADS=8
GPUS=${GPUS:-0,1}

python main.py --config mscsa_prgcn.yaml --dir mscsa_prgcn --gpuIDs ${GPUS}
python main.py --config mscsa_prgcn.yaml --dir mscsa_prgcn --gpuIDs ${GPUS%%,*} --eval --loadModel mscsa_prgcn

# quick look at GPU utilisation while it runs
nvidia-smi --query-gpu=index,name,utilization.gpu,memory.used --format=csv
