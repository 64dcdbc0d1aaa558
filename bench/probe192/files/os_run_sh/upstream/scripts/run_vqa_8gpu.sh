#!/usr/bin/env bash
# Fine-tune Oscar base on VQA v2 (train + val), 8 x V100 32GB, one node.
# usage: bash scripts/run_vqa_8gpu.sh <output_dir> [extra args for run_vqa.py]
set -e

OUTPUT_DIR=${1:-output/vqa/base}
DATA_DIR=datasets/vqa/2k
MODEL_DIR=pretrained_models/base-vg-labels/ep_107_1192087

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
NUM_GPUS=$(echo $CUDA_VISIBLE_DEVICES | tr ',' '\n' | wc -l)

export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=1
export OMP_NUM_THREADS=4

mkdir -p $OUTPUT_DIR
nvidia-smi > $OUTPUT_DIR/nvidia-smi.txt

python -m torch.distributed.launch --nproc_per_node=$NUM_GPUS \
    oscar/run_vqa.py -j 4 \
    --img_feature_dim 2054 --max_img_seq_length 50 \
    --data_label_type mask --img_feature_type faster_r-cnn \
    --data_dir $DATA_DIR --txt_data_dir $DATA_DIR \
    --model_type bert --model_name_or_path $MODEL_DIR \
    --task_name vqa_text --do_train --do_lower_case --max_seq_length 128 \
    --per_gpu_eval_batch_size 256 --per_gpu_train_batch_size 32 \
    --learning_rate 5e-05 --num_train_epochs 25 \
    --label_file $DATA_DIR/trainval_ans2label.pkl \
    --save_epoch 1 --seed 88 --evaluate_during_training --logging_steps 4000 \
    --drop_out 0.3 --weight_decay 0.05 --warmup_steps 0 --loss_type bce \
    --classifier linear --cls_hidden_scale 3 \
    --fp16 --fp16_opt_level O1 \
    --output_dir $OUTPUT_DIR "${@:2}" 2>&1 | tee $OUTPUT_DIR/train.log
