#!/bin/bash
#SBATCH --job-name=avhubert_ft
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=8
#SBATCH --gres=gpu:8
#SBATCH --cpus-per-task=10
#SBATCH --mem=480G
#SBATCH --time=72:00:00
#SBATCH --output=logs/%x_%j.out
#SBATCH --error=logs/%x_%j.err

# Fine-tune AV-HuBERT (seq2seq) on LRS3 with fairseq-hydra-train across 2 nodes x 8 GPUs.
# Usage: sbatch scripts/finetune_slurm.sh <pretrained_ckpt> <lrs3_433h_data_dir> <exp_dir>

set -euo pipefail

PRETRAINED=${1:?pretrained checkpoint}
DATA_DIR=${2:?data dir with train.tsv/valid.tsv/*.wrd}
EXP_DIR=${3:?experiment dir}
CONFIG_NAME=${CONFIG_NAME:-large_vox_433h}

ROOT=$(cd "$(dirname "$0")/.." && pwd)
FAIRSEQ_ROOT=${ROOT}/../fairseq

module purge
module load cuda/11.3 cudnn/8.2 nccl/2.10
source ~/miniconda3/etc/profile.d/conda.sh
conda activate avhubert

export PYTHONPATH=${FAIRSEQ_ROOT}:${PYTHONPATH:-}
export OMP_NUM_THREADS=8
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=0
export NCCL_SOCKET_IFNAME=ib0
export NCCL_ASYNC_ERROR_HANDLING=1
export CUDA_DEVICE_MAX_CONNECTIONS=1
export HYDRA_FULL_ERROR=1

MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
MASTER_PORT=$((29500 + SLURM_JOB_ID % 1000))
WORLD_SIZE=$((SLURM_NNODES * 8))

echo "master=${MASTER_ADDR}:${MASTER_PORT} world_size=${WORLD_SIZE}"
nvidia-smi --query-gpu=index,name,memory.total --format=csv

mkdir -p "${EXP_DIR}" logs

srun --kill-on-bad-exit=1 fairseq-hydra-train \
    --config-dir "${ROOT}/conf/finetune" \
    --config-name "${CONFIG_NAME}" \
    task.data="${DATA_DIR}" \
    task.label_dir="${DATA_DIR}" \
    task.tokenizer_bpe_model="${DATA_DIR}/spm1000/spm_unigram1000.model" \
    task.noise_wav="${DATA_DIR}/noise/musan/tsv/all" \
    model.w2v_path="${PRETRAINED}" \
    hydra.run.dir="${EXP_DIR}" \
    common.user_dir="${ROOT}" \
    distributed_training.distributed_world_size=${WORLD_SIZE} \
    distributed_training.distributed_port=${MASTER_PORT} \
    distributed_training.nprocs_per_node=8 \
    +distributed_training.device_id=0

echo "done: $(date)"
