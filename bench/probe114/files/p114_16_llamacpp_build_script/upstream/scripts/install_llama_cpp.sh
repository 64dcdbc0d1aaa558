#!/usr/bin/env bash
# Rebuild llama-cpp-python with GPU offload for the local RAG stack.
#
# The PyPI sdist builds a CPU-only library by default, which makes n_gpu_layers a silent no-op.
# This script detects the CUDA toolkit, picks the right architectures and rebuilds the wheel.
#
#   ./scripts/install_llama_cpp.sh            # build for the GPU in this box
#   ./scripts/install_llama_cpp.sh --version 0.2.90 --all-archs
set -euo pipefail

LLAMA_CPP_VERSION="0.2.90"
ALL_ARCHS=0
VENV="${VENV:-.venv}"

while [[ $# -gt 0 ]]; do
  case "$1" in
    --version) LLAMA_CPP_VERSION="$2"; shift 2 ;;
    --all-archs) ALL_ARCHS=1; shift ;;
    -h|--help)
      sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "unknown option: $1" >&2; exit 1 ;;
  esac
done

log() { printf '\033[1;34m[llama-cpp]\033[0m %s\n' "$*"; }
die() { printf '\033[1;31m[llama-cpp]\033[0m %s\n' "$*" >&2; exit 1; }

# --------------------------------------------------------------------------- toolchain
export CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
export PATH="${CUDA_HOME}/bin:${PATH}"
export LD_LIBRARY_PATH="${CUDA_HOME}/lib64:${LD_LIBRARY_PATH:-}"

command -v cmake >/dev/null || die "cmake not found (apt install cmake, or pip install cmake)"
command -v nvcc >/dev/null || die "nvcc not found under ${CUDA_HOME}; install the CUDA toolkit"
command -v nvidia-smi >/dev/null || die "nvidia-smi not found; is the NVIDIA driver installed?"

NVCC_VERSION="$(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')"
log "CUDA toolkit ${NVCC_VERSION} at ${CUDA_HOME}"

if [[ "${ALL_ARCHS}" == "1" ]]; then
  CUDA_ARCHS="all-major"
else
  # compute capability of GPU 0, e.g. 8.6 -> 86
  CC="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n1 | tr -d '.')"
  [[ -n "${CC}" ]] || die "could not query compute capability"
  CUDA_ARCHS="${CC}"
fi
log "building for CUDA architectures: ${CUDA_ARCHS}"

# --------------------------------------------------------------------------- venv
if [[ ! -d "${VENV}" ]]; then
  log "creating venv ${VENV}"
  python3 -m venv "${VENV}"
fi
# shellcheck disable=SC1091
source "${VENV}/bin/activate"
python -m pip install --upgrade pip wheel scikit-build-core >/dev/null

# --------------------------------------------------------------------------- build
export CMAKE_ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCHS} -DGGML_CUDA_F16=on"
export FORCE_CMAKE=1
export CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)"

log "pip install llama-cpp-python==${LLAMA_CPP_VERSION} (this takes a few minutes)"
pip install --no-cache-dir --force-reinstall --upgrade \
  "llama-cpp-python[server]==${LLAMA_CPP_VERSION}"

# --------------------------------------------------------------------------- verify
python - <<'PY'
import llama_cpp
ok = llama_cpp.llama_supports_gpu_offload()
print(f"llama_cpp {llama_cpp.__version__}: GPU offload supported = {ok}")
raise SystemExit(0 if ok else 1)
PY
log "done. Set MODEL_N_GPU_LAYERS=-1 in .env to offload all layers."

# quick smoke test if a model is around
if [[ -n "${SMOKE_MODEL:-}" && -f "${SMOKE_MODEL}" ]]; then
  log "smoke test with ${SMOKE_MODEL}"
  CUDA_VISIBLE_DEVICES=0 python -m llama_cpp.server --model "${SMOKE_MODEL}" --n_gpu_layers -1 --port 8765 &
  SERVER_PID=$!
  trap 'kill ${SERVER_PID} 2>/dev/null || true' EXIT
  for _ in $(seq 1 30); do
    curl -sf http://127.0.0.1:8765/v1/models >/dev/null && break
    sleep 2
  done
  curl -s http://127.0.0.1:8765/v1/completions \
    -H 'Content-Type: application/json' \
    -d '{"prompt": "The capital of France is", "max_tokens": 8}' | python -m json.tool
fi
