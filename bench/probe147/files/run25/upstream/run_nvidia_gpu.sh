#!/usr/bin/env bash
# Launch ComfyUI on a shared multi-GPU workstation.
# usage: ./run_nvidia_gpu.sh [gpu_index] [extra comfy args...]
set -e

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$HERE"

GPU="${1:-0}"
shift || true

if [ -d "venv" ]; then
    # shellcheck disable=SC1091
    source venv/bin/activate
fi

# one ComfyUI instance per card, port 8188 + index
PORT=$((8188 + GPU))

export CUDA_DEVICE_ORDER=PCI_BUS_ID
export CUDA_MODULE_LOADING=LAZY
export TORCH_CUDNN_V8_API_ENABLED=1

echo "Starting ComfyUI on GPU ${GPU} (port ${PORT})"
nvidia-smi -i "${GPU}" --query-gpu=name,memory.used,memory.total --format=csv,noheader || true

python main.py --cuda-device "${GPU}" --port "${PORT}" --listen 0.0.0.0 \
    --preview-method auto --use-pytorch-cross-attention "$@"
