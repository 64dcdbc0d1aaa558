#!/usr/bin/env bash
# Batch Grounded-SAM over a folder of images on one GPU.
#   GPU_ID=1 PROMPT="bear" bash scripts/run_grounded_sam_demo.sh assets/ outputs/
set -e

export CUDA_VISIBLE_DEVICES=${GPU_ID:-0}
export TOKENIZERS_PARALLELISM=false

INPUT_DIR=${1:-assets}
OUTPUT_DIR=${2:-outputs/grounded_sam}
PROMPT=${PROMPT:-"bear"}

CONFIG=GroundingDINO/groundingdino/config/GroundingDINO_SwinT_OGC.py
GDINO_CKPT=groundingdino_swint_ogc.pth
SAM_CKPT=sam_vit_h_4b8939.pth
SAM_HQ_CKPT=sam_hq_vit_h.pth

mkdir -p "${OUTPUT_DIR}"
# log which card we landed on (useful when sharing the box)
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

EXTRA_ARGS=""
if [ "${USE_SAM_HQ:-0}" = "1" ]; then
  EXTRA_ARGS="--use_sam_hq --sam_hq_checkpoint ${SAM_HQ_CKPT}"
fi

for img in "${INPUT_DIR}"/*.jpg; do
  name=$(basename "${img%.*}")
  python grounded_sam_demo.py \
    --config ${CONFIG} \
    --grounded_checkpoint ${GDINO_CKPT} \
    --sam_checkpoint ${SAM_CKPT} \
    --input_image "${img}" \
    --output_dir "${OUTPUT_DIR}/${name}" \
    --box_threshold 0.3 \
    --text_threshold 0.25 \
    --text_prompt "${PROMPT}" \
    --device "cuda" ${EXTRA_ARGS}
done
echo "done: results in ${OUTPUT_DIR}"
