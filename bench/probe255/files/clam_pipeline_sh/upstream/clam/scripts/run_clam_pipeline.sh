#!/bin/bash
# End-to-end CLAM pipeline for TCGA-NSCLC (LUAD vs LUSC subtyping).
#   1. tissue segmentation + patching (CPU, OpenSlide)
#   2. patch feature extraction with UNI (GPU)
#   3. 10-fold CLAM-SB training (GPU)
#   4. evaluation + heatmaps (GPU)
# Usage: bash scripts/run_clam_pipeline.sh [gpu_id]
set -eo pipefail

GPU=${1:-0}
DATA_ROOT=${DATA_ROOT:-/data/TCGA-NSCLC}
SLIDE_DIR=$DATA_ROOT/slides
PATCH_DIR=$DATA_ROOT/patches_20x_256
FEAT_DIR=$DATA_ROOT/features_uni_v1
EXP=task_2_tumor_subtyping_CLAM_50_uni

source ~/miniconda3/etc/profile.d/conda.sh
conda activate clam_latest

export UNI_CKPT_PATH=${UNI_CKPT_PATH:-$HOME/checkpoints/uni/pytorch_model.bin}
# uncomment when debugging device-side asserts
# export CUDA_LAUNCH_BLOCKING=1

mkdir -p logs

echo "[1/4] segmentation + patching"
python create_patches_fp.py \
    --source $SLIDE_DIR \
    --save_dir $PATCH_DIR \
    --patch_size 256 --step_size 256 \
    --preset tcga.csv \
    --seg --patch --stitch 2>&1 | tee logs/patching.log

echo "[2/4] feature extraction on GPU ${GPU}"
CUDA_VISIBLE_DEVICES=$GPU python extract_features_fp.py \
    --data_h5_dir $PATCH_DIR \
    --data_slide_dir $SLIDE_DIR \
    --csv_path $PATCH_DIR/process_list_autogen.csv \
    --feat_dir $FEAT_DIR \
    --model_name uni_v1 \
    --batch_size 512 \
    --slide_ext .svs 2>&1 | tee logs/features.log

nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv >> logs/gpu_mem.csv

echo "[3/4] training"
python create_splits_seq.py --task task_2_tumor_subtyping --seed 1 --k 10
CUDA_VISIBLE_DEVICES=$GPU python main.py \
    --drop_out 0.25 --early_stopping --lr 2e-4 --k 10 \
    --exp_code $EXP \
    --weighted_sample --bag_loss ce --inst_loss svm \
    --task task_2_tumor_subtyping --model_type clam_sb \
    --log_data --subtyping \
    --data_root_dir $DATA_ROOT --embed_dim 1024 2>&1 | tee logs/train.log

echo "[4/4] evaluation + heatmaps"
CUDA_VISIBLE_DEVICES=$GPU python eval.py \
    --k 10 --models_exp_code ${EXP}_s1 \
    --save_exp_code ${EXP}_cv \
    --task task_2_tumor_subtyping --model_type clam_sb \
    --results_dir results --data_root_dir $DATA_ROOT --embed_dim 1024

# heatmaps are cheap per slide; spread them over every visible GPU
CUDA_VISIBLE_DEVICES=0,1 python create_heatmaps.py --config_file config_nsclc.yaml

echo "done. results in results/${EXP}_s1, heatmaps in heatmaps/heatmap_production_results"
