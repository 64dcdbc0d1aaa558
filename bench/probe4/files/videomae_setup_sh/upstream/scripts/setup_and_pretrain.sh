#!/usr/bin/env bash
# One-shot environment setup + VideoMAE-style pre-training launcher for a fresh 8-GPU node.
# Mirrors what our Dockerfile does (base image nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04),
# so it can also be run on bare metal.
#
#   bash scripts/setup_and_pretrain.sh /data/ssv2 /ckpt/videomae_vit_b
#
set -euo pipefail

DATA_PATH=${1:-/data/ssv2}
OUTPUT_DIR=${2:-./work_dirs/videomae_vit_b_ssv2}
CONDA_ENV=${CONDA_ENV:-videomae}
PYTHON_VERSION=${PYTHON_VERSION:-3.10}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda-11.8}
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29500}

log() { echo "[$(date +'%F %T')] $*"; }

# ------------------------------------------------------------------------------------------
# 0. sanity checks
# ------------------------------------------------------------------------------------------
if ! command -v nvidia-smi >/dev/null 2>&1; then
    echo "nvidia-smi not found: is the NVIDIA driver installed?" >&2
    exit 1
fi
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv
NUM_GPUS=$(nvidia-smi --list-gpus | wc -l)
log "found ${NUM_GPUS} GPUs"

export CUDA_HOME
export PATH=${CUDA_HOME}/bin:${PATH}
export LD_LIBRARY_PATH=${CUDA_HOME}/lib64:${LD_LIBRARY_PATH:-}
nvcc --version | tail -n 1

# ------------------------------------------------------------------------------------------
# 1. python environment
# ------------------------------------------------------------------------------------------
if ! conda env list | grep -q "^${CONDA_ENV} "; then
    conda create -y -n "${CONDA_ENV}" python="${PYTHON_VERSION}"
fi
# shellcheck disable=SC1091
source "$(conda info --base)/etc/profile.d/conda.sh"
conda activate "${CONDA_ENV}"

pip install --upgrade pip wheel setuptools
pip install torch==2.1.2 torchvision==0.16.2 --index-url https://download.pytorch.org/whl/cu118
pip install timm==0.4.12 decord==0.6.0 einops tensorboardX deepspeed==0.12.6 av
pip install -U xformers==0.0.23.post1 --index-url https://download.pytorch.org/whl/cu118

# fused kernels from apex (FusedAdam / FusedLayerNorm) -- built from source against this CUDA
if ! python -c "import apex" 2>/dev/null; then
    git clone https://github.com/NVIDIA/apex /tmp/apex
    pushd /tmp/apex
    export TORCH_CUDA_ARCH_LIST="8.0;8.6;9.0"
    pip install -v --disable-pip-version-check --no-cache-dir --no-build-isolation \
        --config-settings "--build-option=--cpp_ext" --config-settings "--build-option=--cuda_ext" ./
    popd
fi

python - <<'PY'
import torch
print("torch", torch.__version__, "cuda", torch.version.cuda, "devices", torch.cuda.device_count())
assert torch.cuda.is_available()
PY

# ------------------------------------------------------------------------------------------
# 2. runtime knobs
# ------------------------------------------------------------------------------------------
export OMP_NUM_THREADS=8
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=0
export NCCL_SOCKET_IFNAME=eth0
export CUDA_DEVICE_MAX_CONNECTIONS=1
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}

mkdir -p "${OUTPUT_DIR}"

# ------------------------------------------------------------------------------------------
# 3. launch pre-training (mask ratio 0.9, tube masking, ViT-B/16, 800 epochs)
# ------------------------------------------------------------------------------------------
log "launching pre-training on ${NNODES} node(s) x ${NUM_GPUS} GPUs"
torchrun --nnodes="${NNODES}" --node_rank="${NODE_RANK}" --nproc_per_node="${NUM_GPUS}" \
    --master_addr="${MASTER_ADDR}" --master_port="${MASTER_PORT}" \
    run_mae_pretraining.py \
    --data_path "${DATA_PATH}" \
    --mask_type tube \
    --mask_ratio 0.9 \
    --model pretrain_videomae_base_patch16_224 \
    --decoder_depth 4 \
    --batch_size 32 \
    --num_frames 16 \
    --sampling_rate 2 \
    --opt adamw \
    --opt_betas 0.9 0.95 \
    --warmup_epochs 40 \
    --save_ckpt_freq 20 \
    --epochs 801 \
    --dist_backend nccl \
    --log_dir "${OUTPUT_DIR}" \
    --output_dir "${OUTPUT_DIR}" \
    2>&1 | tee -a "${OUTPUT_DIR}/train_rank${NODE_RANK}.log"

log "peak GPU memory per device:"
nvidia-smi --query-gpu=index,memory.used --format=csv
