#!/bin/bash
# Generate paired before/after images for InstructPix2Pix with Prompt-to-Prompt.
# One process per GPU; each process handles one partition of the prompts file.
#
#   bash scripts/generate_img_dataset_multi_gpu.sh data/instruct-pix2pix-dataset-000 data/gpt-generated-prompts.jsonl
#
# Each partition needs ~18GB of GPU memory (fp16 autocast, 2 images per sample).

set -euo pipefail

OUT_DIR=${1:-data/instruct-pix2pix-dataset-000}
PROMPTS_FILE=${2:-data/gpt-generated-prompts.jsonl}
N_SAMPLES=${N_SAMPLES:-100}
STEPS=${STEPS:-100}

# number of local GPUs, one partition each
NUM_GPUS=${NUM_GPUS:-$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)}
N_PARTITIONS=${N_PARTITIONS:-$NUM_GPUS}
PARTITION_OFFSET=${PARTITION_OFFSET:-0}

mkdir -p "$OUT_DIR" logs/generate

echo "Launching $NUM_GPUS workers ($N_PARTITIONS partitions total, offset $PARTITION_OFFSET)"

for (( gpu=0; gpu<NUM_GPUS; gpu++ )); do
    partition=$(( PARTITION_OFFSET + gpu ))
    CUDA_VISIBLE_DEVICES=$gpu nohup python dataset_creation/generate_img_dataset.py \
        "$OUT_DIR" "$PROMPTS_FILE" \
        --n-samples "$N_SAMPLES" \
        --steps "$STEPS" \
        --n-partitions "$N_PARTITIONS" \
        --partition "$partition" \
        > "logs/generate/partition_${partition}.log" 2>&1 &
done

wait
echo "All partitions finished. Run dataset_creation/prepare_dataset.py $OUT_DIR next."
