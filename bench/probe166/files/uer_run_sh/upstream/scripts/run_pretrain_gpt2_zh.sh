#!/bin/bash
# Pre-train a Chinese GPT-2 (base) on CLUECorpusSmall with UER-py.
# Stage 1: seq_length 128, 8 x V100 (32G); stage 2 continues at seq_length 1024.
# Usage: bash scripts/run_pretrain_gpt2_zh.sh [stage]

set -e

STAGE=${1:-1}
CORPUS=corpora/cluecorpussmall_lm.txt
VOCAB=models/google_zh_vocab.txt
CONFIG=models/gpt2/config.json
OUTPUT_DIR=models/cluecorpussmall_gpt2_seq1024

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export NCCL_IB_DISABLE=1
export NCCL_DEBUG=WARN
export OMP_NUM_THREADS=8

mkdir -p ${OUTPUT_DIR}

if [ "${STAGE}" == "1" ]; then
    python3 preprocess.py --corpus_path ${CORPUS} \
                          --vocab_path ${VOCAB} \
                          --dataset_path cluecorpussmall_lm_seq128_dataset.pt \
                          --seq_length 128 --processes_num 32 --data_processor lm

    python3 pretrain.py --dataset_path cluecorpussmall_lm_seq128_dataset.pt \
                        --vocab_path ${VOCAB} \
                        --config_path ${CONFIG} \
                        --output_model_path ${OUTPUT_DIR}/seq128_model.bin \
                        --world_size 8 --gpu_ranks 0 1 2 3 4 5 6 7 \
                        --master_ip tcp://localhost:23456 --backend nccl \
                        --total_steps 1000000 --save_checkpoint_steps 100000 --report_steps 50000 \
                        --learning_rate 1e-4 --batch_size 64 \
                        --fp16 --fp16_opt_level O1
else
    python3 preprocess.py --corpus_path ${CORPUS} \
                          --vocab_path ${VOCAB} \
                          --dataset_path cluecorpussmall_lm_seq1024_dataset.pt \
                          --seq_length 1024 --processes_num 32 --data_processor lm

    python3 pretrain.py --dataset_path cluecorpussmall_lm_seq1024_dataset.pt \
                        --vocab_path ${VOCAB} \
                        --pretrained_model_path ${OUTPUT_DIR}/seq128_model.bin-1000000 \
                        --config_path ${CONFIG} \
                        --output_model_path ${OUTPUT_DIR}/seq1024_model.bin \
                        --world_size 8 --gpu_ranks 0 1 2 3 4 5 6 7 \
                        --master_ip tcp://localhost:23457 --backend nccl \
                        --total_steps 250000 --save_checkpoint_steps 50000 --report_steps 10000 \
                        --learning_rate 5e-5 --batch_size 16 \
                        --fp16 --fp16_opt_level O1
fi

# Watch utilisation while training:  watch -n 1 nvidia-smi
echo "Finished stage ${STAGE}. Checkpoints are in ${OUTPUT_DIR}"
