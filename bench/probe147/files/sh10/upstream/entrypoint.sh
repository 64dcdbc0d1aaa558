#!/usr/bin/env bash
# Container entrypoint for ComfyUI on NVIDIA GPUs.
set -euo pipefail

cd /opt/ComfyUI

# Pick the GPU(s) for this container replica. GPU_ID comes from the compose file.
if [[ -n "${GPU_ID:-}" ]]; then
    export CUDA_VISIBLE_DEVICES="${GPU_ID}"
fi
echo "[entrypoint] CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-all}"

# Show what we are running on
if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader
else
    echo "[entrypoint] nvidia-smi not found, is the NVIDIA container toolkit installed?" >&2
fi

python - <<'PY'
import torch
print("torch", torch.__version__, "cuda", torch.version.cuda)
print("cuda available:", torch.cuda.is_available(), "devices:", torch.cuda.device_count())
PY

# Allocator tuning for large SDXL / Flux workflows
export PYTORCH_CUDA_ALLOC_CONF="${PYTORCH_CUDA_ALLOC_CONF:-expandable_segments:True}"

# Install requirements of any custom node that was mounted at runtime
for req in custom_nodes/*/requirements.txt; do
    [[ -f "$req" ]] || continue
    echo "[entrypoint] installing $req"
    pip install --no-cache-dir -q -r "$req" || echo "[entrypoint] failed: $req" >&2
done

EXTRA_ARGS=()
if [[ "${COMFY_LOWVRAM:-0}" == "1" ]]; then
    EXTRA_ARGS+=(--lowvram)
fi
if [[ "${COMFY_HIGHVRAM:-0}" == "1" ]]; then
    EXTRA_ARGS+=(--highvram)
fi
if [[ "${COMFY_FP16_VAE:-0}" == "1" ]]; then
    EXTRA_ARGS+=(--fp16-vae)
fi

exec "$@" "${EXTRA_ARGS[@]}"
