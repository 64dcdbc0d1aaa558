#!/usr/bin/bash
# Fine-tune MU-LLaMA on MusicQA (stage 2). Expects the LLaMA-7B weights in ./ckpts/LLaMA
# and the pretrained adapter (stage 1) checkpoint as the first argument.
#
#   bash finetune.sh ./ckpts/pretrain/checkpoint.pth ./ckpts/MusicQA-finetune
#
# Tested on 2 x A100-80GB; lower --batch_size / raise --accum_iter for 40GB cards.

PRETRAINED=${1:-./ckpts/checkpoint.pth}
OUTPUT_DIR=${2:-./ckpts/MusicQA-finetune}
NUM_GPUS=${NUM_GPUS:-2}

mkdir -p "$OUTPUT_DIR"

export CUDA_VISIBLE_DEVICES=0,1
export OMP_NUM_THREADS=8

python -u -m torch.distributed.launch --master_port=1112 --nproc_per_node=$NUM_GPUS --use_env main_finetune.py \
    --music_qa_file ./data/MusicQA/FinetuneMusicQA.json \
    --music_data_path ./data/MusicQA/audios \
    --llama_type 7B --llama_path ./ckpts/LLaMA \
    --mert_path m-a-p/MERT-v1-330M \
    --pretrained_path "$PRETRAINED" \
    --max_words 1024 \
    --batch_size 4 --accum_iter 4 \
    --epochs 20 --warmup_epochs 1 \
    --blr 1e-4 --weight_decay 0.05 \
    --num_workers 4 \
    --output_dir "$OUTPUT_DIR" --log_dir "$OUTPUT_DIR" \
    2>&1 | tee "$OUTPUT_DIR/output.log"
