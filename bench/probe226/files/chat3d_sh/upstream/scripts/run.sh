#!/bin/bash
# Chat-3D v2 instruction tuning.
#   bash scripts/run.sh local        # single node, torchrun
#   bash scripts/run.sh slurm        # our cluster (4 nodes x 8 A100)
set -x

MODE=${1:-local}
NUM_GPUS=${NUM_GPUS:-4}
NNODES=${NNODES:-1}

which_python=$(which python)
export PYTHONPATH=${PYTHONPATH}:${which_python}:.
echo "PYTHONPATH: ${PYTHONPATH}"

export CUDA_VISIBLE_DEVICES=0,1,2,3
# the 4x RTX4090 workstation hangs in all_reduce without these two
export NCCL_P2P_DISABLE=1
export NCCL_IB_DISABLE=1
export NCCL_DEBUG=WARN
export NCCL_SOCKET_IFNAME=eth0
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1
export OMP_NUM_THREADS=4
export TOKENIZERS_PARALLELISM=false

export MASTER_PORT=$((54000 + $RANDOM % 10000))
export MASTER_ADDR=${MASTER_ADDR:-localhost}

epoch=3
batch_size=32
lr=5e-3
train_emb=True
train_img_proj=True
add_img_token=True
add_scene_token=False
no_obj=False
input_dim=1024 # 1024
bidirection=False
different_lr=False
max_obj_num=100
lora_r=16
lora_alpha=16
add_pos_emb=False
feat_fusion=False
fuse_with_id=False
config=""
max_grad_norm=0.01
seed=42
use_location_token=False

llama_model_path="./model/vicuna-7b-v1.5"

train_tag="scanrefer#obj_align#nr3d_caption#scan2cap#scanqa#sqa3d#multi3dref"
val_tag="scanqa#scanrefer#scan2cap#sqa3d#multi3dref"

evaluate=False
debug=False
if [ $evaluate = "True" ]; then
    enable_wandb=False
    gpu_num=1
    do_save=False
    other_info="evaluation"
else
    enable_wandb=False
    gpu_num=${NUM_GPUS}
    do_save=True
    other_info="chatscene"
fi

tag="${train_tag}__${val_tag}__${other_info}"

pretrained_path=""

OUTPUT_DIR=outputs/"$(date +"%Y%m%d_%H%M%S")"_lr"$lr"_ep"$epoch"_"$tag"
mkdir -p ${OUTPUT_DIR}

ARGS="scripts/config.py \
    output_dir $OUTPUT_DIR \
    scheduler.epochs $epoch \
    optimizer.lr $lr \
    model.add_scene_token $add_scene_token \
    model.add_img_token $add_img_token \
    pretrained_path $pretrained_path \
    evaluate $evaluate \
    wandb.enable $enable_wandb \
    gpu_num $gpu_num \
    do_save $do_save \
    batch_size $batch_size \
    model.train_emb $train_emb \
    model.train_img_proj $train_img_proj \
    train_tag $train_tag \
    val_tag $val_tag \
    model.no_obj $no_obj \
    segmentor $segmentor \
    pc_encoder $pc_encoder \
    model.input_dim $input_dim \
    model.bidirection $bidirection \
    optimizer.different_lr.enable $different_lr \
    model.max_obj_num $max_obj_num \
    lora.lora_r $lora_r \
    lora.lora_alpha $lora_alpha \
    model.add_pos_emb $add_pos_emb \
    model.feat_fusion $feat_fusion \
    optimizer.max_grad_norm $max_grad_norm \
    seed $seed \
    model.fuse_with_id $fuse_with_id \
    model.llama_model_path $llama_model_path \
    model.use_location_token $use_location_token"

if [ "$MODE" = "slurm" ]; then
    srun --partition=mozi-S1 --gres=gpu:${NUM_GPUS} --ntasks-per-node=${NUM_GPUS} \
        --nodes=${NNODES} --kill-on-bad-exit \
        python tasks/train.py ${ARGS} 2>&1 | tee ${OUTPUT_DIR}/train.log
else
    torchrun --nnodes=${NNODES} --nproc_per_node=${gpu_num} \
        --master_addr=${MASTER_ADDR} --master_port=${MASTER_PORT} \
        tasks/train.py ${ARGS} 2>&1 | tee ${OUTPUT_DIR}/train.log
fi
