#!/bin/bash
#
# run_md_multi_gpu.sh
#
# Split a camera trap image folder into N chunks and run MegaDetector v5 on each
# chunk on its own GPU, then merge the per-chunk .json files.
#
# run_detector_batch.py has no --gpu option, so each chunk is pinned to a device
# with CUDA_VISIBLE_DEVICES.
#
# Usage:
#   bash run_md_multi_gpu.sh /data/camtraps/season3 /results/season3 [MDV5A|MDV5B]
#

set -euo pipefail

INPUT_DIR=${1:?"input folder required"}
OUTPUT_DIR=${2:?"output folder required"}
MODEL=${3:-MDV5A}

MD_ROOT=${MD_ROOT:-$HOME/git/MegaDetector}
YOLO_ROOT=${YOLO_ROOT:-$HOME/git/yolov5}
CONDA_ENV=${CONDA_ENV:-cameratraps-detector}

export PYTHONPATH="$MD_ROOT:$MD_ROOT/megadetector:$YOLO_ROOT"

# shellcheck disable=SC1091
source "$(conda info --base)/etc/profile.d/conda.sh"
conda activate "$CONDA_ENV"

# How many GPUs do we have?
NUM_GPUS=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
if [ "$NUM_GPUS" -lt 1 ]; then
    echo "No GPUs found, refusing to run MegaDetector on CPU for a whole season"
    exit 1
fi
echo "Found $NUM_GPUS GPU(s):"
nvidia-smi --query-gpu=index,name,memory.total --format=csv

mkdir -p "$OUTPUT_DIR/chunks" "$OUTPUT_DIR/logs"

# Build the image list once, then split it into one list per GPU
python - <<EOF
import json, os
from md_utils import path_utils
images = sorted(path_utils.find_images("$INPUT_DIR", recursive=True))
n = $NUM_GPUS
for i in range(n):
    with open(os.path.join("$OUTPUT_DIR", "chunks", "chunk_%03d.json" % i), "w") as f:
        json.dump(images[i::n], f, indent=1)
print("Wrote %d chunks for %d images" % (n, len(images)))
EOF

CHECKPOINT_FREQ=${CHECKPOINT_FREQ:-10000}

for (( GPU=0; GPU<NUM_GPUS; GPU++ )); do
    CHUNK=$(printf "%s/chunks/chunk_%03d.json" "$OUTPUT_DIR" "$GPU")
    OUT=$(printf "%s/chunks/md_results_%03d.json" "$OUTPUT_DIR" "$GPU")
    LOG=$(printf "%s/logs/gpu_%d.log" "$OUTPUT_DIR" "$GPU")
    echo "Launching chunk $GPU on GPU $GPU -> $OUT"
    CUDA_VISIBLE_DEVICES=$GPU nohup python "$MD_ROOT/megadetector/detection/run_detector_batch.py" \
        "$MODEL" "$CHUNK" "$OUT" \
        --quiet \
        --threshold 0.005 \
        --checkpoint_frequency "$CHECKPOINT_FREQ" \
        > "$LOG" 2>&1 &
done

wait
echo "All chunks finished"

# Merge the per-GPU results
python "$MD_ROOT/megadetector/postprocessing/combine_api_outputs.py" \
    "$OUTPUT_DIR"/chunks/md_results_*.json \
    "$OUTPUT_DIR/md_results_combined.json"

# Log peak memory so we know whether we can run two chunks per card next time
nvidia-smi --query-gpu=index,memory.used,utilization.gpu --format=csv >> "$OUTPUT_DIR/logs/gpu_summary.csv"

echo "Done: $OUTPUT_DIR/md_results_combined.json"
