#!/bin/bash
# Generate + evaluate pass@1 / pass@10 on HumanEval (and optionally MBPP, MultiPL-E) for a HF model.
#
#   bash scripts/run_humaneval.sh bigcode/starcoder humaneval
#   NGPUS=4 bash scripts/run_humaneval.sh codellama/CodeLlama-7b-hf "humaneval,mbpp"
#
# Models that do not fit on one GPU: set BIG_MODEL=1, the model is then sharded over all visible
# GPUs with --max_memory_per_gpu auto in a single process (no data parallelism).
set -e

MODEL=${1:-bigcode/starcoder}
TASKS=${2:-humaneval}
PRECISION=${PRECISION:-bf16}
N_SAMPLES=${N_SAMPLES:-50}
BATCH_SIZE=${BATCH_SIZE:-10}
OUT_DIR=${OUT_DIR:-results/$(basename ${MODEL})}
NGPUS=${NGPUS:-$(nvidia-smi -L | wc -l)}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=1
export TOKENIZERS_PARALLELISM=false
export HF_DATASETS_CACHE=${HF_DATASETS_CACHE:-$HOME/.cache/huggingface/datasets}

mkdir -p ${OUT_DIR}
echo "model=${MODEL} tasks=${TASKS} gpus=${NGPUS} precision=${PRECISION}"

if [[ "${BIG_MODEL:-0}" == "1" ]]; then
  python main.py \
    --model ${MODEL} \
    --tasks ${TASKS} \
    --max_length_generation 512 \
    --temperature 0.2 \
    --do_sample True \
    --n_samples ${N_SAMPLES} \
    --batch_size ${BATCH_SIZE} \
    --precision ${PRECISION} \
    --max_memory_per_gpu auto \
    --allow_code_execution \
    --save_generations \
    --save_generations_path ${OUT_DIR}/generations.json \
    --metric_output_path ${OUT_DIR}/metrics.json
else
  accelerate launch --multi_gpu --num_processes ${NGPUS} --mixed_precision ${PRECISION} main.py \
    --model ${MODEL} \
    --tasks ${TASKS} \
    --max_length_generation 512 \
    --temperature 0.2 \
    --do_sample True \
    --n_samples ${N_SAMPLES} \
    --batch_size ${BATCH_SIZE} \
    --precision ${PRECISION} \
    --allow_code_execution \
    --save_generations \
    --save_generations_path ${OUT_DIR}/generations.json \
    --metric_output_path ${OUT_DIR}/metrics.json
fi

python -c "import json,sys; m=json.load(open('${OUT_DIR}/metrics.json')); print({k: v for k, v in m.items() if k != 'config'})"
