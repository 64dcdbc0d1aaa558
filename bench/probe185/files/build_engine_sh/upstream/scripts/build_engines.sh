#!/usr/bin/env bash
# Build TensorRT engines for every exported ONNX model and record latency.
#
# usage: scripts/build_engines.sh <onnx_dir> [gpu_id] [precision]
#   precision: fp16 | int8 | best   (default: best)
#
# Expects to run inside nvcr.io/nvidia/tensorrt:23.10-py3 (trtexec on PATH).
set -euo pipefail

ONNX_DIR=${1:?"usage: $0 <onnx_dir> [gpu_id] [precision]"}
GPU_ID=${2:-0}
PRECISION=${3:-best}
ENGINE_DIR=${ENGINE_DIR:-${ONNX_DIR}/engines}
LOG_DIR=${LOG_DIR:-${ONNX_DIR}/logs}
WORKSPACE_MB=${WORKSPACE_MB:-4096}
BATCHES=${BATCHES:-"1 8 32"}

export CUDA_VISIBLE_DEVICES=${GPU_ID}
export CUDA_MODULE_LOADING=LAZY

mkdir -p "${ENGINE_DIR}" "${LOG_DIR}"

echo "== environment =="
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
command -v trtexec >/dev/null || { echo "trtexec not found"; exit 1; }
python -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"

case "${PRECISION}" in
  fp16) PREC_FLAGS="--fp16" ;;
  int8) PREC_FLAGS="--int8" ;;
  best) PREC_FLAGS="--best" ;;
  *) echo "unknown precision ${PRECISION}"; exit 2 ;;
esac

read -r MIN_BS OPT_BS MAX_BS <<< "${BATCHES}"

summary="${LOG_DIR}/summary_${PRECISION}.csv"
echo "model,precision,batch,throughput_qps,gpu_compute_ms" > "${summary}"

for onnx in "${ONNX_DIR}"/*.onnx; do
  name=$(basename "${onnx}" .onnx)
  engine="${ENGINE_DIR}/${name}_${PRECISION}.engine"
  log="${LOG_DIR}/${name}_${PRECISION}.log"
  echo "== ${name} (${PRECISION}) =="

  trtexec \
    --onnx="${onnx}" \
    --saveEngine="${engine}" \
    ${PREC_FLAGS} \
    --memPoolSize=workspace:${WORKSPACE_MB} \
    --minShapes=input:${MIN_BS}x3x224x224 --optShapes=input:${OPT_BS}x3x224x224 --maxShapes=input:${MAX_BS}x3x224x224 \
    --useCudaGraph --noDataTransfers \
    > "${log}" 2>&1

  qps=$(grep -m1 "Throughput:" "${log}" | awk '{print $(NF-1)}')
  gpu_ms=$(grep -m1 "GPU Compute Time:" "${log}" | sed -E 's/.*mean = ([0-9.]+) ms.*/\1/')
  echo "${name},${PRECISION},${OPT_BS},${qps},${gpu_ms}" >> "${summary}"
done

echo "== done =="
column -s, -t < "${summary}"
