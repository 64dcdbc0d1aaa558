#!/bin/bash
# sh scripts/psgtr/train_psgtr_r50.sh
# check gpu usage:
# srun -p dsta --mpi=pmi2 --gres=gpu:8 -n1 --ntasks-per-node=1 --job-name=test --kill-on-bad-exit=1 -w SG-IDC1-10-51-2-76 nvidia-smi

GPUS=${GPUS:-8}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}
CPUS_PER_TASK=${CPUS_PER_TASK:-5}
PORT=${PORT:-29500}

PYTHONPATH='.':$PYTHONPATH \
srun -p dsta --mpi=pmi2 --gres=gpu:${GPUS_PER_NODE} --ntasks=${GPUS} \
    --ntasks-per-node=${GPUS_PER_NODE} --cpus-per-task=${CPUS_PER_TASK} \
    --job-name=psgtr_r50 --kill-on-bad-exit=1 -w SG-IDC1-10-51-2-73 \
    python -u tools/train.py \
    configs/psgtr/psgtr_r50_psg.py \
    --launcher slurm \
    --work-dir ./work_dirs/psgtr_r50_psg
