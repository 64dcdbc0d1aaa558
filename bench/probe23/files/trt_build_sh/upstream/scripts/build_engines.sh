#!/usr/bin/env bash
# Build TensorRT engines (FP16 and INT8) for every exported ONNX model and
# record their latency with trtexec.
#
#   bash scripts/build_engines.sh exports/ engines/ 0
#
set -euo pipefail

ONNX_DIR=${1:-exports}
ENGINE_DIR=${2:-engines}
GPU_ID=${3:-0}
BATCH=${BATCH:-8}
WORKSPACE_MB=${WORKSPACE_MB:-4096}
CALIB_CACHE=${CALIB_CACHE:-calib/resnet50.cache}

export CUDA_VISIBLE_DEVICES=${GPU_ID}
export CUDA_MODULE_LOADING=LAZY
export TRT_HOME=${TRT_HOME:-/usr/src/tensorrt}
export PATH=${TRT_HOME}/bin:${PATH}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${TRT_HOME}/lib:${LD_LIBRARY_PATH:-}

command -v trtexec >/dev/null || { echo "trtexec not found (install TensorRT)"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader -i 0

mkdir -p "${ENGINE_DIR}" logs
summary=logs/engine_summary.csv
echo "model,precision,mean_ms,throughput_qps" > "${summary}"

for onnx in "${ONNX_DIR}"/*.onnx; do
  name=$(basename "${onnx}" .onnx)
  for prec in fp16 int8; do
    engine="${ENGINE_DIR}/${name}_${prec}.plan"
    log="logs/${name}_${prec}.log"
    flags="--fp16"
    if [[ "${prec}" == "int8" ]]; then
      if [[ "${name}" == *qdq* ]]; then
        flags="--int8 --fp16"                       # explicit quantization (Q/DQ in graph)
      else
        flags="--int8 --fp16 --calib=${CALIB_CACHE}" # implicit, needs a calibration cache
      fi
    fi
    echo "[build] ${name} ${prec}"
    trtexec --onnx="${onnx}" \
            --saveEngine="${engine}" \
            ${flags} \
            --minShapes=input:1x3x224x224 \
            --optShapes=input:${BATCH}x3x224x224 \
            --maxShapes=input:32x3x224x224 \
            --memPoolSize=workspace:${WORKSPACE_MB} \
            --useCudaGraph --noDataTransfers \
            --warmUp=500 --duration=10 \
            > "${log}" 2>&1
    mean=$(grep -oP 'GPU Compute Time: min = [0-9.]+ ms, max = [0-9.]+ ms, mean = \K[0-9.]+' "${log}" | tail -1)
    qps=$(grep -oP 'Throughput: \K[0-9.]+' "${log}" | tail -1)
    echo "${name},${prec},${mean:-NA},${qps:-NA}" >> "${summary}"
  done
done

column -s, -t < "${summary}"
