#!/bin/bash
# MT-Bench answers for lookahead decoding vs. plain greedy on Llama-2-chat.
# Baseline and LADE run side by side on GPU 0 / GPU 1, then the 2-GPU lookahead-parallel
# run (DIST_WORKERS=2) and the 70B DeepSpeed run use the rest of the node.
#
#   bash applications/run_mtbench.sh 7b
#   then: python llm_judge/gen_judgment.py --model-list llama-2-7b-chat-base llama-2-7b-chat-lade ...

SIZE=${1:-7b}
MODEL=meta-llama/Llama-2-${SIZE}-chat-hf
MODEL_ID=llama-2-${SIZE}-chat
LEVEL=5
WIN=15
GUESS=15

mkdir -p logs

# baseline (greedy) and lookahead on separate GPUs, in parallel
CUDA_VISIBLE_DEVICES=0 USE_LADE=0 python eval_mtbench.py \
    --model-path ${MODEL} --model-id ${MODEL_ID}-base \
    --level 0 --window 0 --guess 0 --use-pp 0 --dtype float16 > logs/${MODEL_ID}-base.log 2>&1 &

CUDA_VISIBLE_DEVICES=1 USE_LADE=1 python eval_mtbench.py \
    --model-path ${MODEL} --model-id ${MODEL_ID}-lade \
    --level ${LEVEL} --window ${WIN} --guess ${GUESS} --use-pp 0 --dtype float16 > logs/${MODEL_ID}-lade.log 2>&1 &
wait

# lookahead parallelism: the lookahead branch is split over 2 GPUs
export NCCL_DEBUG=WARN
CUDA_VISIBLE_DEVICES=2,3 USE_LADE=1 torchrun --nproc_per_node 2 --master_port 29612 eval_mtbench.py \
    --model-path ${MODEL} --model-id ${MODEL_ID}-lade-dist \
    --level ${LEVEL} --window ${WIN} --guess ${GUESS} --use-pp 1 --dtype float16 > logs/${MODEL_ID}-lade-dist.log 2>&1

# 70B: DeepSpeed inference (tensor parallel) across 4 GPUs
if [ "${SIZE}" = "70b" ]; then
    USE_LADE=1 deepspeed --include localhost:4,5,6,7 eval_mtbench.py \
        --model-path ${MODEL} --model-id ${MODEL_ID}-lade-ds \
        --level ${LEVEL} --window ${WIN} --guess ${GUESS} --use-ds 1 --dtype float16 > logs/${MODEL_ID}-lade-ds.log 2>&1
fi

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1 > logs/hardware.txt
echo "answers written to data/mt_bench/model_answer/"
