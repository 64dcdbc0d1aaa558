#!/usr/bin/env bash
# Train MonoSDF (MLP / grids variants) on the ScanNet scenes used in the paper.
#
# Usage:
#   bash scripts/train_scannet_multigpu.sh <scan_id> [grids|mlp] [num_gpus]
#
# Needs a CUDA machine with at least 24GB per GPU for the grids variant; the
# MLP variant fits in 12GB. Monocular cues (depth + normal) must have been
# extracted beforehand with preprocess/extract_monocular_cues.py.

set -euo pipefail

SCAN_ID=${1:-1}
VARIANT=${2:-grids}
NUM_GPUS=${3:-4}

ROOT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CODE_DIR="${ROOT_DIR}/code"
DATA_DIR="${ROOT_DIR}/data/scannet"
EXP_DIR="${ROOT_DIR}/exps"

if [[ "${VARIANT}" == "grids" ]]; then
    CONF="confs/scannet_grids.conf"
else
    CONF="confs/scannet_mlp.conf"
fi

# ---------------------------------------------------------------------------
# Environment
# ---------------------------------------------------------------------------
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
export OMP_NUM_THREADS=4
export NCCL_P2P_DISABLE=1
export NCCL_IB_DISABLE=1
export NCCL_DEBUG=WARN
export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512
export TCNN_CUDA_ARCHITECTURES=86

MASTER_PORT=${MASTER_PORT:-$((29500 + RANDOM % 1000))}

echo "== MonoSDF / ScanNet scan ${SCAN_ID} (${VARIANT}) on ${NUM_GPUS} GPU(s) =="
nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv

if [[ ! -d "${DATA_DIR}/scan${SCAN_ID}" ]]; then
    echo "missing ${DATA_DIR}/scan${SCAN_ID}; run preprocess/scannet_to_monosdf.py first" >&2
    exit 1
fi

mkdir -p "${EXP_DIR}"
cd "${CODE_DIR}"

# ---------------------------------------------------------------------------
# Train
# ---------------------------------------------------------------------------
python -m torch.distributed.launch \
    --nproc_per_node "${NUM_GPUS}" \
    --nnodes=1 \
    --node_rank=0 \
    --master_port "${MASTER_PORT}" \
    training/exp_runner.py \
    --conf "${CONF}" \
    --scan_id "${SCAN_ID}" \
    --exps_folder "${EXP_DIR}" \
    --gpu auto

# ---------------------------------------------------------------------------
# Extract mesh from the latest checkpoint (single GPU is enough)
# ---------------------------------------------------------------------------
LATEST=$(ls -td "${EXP_DIR}"/scannet_"${VARIANT}"_"${SCAN_ID}"/*/ | head -n 1)
echo "latest run: ${LATEST}"

CUDA_VISIBLE_DEVICES=0 python evaluation/eval.py \
    --conf "${CONF}" \
    --scan_id "${SCAN_ID}" \
    --resolution 512 \
    --eval_rendering \
    --evals_folder "${ROOT_DIR}/evals" \
    --checkpoint latest \
    --timestamp "$(basename "${LATEST}")"

# ---------------------------------------------------------------------------
# Cull and evaluate against the ScanNet GT mesh (CPU only, uses open3d)
# ---------------------------------------------------------------------------
python ../scannet_eval/evaluate_single_scene.py \
    --input_mesh "${ROOT_DIR}/evals/scan${SCAN_ID}/scan${SCAN_ID}_mesh.ply" \
    --scan_id "${SCAN_ID}" \
    --output_dir "${ROOT_DIR}/evals/scan${SCAN_ID}"

echo "done. peak memory per GPU:"
nvidia-smi --query-gpu=index,memory.used --format=csv,noheader
