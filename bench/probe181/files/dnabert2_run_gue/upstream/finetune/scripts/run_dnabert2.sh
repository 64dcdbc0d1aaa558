#!/bin/bash
# Fine-tune DNABERT-2 on every GUE task.
# usage: sh scripts/run_dnabert2.sh DATA_PATH [GPU_IDS]
#   e.g. sh scripts/run_dnabert2.sh /data/GUE 0,1,2,3
set -e

data_path=$1
gpus=${2:-0,1,2,3}
lr=3e-5

export CUDA_VISIBLE_DEVICES=${gpus}
num_gpu=$(echo ${gpus} | tr ',' '\n' | wc -l)
export NCCL_P2P_DISABLE=1          # PCIe boxes hang in all_reduce without this
export TOKENIZERS_PARALLELISM=false
export OMP_NUM_THREADS=8

echo "The provided data_path is $data_path on ${num_gpu} GPU(s)"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

# torchrun (DDP) when more than one GPU is given, plain python otherwise
if [ "${num_gpu}" -gt 1 ]; then
    LAUNCHER="torchrun --nproc_per_node=${num_gpu} --master_port=29511"
else
    LAUNCHER="python"
fi

for seed in 42
do
    for data in H3 H3K14ac H3K36me3 H3K4me1 H3K4me2 H3K4me3 H3K79me3 H3K9ac H4 H4ac
    do
        ${LAUNCHER} train.py \
            --model_name_or_path zhihan1996/DNABERT-2-117M \
            --data_path  $data_path/GUE/EMP/$data \
            --kmer -1 \
            --run_name DNABERT2_${lr}_EMP_${data}_seed${seed} \
            --model_max_length 128 \
            --per_device_train_batch_size 8 \
            --per_device_eval_batch_size 16 \
            --gradient_accumulation_steps 1 \
            --learning_rate ${lr} \
            --num_train_epochs 3 \
            --fp16 \
            --save_steps 200 \
            --output_dir output/dnabert2 \
            --evaluation_strategy steps \
            --eval_steps 200 \
            --warmup_steps 50 \
            --logging_steps 100000 \
            --overwrite_output_dir True \
            --log_level info \
            --find_unused_parameters False
    done

    for data in prom_core_all prom_core_notata prom_core_tata
    do
        ${LAUNCHER} train.py \
            --model_name_or_path zhihan1996/DNABERT-2-117M \
            --data_path  $data_path/GUE/prom/$data \
            --kmer -1 \
            --run_name DNABERT2_${lr}_prom_${data}_seed${seed} \
            --model_max_length 20 \
            --per_device_train_batch_size 8 \
            --per_device_eval_batch_size 16 \
            --gradient_accumulation_steps 1 \
            --learning_rate ${lr} \
            --num_train_epochs 4 \
            --fp16 \
            --save_steps 400 \
            --output_dir output/dnabert2 \
            --evaluation_strategy steps \
            --eval_steps 400 \
            --warmup_steps 50 \
            --logging_steps 100000 \
            --overwrite_output_dir True \
            --log_level info \
            --find_unused_parameters False
    done
done
