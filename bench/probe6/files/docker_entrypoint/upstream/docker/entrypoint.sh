#!/bin/bash
# Container entrypoint for the training / serving image.
#   docker run --gpus all --ipc=host -e MODE=train -v /data:/data image:latest [args]
# MODE=train   -> torchrun over all visible GPUs
# MODE=serve   -> start the inference server
# MODE=shell   -> interactive shell
set -e

log() { echo "[entrypoint $(date +%H:%M:%S)] $*"; }

# ----------------------------------------------------------------------------
# Toolkit / driver sanity
# ----------------------------------------------------------------------------
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export LD_LIBRARY_PATH=${CUDA_HOME}/lib64:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH}
export NVIDIA_VISIBLE_DEVICES=${NVIDIA_VISIBLE_DEVICES:-all}
export NVIDIA_DRIVER_CAPABILITIES=compute,utility

if ! command -v nvidia-smi >/dev/null 2>&1; then
  log "nvidia-smi not found: was the container started with --gpus all?"
  exit 1
fi
NUM_GPUS=${NUM_GPUS:-$(nvidia-smi -L | wc -l)}
log "found ${NUM_GPUS} GPU(s)"
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv

# ----------------------------------------------------------------------------
# Optional: (re)build the custom kernels for the GPUs in this machine
# ----------------------------------------------------------------------------
if [ "${REBUILD_KERNELS:-0}" = "1" ]; then
  CC_MAJOR=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n1 | cut -d. -f1)
  CC_MINOR=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n1 | cut -d. -f2)
  export TORCH_CUDA_ARCH_LIST="${CC_MAJOR}.${CC_MINOR}"
  log "rebuilding kernels for sm_${CC_MAJOR}${CC_MINOR}"
  pip install --no-build-isolation -e /workspace/csrc
  MAX_JOBS=8 pip install flash-attn==2.5.8 --no-build-isolation
fi

python - <<'PY'
import torch
assert torch.cuda.is_available(), "CUDA not available inside the container"
print("torch", torch.__version__, "cuda", torch.version.cuda, "devices", torch.cuda.device_count())
PY

# ----------------------------------------------------------------------------
# Runtime tuning
# ----------------------------------------------------------------------------
export NCCL_P2P_LEVEL=NVL
export NCCL_SHM_DISABLE=0
export CUDA_MODULE_LOADING=LAZY
export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-8}
export HF_HOME=${HF_HOME:-/data/hf_cache}
ulimit -n 65535 || true

# ----------------------------------------------------------------------------
# Dispatch
# ----------------------------------------------------------------------------
MODE=${MODE:-train}
case "${MODE}" in
  train)
    CONFIG=${CONFIG:-/workspace/configs/train.yaml}
    log "training with ${CONFIG} on ${NUM_GPUS} GPU(s)"
    exec torchrun --standalone --nproc_per_node="${NUM_GPUS}" \
      /workspace/train.py --config "${CONFIG}" "$@"
    ;;
  serve)
    PORT=${PORT:-8000}
    DEVICE=${DEVICE:-cuda:0}
    log "serving on :${PORT} (${DEVICE})"
    exec python -m server.app --port "${PORT}" --device "${DEVICE}" --dtype float16 "$@"
    ;;
  bench)
    log "running microbenchmarks"
    python /workspace/tools/bench_attention.py --backend flash --dtype bf16
    nsys profile -o /data/profiles/bench --trace=cuda,nvtx python /workspace/tools/bench_step.py
    ;;
  shell)
    exec /bin/bash
    ;;
  *)
    log "unknown MODE=${MODE}"
    exit 2
    ;;
esac
