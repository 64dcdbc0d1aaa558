#!/bin/bash
#SBATCH --job-name=vitl-pretrain
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=1
#SBATCH --gres=gpu:8
#SBATCH --cpus-per-task=96
#SBATCH --mem=0
#SBATCH --partition=a100-80g
#SBATCH --time=72:00:00
#SBATCH --signal=B:USR1@300
#SBATCH --output=logs/%x-%j.out
#SBATCH --exclusive
#
# Multi-node pre-training launcher: one srun task per node, torchrun spawns one worker per
# device. Requeues itself five minutes before the time limit; the trainer resumes from the
# newest checkpoint in $CKPT_DIR.
#
#   sbatch scripts/slurm/train_multinode.sh configs/vit_l16_in21k.yaml

set -euo pipefail

CONFIG=${1:?usage: sbatch train_multinode.sh CONFIG}
RUN_NAME=${RUN_NAME:-$(basename "${CONFIG%.*}")}
CKPT_DIR=${CKPT_DIR:-/checkpoints/${USER}/${RUN_NAME}}
DEVICES_PER_NODE=${DEVICES_PER_NODE:-8}
mkdir -p logs "${CKPT_DIR}"

# ---------------------------------------------------------------- software environment
module purge
module load gcc/11.3 cuda/12.1 cudnn/8.9.2 nccl/2.18.3
source "${HOME}/miniconda3/etc/profile.d/conda.sh"
conda activate pt21

# ---------------------------------------------------------------- rendezvous
MASTER_ADDR=$(scontrol show hostnames "${SLURM_JOB_NODELIST}" | head -n 1)
MASTER_PORT=$((20000 + SLURM_JOB_ID % 20000))
export MASTER_ADDR MASTER_PORT

# ---------------------------------------------------------------- communication tuning
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_SOCKET_IFNAME=ib0
export GLOO_SOCKET_IFNAME=ib0
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3
export NCCL_IB_GID_INDEX=3
export NCCL_NET_GDR_LEVEL=PHB
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1

# ---------------------------------------------------------------- runtime
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
export CUDA_LAUNCH_BLOCKING=${DEBUG_SYNC:-0}
export OMP_NUM_THREADS=8
export TOKENIZERS_PARALLELISM=false
export PYTHONUNBUFFERED=1

# ---------------------------------------------------------------- bookkeeping
echo "job ${SLURM_JOB_ID} on ${SLURM_JOB_NUM_NODES} nodes: ${SLURM_JOB_NODELIST}"
echo "master ${MASTER_ADDR}:${MASTER_PORT}, ${DEVICES_PER_NODE} devices per node"
git rev-parse --short HEAD 2>/dev/null | sed 's/^/commit /' || true
nvidia-smi topo -m > "logs/topo-${SLURM_JOB_ID}.txt"
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv > "logs/devices-${SLURM_JOB_ID}.csv"

latest_checkpoint() {
    ls -1t "${CKPT_DIR}"/step_*.pt 2>/dev/null | head -n 1 || true
}

requeue() {
    echo "$(date) caught USR1: requeueing ${SLURM_JOB_ID}"
    scontrol requeue "${SLURM_JOB_ID}"
    exit 0
}
trap requeue USR1

RESUME_ARGS=()
CKPT=$(latest_checkpoint)
if [[ -n "${CKPT}" ]]; then
    echo "resuming from ${CKPT}"
    RESUME_ARGS=(--resume "${CKPT}")
fi

# ---------------------------------------------------------------- launch
srun --kill-on-bad-exit=1 --cpu-bind=none \
    torchrun \
        --nnodes="${SLURM_JOB_NUM_NODES}" \
        --nproc_per_node="${DEVICES_PER_NODE}" \
        --rdzv_id="${SLURM_JOB_ID}" \
        --rdzv_backend=c10d \
        --rdzv_endpoint="${MASTER_ADDR}:${MASTER_PORT}" \
        --max_restarts=0 \
    train.py \
        --config "${CONFIG}" \
        --output-dir "${CKPT_DIR}" \
        --dist-backend nccl \
        "${RESUME_ARGS[@]}" &

wait $!
