#!/usr/bin/env bash
# Fine-tune Oscar+/VinVL-base on COCO captions (cross-entropy stage),
# single node, 8 x V100-32GB.  Afterwards run scripts/train_coco_scst.sh.
#
#   bash scripts/train_coco_captioning.sh [output_dir]
set -x

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export NCCL_DEBUG=INFO
export NCCL_IB_DISABLE=0
export NCCL_SOCKET_IFNAME=eth0
export OMP_NUM_THREADS=4

NUM_GPUS=$(nvidia-smi -L | wc -l)
MASTER_PORT=${MASTER_PORT:-29500}

DATA_DIR=datasets/coco_caption
MODEL=pretrained_models/base-vg-labels/ep_67_588997
OUT=${1:-output/coco_captioning_xe}
mkdir -p $OUT

python -m torch.distributed.launch --nproc_per_node=$NUM_GPUS --master_port=$MASTER_PORT \
    oscar/run_captioning.py \
    --data_dir $DATA_DIR \
    --model_name_or_path $MODEL \
    --do_train \
    --do_lower_case \
    --evaluate_during_training \
    --add_od_labels \
    --learning_rate 0.00003 \
    --per_gpu_train_batch_size 64 \
    --num_train_epochs 30 \
    --save_steps 5000 \
    --output_dir $OUT \
    --fp16 --fp16_opt_level O1 2>&1 | tee $OUT/train.log

# pick the checkpoint with the best CIDEr on val and test it with beam search
BEST=$(python -c "import json;l=json.load(open('$OUT/eval_logs.json'));b=max(l,key=lambda r:r['CIDEr']);print('$OUT/checkpoint-%d-%d'%(b['epoch'],b['global_step']))")
python oscar/run_captioning.py \
    --do_test --do_eval \
    --data_dir $DATA_DIR \
    --test_yaml test.yaml \
    --per_gpu_eval_batch_size 64 \
    --num_beams 5 --max_gen_length 20 \
    --eval_model_dir $BEST
