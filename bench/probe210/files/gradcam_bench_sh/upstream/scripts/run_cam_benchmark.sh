#!/usr/bin/env bash
# Render every CAM method for every example image and record wall time.
#
#   bash scripts/run_cam_benchmark.sh [image_dir] [out_dir]
#
# Runs on a single GPU. Pick it with CUDA_VISIBLE_DEVICES, e.g.
#   CUDA_VISIBLE_DEVICES=3 bash scripts/run_cam_benchmark.sh
set -euo pipefail

IMAGE_DIR=${1:-examples}
OUT_DIR=${2:-outputs/cam_benchmark}
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
DEVICE=cuda
METHODS="gradcam hirescam gradcam++ scorecam xgradcam ablationcam eigencam eigengradcam layercam fullgrad gradcamelementwise kpcacam"

mkdir -p "${OUT_DIR}"
TIMINGS="${OUT_DIR}/timings.csv"
echo "image,method,seconds" > "${TIMINGS}"

# Record what we ran on (best effort, not fatal when the tool is missing).
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > "${OUT_DIR}/gpu.txt" || true
fi
python -c "import torch, pytorch_grad_cam; print('torch', torch.__version__)" | tee "${OUT_DIR}/env.txt"

shopt -s nullglob
for img in "${IMAGE_DIR}"/*.png "${IMAGE_DIR}"/*.jpg; do
  name=$(basename "${img%.*}")
  mkdir -p "${OUT_DIR}/${name}"
  for m in ${METHODS}; do
    start=$(date +%s.%N)
    python cam_image.py \
      --image-path "${img}" \
      --method "${m}" \
      --device "${DEVICE}" \
      --output-dir "${OUT_DIR}/${name}" \
      --aug-smooth --eigen-smooth > "${OUT_DIR}/${name}/${m}.log" 2>&1 || {
        echo "[warn] ${m} failed on ${name}, see ${OUT_DIR}/${name}/${m}.log"
        continue
      }
    end=$(date +%s.%N)
    secs=$(echo "${end} - ${start}" | bc)
    echo "${name},${m},${secs}" >> "${TIMINGS}"
    echo "[ok] ${name} ${m} ${secs}s"
  done
done

python - "${TIMINGS}" <<'PY'
import sys
import pandas as pd
df = pd.read_csv(sys.argv[1])
print(df.groupby("method")["seconds"].agg(["mean", "std", "count"]).sort_values("mean"))
PY
