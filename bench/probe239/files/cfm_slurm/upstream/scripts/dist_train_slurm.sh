#!/usr/bin/env bash
#SBATCH --job-name=colorformer
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=8
#SBATCH --gres=gpu:8
#SBATCH --cpus-per-task=10
#SBATCH --partition=a100
#SBATCH --output=logs/%x-%j.out
#
# Usage: sbatch scripts/dist_train_slurm.sh options/train/train_colorformer.yml
# basicsr reads SLURM_PROCID / SLURM_NTASKS / SLURM_NODELIST itself (launcher=slurm)

set -x

CONFIG=$1
PY_ARGS=${@:2}

module load cuda/11.7 cudnn/8.5
source ~/miniconda3/etc/profile.d/conda.sh
conda activate colorformer

export MASTER_PORT=${MASTER_PORT:-29513}
export NCCL_DEBUG=WARN
export NCCL_SOCKET_IFNAME=ib0
export NCCL_IB_DISABLE=0
export OMP_NUM_THREADS=4

PYTHONPATH="$(dirname $0)/..":${PYTHONPATH} \
srun --kill-on-bad-exit=1 \
    python -u basicsr/train.py -opt ${CONFIG} --launcher="slurm" ${PY_ARGS}
