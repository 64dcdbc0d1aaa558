#!/usr/bin/env bash
# Build the Python-backend execution environment, then start Triton Inference Server in a
# container with the model repository mounted.  Used by CI (perf job) and by the
# docker-compose.yml in deploy/.
#
#   ./scripts/launch_triton_server.sh [--gpus 0,1] [--pack-env] [--perf]
set -euo pipefail

TRITON_VERSION=${TRITON_VERSION:-24.01}
IMAGE=${IMAGE:-nvcr.io/nvidia/tritonserver:${TRITON_VERSION}-py3}
REPO_DIR=$(cd "$(dirname "$0")/.." && pwd)
MODEL_REPO=${MODEL_REPO:-${REPO_DIR}/model_repository}
GPUS=${GPUS:-0}
PACK_ENV=0
RUN_PERF=0
HTTP_PORT=${HTTP_PORT:-8000}
GRPC_PORT=${GRPC_PORT:-8001}
METRICS_PORT=${METRICS_PORT:-8002}

while [[ $# -gt 0 ]]; do
  case "$1" in
    --gpus) GPUS="$2"; shift 2 ;;
    --pack-env) PACK_ENV=1; shift ;;
    --perf) RUN_PERF=1; shift ;;
    *) echo "unknown option $1" >&2; exit 1 ;;
  esac
done

log() { echo "[$(date +%H:%M:%S)] $*"; }

# ---------------------------------------------------------------- sanity checks
if ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "nvidia-smi not found: this script needs an NVIDIA driver" >&2
  exit 1
fi
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv

# ---------------------------------------------------------------- python env for the LLM model
if [[ ${PACK_ENV} -eq 1 ]]; then
  log "packing conda env for the python backend"
  ENV_NAME=hf-py310-cu121
  conda create -y -n ${ENV_NAME} python=3.10
  conda install -y -n ${ENV_NAME} -c pytorch -c nvidia pytorch==2.1.2 pytorch-cuda=12.1
  conda run -n ${ENV_NAME} pip install "transformers==4.38.2" "accelerate>=0.27" sentencepiece
  conda run -n ${ENV_NAME} pip install flash-attn==2.5.6 --no-build-isolation
  conda run -n ${ENV_NAME} pip install conda-pack
  export PYTHONNOUSERSITE=True
  mkdir -p "${MODEL_REPO}/llm/envs"
  conda run -n ${ENV_NAME} conda-pack -n ${ENV_NAME} -o "${MODEL_REPO}/llm/envs/${ENV_NAME}.tar.gz" --force
fi

# ---------------------------------------------------------------- repository sanity
for cfg in "${MODEL_REPO}"/*/config.pbtxt; do
  model=$(basename "$(dirname "${cfg}")")
  if ! ls "$(dirname "${cfg}")"/[0-9]* >/dev/null 2>&1; then
    echo "model ${model} has no version directory" >&2
    exit 1
  fi
  if grep -q 'backend: "python"' "${cfg}"; then
    env_path=$(grep -A1 EXECUTION_ENV_PATH "${cfg}" | grep -o '[^/]*\.tar\.gz' || true)
    if [[ -n "${env_path}" && ! -f "${MODEL_REPO}/${model}/envs/${env_path}" ]]; then
      echo "model ${model}: packed env ${env_path} missing (run with --pack-env)" >&2
      exit 1
    fi
  fi
  log "model ${model}: ok"
done

# ---------------------------------------------------------------- start the server
log "starting ${IMAGE} on GPUs ${GPUS}"
docker rm -f triton-serving >/dev/null 2>&1 || true
docker run -d --name triton-serving \
  --gpus "\"device=${GPUS}\"" \
  --shm-size=4g --ulimit memlock=-1 --ulimit stack=67108864 \
  -e CUDA_VISIBLE_DEVICES=${GPUS} \
  -p ${HTTP_PORT}:8000 -p ${GRPC_PORT}:8001 -p ${METRICS_PORT}:8002 \
  -v "${MODEL_REPO}:/models" \
  "${IMAGE}" \
  tritonserver --model-repository=/models \
    --backend-config=python,shm-default-byte-size=16777216 \
    --pinned-memory-pool-byte-size=268435456 \
    --log-verbose=0

log "waiting for server readiness"
for _ in $(seq 1 120); do
  if curl -sf "localhost:${HTTP_PORT}/v2/health/ready" >/dev/null; then
    log "server is ready"
    break
  fi
  sleep 2
done
curl -sf "localhost:${HTTP_PORT}/v2/health/ready" >/dev/null || { docker logs triton-serving; exit 1; }

# ---------------------------------------------------------------- optional perf run
if [[ ${RUN_PERF} -eq 1 ]]; then
  log "perf_analyzer on preprocessing_ensemble"
  docker run --rm --net=host --gpus all \
    -v "${REPO_DIR}/client:/client" \
    "nvcr.io/nvidia/tritonserver:${TRITON_VERSION}-py3-sdk" \
    perf_analyzer -m preprocessing_ensemble -u localhost:${GRPC_PORT} -i grpc \
      --input-data /client/perf_inputs.json \
      --shared-memory cuda --output-shared-memory-size 4096000 \
      --concurrency-range 1:16:2 -b 8
  curl -s "localhost:${METRICS_PORT}/metrics" | grep -E "nv_gpu_utilization|nv_inference_count" || true
fi
