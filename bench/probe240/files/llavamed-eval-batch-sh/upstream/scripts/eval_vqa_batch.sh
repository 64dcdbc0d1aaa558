#!/bin/bash
# Shard VQA-RAD / SLAKE / PathVQA evaluation across all visible GPUs, one process per GPU,
# then merge the answer files and score them.

gpu_list="${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}"
IFS=',' read -ra GPULIST <<< "$gpu_list"

CHUNKS=${#GPULIST[@]}

CKPT=${1:-"llava-med-v1.5-mistral-7b"}
SPLIT=${2:-"vqa_rad"}
ANSWER_DIR=./data/eval/$SPLIT/answers/$CKPT

mkdir -p $ANSWER_DIR

for IDX in $(seq 0 $((CHUNKS-1))); do
    CUDA_VISIBLE_DEVICES=${GPULIST[$IDX]} python -m llava.eval.model_vqa_med \
        --model-path microsoft/$CKPT \
        --question-file ./data/eval/$SPLIT/test.jsonl \
        --image-folder ./data/eval/$SPLIT/images \
        --answers-file $ANSWER_DIR/${CHUNKS}_${IDX}.jsonl \
        --num-chunks $CHUNKS \
        --chunk-idx $IDX \
        --temperature 0 \
        --conv-mode mistral_instruct &
done

wait

output_file=$ANSWER_DIR/merge.jsonl

# Clear out the output file if it exists.
> "$output_file"

# Loop through the indices and concatenate each file.
for IDX in $(seq 0 $((CHUNKS-1))); do
    cat $ANSWER_DIR/${CHUNKS}_${IDX}.jsonl >> "$output_file"
done

python llava/eval/run_eval.py \
    --gt ./data/eval/$SPLIT/test.json \
    --pred $output_file \
    --candidate ./data/eval/$SPLIT/candidate.json
