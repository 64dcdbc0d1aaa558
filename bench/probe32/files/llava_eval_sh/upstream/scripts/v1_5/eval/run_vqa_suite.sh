#!/bin/bash
# Chunked multi-GPU evaluation of a LLaVA-1.5 checkpoint on GQA, TextVQA and VQAv2.
# One process per visible GPU, each answering 1/N of the questions; answers are merged afterwards.
#
#   CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 bash scripts/v1_5/eval/run_vqa_suite.sh llava-v1.5-13b

CKPT=${1:-llava-v1.5-13b}
MODEL_PATH=${MODEL_PATH:-liuhaotian/${CKPT}}
EVAL_ROOT=./playground/data/eval

gpu_list="${CUDA_VISIBLE_DEVICES:-0}"
IFS=',' read -ra GPULIST <<< "$gpu_list"

CHUNKS=${#GPULIST[@]}
echo "[eval] ${CKPT}: ${CHUNKS} chunk(s) on GPUs ${gpu_list}"

merge_chunks() {
    # $1 = answers dir, $2 = merged file
    local dir=$1
    local out=$2
    > "$out"
    for IDX in $(seq 0 $((CHUNKS-1))); do
        cat "${dir}/${CHUNKS}_${IDX}.jsonl" >> "$out"
    done
}

# ---------------------------------------------------------------- GQA
run_gqa() {
    local SPLIT="llava_gqa_testdev_balanced"
    local GQADIR="${EVAL_ROOT}/gqa/data"
    local ANS_DIR="${EVAL_ROOT}/gqa/answers/${SPLIT}/${CKPT}"
    mkdir -p "${ANS_DIR}"

    for IDX in $(seq 0 $((CHUNKS-1))); do
        CUDA_VISIBLE_DEVICES=${GPULIST[$IDX]} python -m llava.eval.model_vqa_loader \
            --model-path "${MODEL_PATH}" \
            --question-file ${EVAL_ROOT}/gqa/${SPLIT}.jsonl \
            --image-folder ${EVAL_ROOT}/gqa/data/images \
            --answers-file ${ANS_DIR}/${CHUNKS}_${IDX}.jsonl \
            --num-chunks $CHUNKS \
            --chunk-idx $IDX \
            --temperature 0 \
            --conv-mode vicuna_v1 &
    done
    wait

    merge_chunks "${ANS_DIR}" "${ANS_DIR}/merge.jsonl"
    python scripts/convert_gqa_for_eval.py --src ${ANS_DIR}/merge.jsonl --dst ${GQADIR}/testdev_balanced_predictions.json
    (cd ${GQADIR} && python eval/eval.py --tier testdev_balanced)
}

# ---------------------------------------------------------------- TextVQA
run_textvqa() {
    local ANS_DIR="${EVAL_ROOT}/textvqa/answers/${CKPT}"
    mkdir -p "${ANS_DIR}"

    for IDX in $(seq 0 $((CHUNKS-1))); do
        CUDA_VISIBLE_DEVICES="${GPULIST[$IDX]}" python -m llava.eval.model_vqa_loader \
            --model-path "${MODEL_PATH}" \
            --question-file ${EVAL_ROOT}/textvqa/llava_textvqa_val_v051_ocr.jsonl \
            --image-folder ${EVAL_ROOT}/textvqa/train_images \
            --answers-file ${ANS_DIR}/${CHUNKS}_${IDX}.jsonl \
            --num-chunks $CHUNKS \
            --chunk-idx $IDX \
            --temperature 0 \
            --conv-mode vicuna_v1 &  # textvqa
    done
    wait

    merge_chunks "${ANS_DIR}" "${ANS_DIR}/merge.jsonl"
    python -m llava.eval.eval_textvqa \
        --annotation-file ${EVAL_ROOT}/textvqa/TextVQA_0.5.1_val.json \
        --result-file ${ANS_DIR}/merge.jsonl
}

# ---------------------------------------------------------------- VQAv2 (test-dev, submission file only)
run_vqav2() {
    local SPLIT="llava_vqav2_mscoco_test-dev2015"
    local ANS_DIR="${EVAL_ROOT}/vqav2/answers/${SPLIT}/${CKPT}"
    mkdir -p "${ANS_DIR}"

    for IDX in $(seq 0 $((CHUNKS-1))); do
        CUDA_VISIBLE_DEVICES=${GPULIST[IDX]} python3 -m llava.eval.model_vqa_loader \
            --model-path "${MODEL_PATH}" \
            --question-file ${EVAL_ROOT}/vqav2/${SPLIT}.jsonl \
            --image-folder ${EVAL_ROOT}/vqav2/test2015 \
            --answers-file ${ANS_DIR}/${CHUNKS}_${IDX}.jsonl \
            --num-chunks $CHUNKS \
            --chunk-idx $IDX \
            --temperature 0 \
            --conv-mode vicuna_v1 &  # vqav2
    done
    wait

    merge_chunks "${ANS_DIR}" "${ANS_DIR}/merge.jsonl"
    python scripts/convert_vqav2_for_submission.py --split $SPLIT --ckpt $CKPT
}

for bench in ${BENCHMARKS:-gqa textvqa vqav2}; do
    echo "[eval] running ${bench}"
    "run_${bench}"
done
