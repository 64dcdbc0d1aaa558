#!/usr/bin/env bash
# Launch MMDetection3D training on a Slurm cluster.
#
#   GPUS=16 GPUS_PER_NODE=8 ./tools/slurm_train.sh ${PARTITION} ${JOB_NAME} \
#       ${CONFIG} ${WORK_DIR} [--cfg-options ...]
#
# Every task runs one training process on one GPU; mmcv's init_dist('slurm')
# derives RANK / LOCAL_RANK / MASTER_ADDR from the SLURM_* variables.

set -ex

PARTITION=$1
JOB_NAME=$2
CONFIG=$3
WORK_DIR=$4
GPUS=${GPUS:-8}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}
CPUS_PER_TASK=${CPUS_PER_TASK:-5}
SRUN_ARGS=${SRUN_ARGS:-""}
PY_ARGS=${@:5}

# ---- environment ----------------------------------------------------------
module purge
module load gcc/9.3.0
module load cuda/11.3 cudnn/8.2.1 nccl/2.10.3
source activate ${CONDA_ENV:-openmmlab}

# NCCL over the cluster's InfiniBand fabric
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3
export NCCL_SOCKET_IFNAME=ib0
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_ASYNC_ERROR_HANDLING=1
export CUDA_DEVICE_MAX_CONNECTIONS=1
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-4}
export MKL_NUM_THREADS=${MKL_NUM_THREADS:-4}

# keep the same master port for all tasks of this job
export MASTER_PORT=${MASTER_PORT:-$((29500 + RANDOM % 1000))}

mkdir -p ${WORK_DIR}
# record the node inventory next to the logs
srun -p ${PARTITION} --ntasks-per-node=1 -N $((GPUS / GPUS_PER_NODE)) \
    --job-name=${JOB_NAME}-probe \
    nvidia-smi --query-gpu=index,name,memory.total,driver_version \
    --format=csv > ${WORK_DIR}/gpus.csv || true

PYTHONPATH="$(dirname $0)/..":$PYTHONPATH \
srun -p ${PARTITION} \
    --job-name=${JOB_NAME} \
    --gres=gpu:${GPUS_PER_NODE} \
    --ntasks=${GPUS} \
    --ntasks-per-node=${GPUS_PER_NODE} \
    --cpus-per-task=${CPUS_PER_TASK} \
    --kill-on-bad-exit=1 \
    ${SRUN_ARGS} \
    python -u tools/train.py ${CONFIG} --work-dir=${WORK_DIR} \
    --launcher="slurm" ${PY_ARGS}

# collect the last checkpoint path for the evaluation job
LATEST=$(ls -t ${WORK_DIR}/*.pth 2>/dev/null | head -n1)
echo "latest checkpoint: ${LATEST}"
if [ -n "${EVAL_AFTER_TRAIN}" ] && [ -n "${LATEST}" ]; then
    PYTHONPATH="$(dirname $0)/..":$PYTHONPATH \
    srun -p ${PARTITION} \
        --job-name=${JOB_NAME}-eval \
        --gres="gpu:${GPUS_PER_NODE}" \
        --ntasks=${GPUS_PER_NODE} \
        --ntasks-per-node=${GPUS_PER_NODE} \
        --cpus-per-task=${CPUS_PER_TASK} \
        --kill-on-bad-exit=1 \
        python -u tools/test.py ${CONFIG} ${LATEST} \
        --launcher="slurm" --eval bbox
fi
