#!/usr/bin/env bash
# Uni-Mol protein-ligand binding pose prediction: finetune on PDBbind, then predict poses for the CASF-2016 core set.
#   bash scripts/docking_pose.sh train
#   bash scripts/docking_pose.sh infer
set -e

MODE=${1:-train}

data_path="./protein_ligand_binding_pose_prediction"
save_dir="./save_pose"
results_path="./infer_pose"
weight_path="${save_dir}/checkpoint_best.pt"

n_gpu=4
MASTER_PORT=10086
finetune_mol_model="./weights/mol_pre_no_h_220816.pt"
finetune_pocket_model="./weights/pocket_pre_220816.pt"
lr=3e-4
batch_size=8
epoch=50
dropout=0.2
warmup=0.06
update_freq=1
dist_threshold=8.0
recycling=3

export NCCL_ASYNC_ERROR_HANDLING=1
export OMP_NUM_THREADS=1

if [ "$MODE" == "train" ]; then
    export CUDA_VISIBLE_DEVICES="0,1,2,3"
    python -m torch.distributed.launch --nproc_per_node=$n_gpu --master_port=$MASTER_PORT $(which unicore-train) $data_path --user-dir ./unimol --train-subset train --valid-subset valid \
           --num-workers 8 --ddp-backend=c10d \
           --task docking_pose --loss docking_pose --arch docking_pose  \
           --optimizer adam --adam-betas "(0.9, 0.99)" --adam-eps 1e-6 --clip-norm 1.0 \
           --lr-scheduler polynomial_decay --lr $lr --warmup-ratio $warmup --max-epoch $epoch --batch-size $batch_size \
           --mol-pooler-dropout $dropout --pocket-pooler-dropout $dropout \
           --fp16 --fp16-init-scale 4 --fp16-scale-window 256 --update-freq $update_freq --seed 1 \
           --tensorboard-logdir $save_dir/tsb \
           --log-interval 100 --log-format simple \
           --validate-interval 1 --keep-last-epochs 10 \
           --best-checkpoint-metric valid_loss  --patience 2000 --all-gather-list-size 2048000 \
           --mol-pretrained-weights $finetune_mol_model --pocket-pretrained-weights $finetune_pocket_model \
           --finetune-mol-model $finetune_mol_model --finetune-pocket-model $finetune_pocket_model \
           --dist-threshold $dist_threshold --recycling $recycling \
           --save-dir $save_dir \
           --find-unused-parameters
elif [ "$MODE" == "infer" ]; then
    export CUDA_VISIBLE_DEVICES="0"
    python ./unimol/infer.py --user-dir ./unimol $data_path --valid-subset test \
           --results-path $results_path \
           --num-workers 8 --ddp-backend=c10d --batch-size 4 \
           --task docking_pose --loss docking_pose --arch docking_pose \
           --path $weight_path \
           --fp16 --fp16-init-scale 4 --fp16-scale-window 256 \
           --dist-threshold $dist_threshold --recycling $recycling \
           --log-interval 50 --log-format simple
    # pose generation from predicted distance maps runs on CPU (rdkit + scipy)
    python ./unimol/utils/docking.py --nthreads 20 --predict-file ${results_path}/save_pose_test.out.pkl \
           --reference-file ${data_path}/test.lmdb --output-path ./protein_ligand_binding_pose_prediction
else
    echo "unknown mode: $MODE" && exit 1
fi
