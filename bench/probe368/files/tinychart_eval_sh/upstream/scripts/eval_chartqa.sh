#!/bin/bash
# Multi-GPU evaluation: the test set is split into one chunk per visible GPU and each chunk
# runs in its own process, then the chunk outputs are merged and scored.

MODEL_PATH=${1:-"mPLUG/TinyChart-3B-768"}
OUTPUT=${2:-"output/eval/TinyChart-3B-768"}
DATA_PATH=data/test.json
IMAGE_FOLDER=data/images

gpu_list="${CUDA_VISIBLE_DEVICES:-0}"
IFS=',' read -ra GPULIST <<< "$gpu_list"

CHUNKS=${#GPULIST[@]}
echo "Evaluating on ${CHUNKS} GPU(s): ${gpu_list}"

for IDX in $(seq 0 $((CHUNKS-1))); do
    CUDA_VISIBLE_DEVICES=${GPULIST[$IDX]} python -m tinychart.eval.eval_model \
        --model-path $MODEL_PATH \
        --data-path $DATA_PATH \
        --image-folder $IMAGE_FOLDER \
        --output-path $OUTPUT \
        --eval-split ChartQA-Human,ChartQA-Augmented,ChartQA-Human-PoT,ChartQA-Augmented-PoT \
        --num-chunks $CHUNKS \
        --chunk-idx $IDX \
        --temperature 0 \
        --conv-mode phi &
done

wait

for SPLIT in ChartQA-Human ChartQA-Augmented ChartQA-Human-PoT ChartQA-Augmented-PoT; do
    output_file=$OUTPUT/${SPLIT}.jsonl
    > "$output_file"
    for IDX in $(seq 0 $((CHUNKS-1))); do
        cat $OUTPUT/${SPLIT}_${CHUNKS}_${IDX}.jsonl >> "$output_file"
    done
done

python -m tinychart.eval.run_eval --input $OUTPUT
