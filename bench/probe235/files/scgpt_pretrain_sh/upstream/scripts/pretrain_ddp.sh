#!/bin/bash
#SBATCH --job-name=scgpt-pretrain
#SBATCH --nodes=1
#SBATCH --gres=gpu:4
#SBATCH --cpus-per-task=32
#SBATCH --mem=400G
#SBATCH --time=72:00:00
#SBATCH --output=logs/%x-%j.out
#
# Whole-human pretraining of scGPT on the CellxGene census (scb format).
# Usage: sbatch scripts/pretrain_ddp.sh [DATA_PATH] [MAX_LENGTH]
set -euo pipefail

module load cuda/11.7
source "$HOME/miniconda3/etc/profile.d/conda.sh"
conda activate scgpt

DATA_PATH=${1:-"/scratch/data/cellxgene/scb_strict/human"}
MAX_LENGTH=${2:-1200}
BATCH_SIZE=32
LOG_INTERVAL=9000
JOB_NAME="cellxgene_census_human_${MAX_LENGTH}"

# one process per GPU; keep the visible set explicit so that reruns on shared
# nodes do not grab somebody else's card
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
N_GPU=$(nvidia-smi --list-gpus | wc -l)
if [ -n "${SLURM_GPUS_ON_NODE:-}" ]; then
    N_GPU=${SLURM_GPUS_ON_NODE}
fi

export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=1
export NCCL_P2P_LEVEL=NVL
export OMP_NUM_THREADS=8
export TOKENIZERS_PARALLELISM=false
export WANDB_MODE=offline
export PYTHONUNBUFFERED=1

MASTER_PORT=$((29500 + RANDOM % 1000))
SAVE_DIR="./save/${JOB_NAME}-$(date +%b%d-%H-%M-%Y)"
mkdir -p "${SAVE_DIR}" logs

echo "launching ${N_GPU} ranks on $(hostname), saving to ${SAVE_DIR}"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv

torchrun \
    --nproc_per_node="${N_GPU}" \
    --master_port="${MASTER_PORT}" \
    examples/pretrain.py \
    --data-source "${DATA_PATH}" \
    --save-dir "${SAVE_DIR}" \
    --vocab-path "${DATA_PATH}/default_census_vocab.json" \
    --max-seq-len "${MAX_LENGTH}" \
    --batch-size "${BATCH_SIZE}" \
    --eval-batch-size $((BATCH_SIZE * 2)) \
    --nlayers 12 \
    --nheads 8 \
    --embsize 512 \
    --d-hid 512 \
    --grad-accu-steps 1 \
    --epochs 6 \
    --lr 0.0001 \
    --warmup-ratio-or-step 10000 \
    --valid-size-or-ratio 0.003 \
    --log-interval "${LOG_INTERVAL}" \
    --save-interval $((LOG_INTERVAL * 3)) \
    --trunc-by-sample \
    --no-cls \
    --no-cce \
    --fp16 \
    --fast-transformer |
    awk '{ print strftime("[%Y-%m-%d %H:%M:%S]"), $0; fflush(); }' | tee "${SAVE_DIR}/run.log"
