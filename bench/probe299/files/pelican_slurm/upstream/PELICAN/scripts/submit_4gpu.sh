#!/bin/bash
#SBATCH --job-name=pelican-top
#SBATCH --partition=gpu
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=32
#SBATCH --gres=gpu:a100:4
#SBATCH --mem=128G
#SBATCH --time=2-00:00:00
#SBATCH --output=logs/%x-%j.out
#SBATCH --error=logs/%x-%j.err

# Train the PELICAN top-tagging classifier on 4 GPUs of one node with torchrun (DDP).
#
#   sbatch scripts/submit_4gpu.sh <prefix> [extra args]
#
# The number of GPUs is taken from SLURM so the script also works with --gres=gpu:2 etc.

set -euo pipefail

PREFIX=${1:-pelican_top_4gpu}
shift || true

module purge
module load gcc/11.2.0
module load cuda/11.8
module load anaconda3/2023.03
source activate pelican

NGPUS=$(echo "${CUDA_VISIBLE_DEVICES:-0}" | tr ',' '\n' | wc -l)
echo "Running on $(hostname) with ${NGPUS} GPUs: ${CUDA_VISIBLE_DEVICES:-unset}"
nvidia-smi

export OMP_NUM_THREADS=8
export NCCL_DEBUG=WARN
export NCCL_ASYNC_ERROR_HANDLING=1
export NCCL_SOCKET_IFNAME=ib0

DATADIR=${DATADIR:-/scratch/${USER}/data/toptag}
LOGDIR=${LOGDIR:-./log}

mkdir -p logs "${LOGDIR}"

torchrun --standalone --nnodes=1 --nproc_per_node="${NGPUS}" \
    train_pelican_classifier.py \
    --datadir="${DATADIR}" --target=is_signal --nobj=80 --nobj-avg=49 \
    --num-epoch=35 --num-train=-1 --num-valid=60000 --batch-size=64 \
    --prefix="${PREFIX}" --logdir="${LOGDIR}" \
    --optim=adamw --activation=leakyrelu --factorize --masked --scale=1 \
    --lr-decay-type=warm --lr-init=0.0025 --lr-final=1e-6 --drop-rate=0.05 --drop-rate-out=0.05 \
    --weight-decay=0.005 --reproducible --no-fix-data \
    --config=M --config-out=M \
    --cuda --amp \
    "$@"
