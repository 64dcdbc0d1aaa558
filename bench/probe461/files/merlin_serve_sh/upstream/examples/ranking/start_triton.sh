#!/usr/bin/env bash
# Launch Triton Inference Server with the exported Merlin ranking ensemble
# (QueryFeast -> TransformWorkflow -> PredictPyTorch).
set -euo pipefail

MODEL_REPO=${MODEL_REPO:-/workspace/data/ensemble}
FEATURE_REPO=${FEATURE_REPO:-/workspace/data/feature_repo}
GPU_ID=${GPU_ID:-0}

# feast online store (sqlite) must be materialized before the ensemble is loaded
(cd "$FEATURE_REPO" && feast materialize-incremental "$(date -u +%Y-%m-%dT%H:%M:%S)")

# serve from a single GPU; the python backend stubs inherit this mask
export CUDA_VISIBLE_DEVICES=${GPU_ID}

nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

tritonserver \
    --model-repository="${MODEL_REPO}" \
    --backend-config=tensorflow,version=2 \
    --backend-config=python,shm-default-byte-size=67108864 \
    --cuda-memory-pool-byte-size=${GPU_ID}:268435456 \
    --log-verbose=1 \
    --http-port=8000 --grpc-port=8001 --metrics-port=8002
