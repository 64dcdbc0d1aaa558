#!/usr/bin/env bash
# Train the SynthMorph deformable hyper-network on one node.
#
#   scripts/train_synthmorph.sh /data/synth/labels runs/deform-256 [NGPUS]
#
# Expects 256^3 1-mm label maps (FreeSurfer aseg/SynthSeg style). A 4-GPU A100 node
# reaches ~400k steps in about five days with --amp.
set -euo pipefail

LABELS=${1:?label directory}
OUT=${2:?output directory}
NGPUS=${3:-4}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_P2P_DISABLE=0
export OMP_NUM_THREADS=4
export PYTHONUNBUFFERED=1

mkdir -p "${OUT}"

# record the hardware next to the run for later comparison
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv > "${OUT}/gpus.csv"
git rev-parse HEAD > "${OUT}/commit.txt" 2>/dev/null || true

torchrun \
    --standalone \
    --nproc_per_node "${NGPUS}" \
    scripts/train_synthmorph.py \
    --labels "${LABELS}" \
    --out "${OUT}" \
    --num-labels 26 \
    --batch-size 1 \
    --extent 256 \
    --amp \
    --workers 6 \
    2>&1 | tee "${OUT}/train.log"

# keep only the last checkpoint plus every 50k
ls "${OUT}"/*.pt | sort | head -n -1 | awk -F/ '{print $NF}' | while read -r f; do
    step=${f%.pt}
    if (( 10#${step} % 50000 != 0 )); then rm -f "${OUT}/${f}"; fi
done
