#!/usr/bin/env bash
# Train / evaluate BIT or ChangeFormer on LEVIR-CD, WHU-CD or DSIFN-CD.
#   bash scripts/run_cd.sh LEVIR base_transformer_pos_s4_dd8
set -e

gpus=0
data_name=${1:-LEVIR}
net_G=${2:-base_transformer_pos_s4_dd8}

img_size=256
batch_size=8
lr=0.01
max_epochs=200
lr_policy=linear
split=train
split_val=val
project_name=CD_${net_G}_${data_name}_b${batch_size}_lr${lr}_${split}_${split_val}_${max_epochs}_${lr_policy}

export CUDA_VISIBLE_DEVICES=${gpus}
echo "Using GPU(s): ${CUDA_VISIBLE_DEVICES}"
nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv

mkdir -p checkpoints vis logs

python main_cd.py \
    --img_size ${img_size} \
    --checkpoint_root checkpoints \
    --lr_policy ${lr_policy} \
    --split ${split} \
    --split_val ${split_val} \
    --net_G ${net_G} \
    --gpu_ids ${gpus} \
    --max_epochs ${max_epochs} \
    --project_name ${project_name} \
    --batch_size ${batch_size} \
    --data_name ${data_name} \
    --lr ${lr} 2>&1 | tee logs/${project_name}.log

# evaluation on the test split with the best checkpoint
python eval_cd.py \
    --split test \
    --net_G ${net_G} \
    --checkpoint_name best_ckpt.pt \
    --gpu_ids ${gpus} \
    --project_name ${project_name} \
    --data_name ${data_name}

# ChangeFormerV6 multi-GPU run (DataParallel inside init_net)
if [ "${net_G}" = "ChangeFormerV6" ]; then
    CUDA_VISIBLE_DEVICES=0,1 python main_cd.py \
        --net_G ChangeFormerV6 \
        --gpu_ids 0,1 \
        --batch_size 16 \
        --data_name ${data_name} \
        --project_name ${project_name}_dp
fi
