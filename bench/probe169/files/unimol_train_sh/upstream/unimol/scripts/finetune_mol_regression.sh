#!/bin/bash
# Fine-tune Uni-Mol (molecular pretrain weights) on a MoleculeNet regression task.
# Tested on 4 x A100-40G; for a single card set n_gpu=1 and CUDA_VISIBLE_DEVICES=0.
#
#   bash finetune_mol_regression.sh qm9dft 64 3e-4 0.1 0.06
#
data_path="./molecular_property_prediction"  # replace to your data path
save_dir="./save_finetune"  # replace to your save path
weight_path="./weights/mol_pre_no_h_220816.pt"  # replace to your ckpt path

task_name=${1:-"qm9dft"}  # molecular property prediction task name
local_batch_size=${2:-32}
lr=${3:-1e-4}
dropout=${4:-0}
warmup=${5:-0.06}

n_gpu=4
MASTER_PORT=10086
task_num=3
loss_func="finetune_smooth_mae"
epoch=40
only_polar=0
conf_size=11
seed=0

if [ "$task_name" == "qm7dft" ] || [ "$task_name" == "qm8dft" ] || [ "$task_name" == "qm9dft" ]; then
    metric="valid_agg_mae"
elif [ "$task_name" == "pcba" ] || [ "$task_name" == "muv" ] || [ "$task_name" == "tox21" ]; then
    metric="valid_agg_auc"
else
    metric="valid_agg_rmse"
fi

update_freq=`expr $local_batch_size / $n_gpu`
global_batch_size=`expr $local_batch_size \* $n_gpu \* $update_freq`
echo "effective batch size: ${global_batch_size}"

export CUDA_VISIBLE_DEVICES="0,1,2,3"
export NCCL_ASYNC_ERROR_HANDLING=1
export OMP_NUM_THREADS=1

python -m torch.distributed.launch --nproc_per_node=$n_gpu --master_port=$MASTER_PORT \
       $(which unicore-train) $data_path --task-name $task_name --user-dir ./unimol --train-subset train --valid-subset valid \
       --conf-size $conf_size \
       --num-workers 8 --ddp-backend=c10d \
       --dict-name dict.txt \
       --task mol_finetune --loss $loss_func --arch unimol_base \
       --classification-head-name $task_name --num-classes $task_num \
       --optimizer adam --adam-betas "(0.9, 0.99)" --adam-eps 1e-6 --clip-norm 1.0 \
       --lr-scheduler polynomial_decay --lr $lr --warmup-ratio $warmup --max-epoch $epoch --batch-size $local_batch_size --pooler-dropout $dropout \
       --update-freq $update_freq --seed $seed \
       --fp16 --fp16-init-scale 4 --fp16-scale-window 256 \
       --log-interval 100 --log-format simple \
       --validate-interval 1 \
       --finetune-from-model $weight_path \
       --best-checkpoint-metric $metric --patience 20 \
       --save-dir $save_dir --only-polar $only_polar \
       --reg

# --reg, for regression task
# --maximize-best-checkpoint-metric, for classification task
