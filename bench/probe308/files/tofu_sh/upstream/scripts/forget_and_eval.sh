#!/bin/bash
# Unlearn the TOFU forget splits with every loss and evaluate each checkpoint.
#   bash scripts/forget_and_eval.sh llama2-7b 1e-5
# Needs 2 x A100-80GB for llama2-7b with ZeRO-3 (phi fits on 2 x 24GB).
set -e

model=${1:-llama2-7b}
lr=${2:-1e-5}
num_epochs=5
master_port=$((18000 + RANDOM % 1000))

export CUDA_VISIBLE_DEVICES=${GPUS:-0,1}
NUM_GPUS=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
if [ -n "${GPUS}" ]; then
    NUM_GPUS=$(echo ${GPUS} | tr ',' '\n' | wc -l)
fi
echo "using ${NUM_GPUS} GPUs: ${CUDA_VISIBLE_DEVICES}"

# A6000 boxes without NVLink hang in the first all-gather otherwise
export NCCL_P2P_DISABLE=1
export NCCL_DEBUG=WARN
export TOKENIZERS_PARALLELISM=false

for forget_loss in grad_ascent grad_diff KL idk dpo npo; do
    for split in forget01 forget05 forget10; do
        save_dir=paper_models/${model}_${forget_loss}_${lr}_${split}_${num_epochs}

        torchrun --nproc_per_node=${NUM_GPUS} --master_port=$master_port forget.py \
            --config-name=forget.yaml \
            split=${split} batch_size=4 gradient_accumulation_steps=4 \
            model_family=${model} lr=${lr} num_epochs=${num_epochs} \
            forget_loss=${forget_loss} save_dir=${save_dir}

        # evaluate the final checkpoint; eval is cheap enough for a single process
        torchrun --nproc_per_node=1 --master_port=$((master_port + 1)) evaluate_util.py \
            model_family=${model} split=${split} model_path=${save_dir} \
            save_dir=${save_dir}/eval_results/ds_size300 batch_size=16

        python aggregate_eval_stat.py \
            retain_result=data/retain_results/${model}_${split}/eval_log_aggregated.json \
            ckpt_result=${save_dir}/eval_results/ds_size300/eval_log_aggregated.json \
            method_name=${forget_loss} save_file=${save_dir}/aggr_result.csv
    done
done
