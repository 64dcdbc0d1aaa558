#!/usr/bin/env bash
# Uni-Mol molecular pretraining on 8 x A100 (one node).
# Usage: bash examples/mol_pretrain.sh /path/to/ligands /path/to/save_dir

set -e

data_path=${1:-./example_data/molecules}
save_dir=${2:-./save_pretrain}
n_gpu=8
MASTER_PORT=${MASTER_PORT:-10086}
lr=1e-4
wd=1e-4
batch_size=16
update_freq=1
masked_token_loss=1
masked_coord_loss=5
masked_dist_loss=10
x_norm_loss=0.01
delta_pair_repr_norm_loss=0.01
mask_prob=0.15
only_polar=0
noise_type="uniform"
noise=1.0
seed=1
warmup_steps=10000
max_steps=1000000

export NCCL_ASYNC_ERROR_HANDLING=1
export OMP_NUM_THREADS=1
export CUDA_DEVICE_MAX_CONNECTIONS=1
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7

mkdir -p "${save_dir}"
cp "$0" "${save_dir}/"

# log the environment for reproducibility
python -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.device_count())" | tee "${save_dir}/env.txt"

python -m torch.distributed.launch --nproc_per_node=$n_gpu --master_port=$MASTER_PORT $(which unicore-train) $data_path \
       --user-dir ./unimol --train-subset train --valid-subset valid \
       --num-workers 8 --ddp-backend=c10d \
       --task unimol --loss unimol --arch unimol_base \
       --optimizer adam --adam-betas "(0.9, 0.99)" --adam-eps 1e-6 --clip-norm 1.0 --weight-decay $wd \
       --lr-scheduler polynomial_decay --lr $lr --warmup-updates $warmup_steps --total-num-update $max_steps \
       --update-freq $update_freq --seed $seed \
       --fp16 --fp16-init-scale 4 --fp16-scale-window 256 --tensorboard-logdir $save_dir/tsb \
       --max-update $max_steps --log-interval 10 --log-format simple \
       --save-interval-updates 10000 --validate-interval-updates 10000 --keep-interval-updates 10 --no-epoch-checkpoints \
       --masked-token-loss $masked_token_loss --masked-coord-loss $masked_coord_loss --masked-dist-loss $masked_dist_loss \
       --x-norm-loss $x_norm_loss --delta-pair-repr-norm-loss $delta_pair_repr_norm_loss \
       --mask-prob $mask_prob --noise-type $noise_type --noise $noise --batch-size $batch_size \
       --save-dir $save_dir --only-polar $only_polar \
       --distributed-backend nccl

# ----------------------------------------------------------------------------
# optional: fine-tune straight away on a MoleculeNet task (single GPU)
# ----------------------------------------------------------------------------
if [ -n "${FINETUNE_TASK}" ]; then
    task_name=${FINETUNE_TASK}
    finetune_dir=${save_dir}/finetune_${task_name}
    mkdir -p "${finetune_dir}"
    CUDA_VISIBLE_DEVICES=0 python $(which unicore-train) ./molecular_property_prediction \
        --task-name $task_name --user-dir ./unimol --train-subset train --valid-subset valid,test \
        --conf-size 11 --num-workers 8 --ddp-backend=c10d \
        --dict-name dict.txt --task mol_finetune --loss finetune_cross_entropy --arch unimol_base \
        --classification-head-name $task_name --num-classes 2 \
        --optimizer adam --adam-betas "(0.9, 0.99)" --adam-eps 1e-6 --clip-norm 1.0 \
        --lr-scheduler polynomial_decay --lr 4e-4 --warmup-ratio 0.06 --max-epoch 40 --batch-size 32 \
        --pooler-dropout 0.1 --update-freq 1 --seed 1 \
        --fp16 --fp16-init-scale 4 --fp16-scale-window 256 \
        --log-interval 100 --log-format simple \
        --finetune-from-model "${save_dir}/checkpoint_last.pt" \
        --best-checkpoint-metric valid_agg_auc --patience 20 --maximize-best-checkpoint-metric \
        --save-dir "${finetune_dir}"
fi
