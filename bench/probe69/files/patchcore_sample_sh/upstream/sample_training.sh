#!/usr/bin/env bash
# Reproduces the main PatchCore results on MVTec AD (Table 1 / Table 2 of the paper).
# Every run writes its metrics to results/MVTecAD_Results/<log_group>/results.csv.
#
# Requirements: a single GPU with >= 11GB for the IM224 runs, >= 24GB for the IM320 ensemble.
set -euo pipefail

datapath=/path_to_mvtec_folder/mvtec
datasets=('bottle' 'cable' 'capsule' 'carpet' 'grid' 'hazelnut' 'leather' 'metal_nut' 'pill' 'screw' 'tile' 'toothbrush' 'transistor' 'wood' 'zipper')
dataset_flags=($(for dataset in "${datasets[@]}"; do echo '-d '"${dataset}"; done))

export CUDA_VISIBLE_DEVICES=${GPU_ID:-0}
export OMP_NUM_THREADS=8

# Print which card we are about to use; helps when comparing timings across machines.
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader

mkdir -p results logs

############# Detection
### IM224:
# Baseline: Backbone: WR50, Blocks: 2 & 3, Coreset Percentage: 10%, Embedding Dimensionalities: 1024 > 1024,
# neighbourhood aggr. size: 3, neighbours: 1, seed: 0
# Performance: Instance AUROC: 0.992, Pixelwise AUROC: 0.981, PRO: 0.944
python bin/run_patchcore.py --gpu 0 --seed 0 --save_patchcore_model \
  --log_group IM224_WR50_L2-3_P01_D1024-1024_PS-3_AN-1_S0 --log_project MVTecAD_Results results \
  patch_core -b wideresnet50 -le layer2 -le layer3 --faiss_on_gpu \
  --pretrain_embed_dimension 1024 --target_embed_dimension 1024 --anomaly_scorer_num_nn 1 --patchsize 3 \
  sampler -p 0.1 approx_greedy_coreset \
  dataset --resize 256 --imagesize 224 "${dataset_flags[@]}" mvtec "$datapath" 2>&1 | tee logs/im224_wr50_p01.log

# Coreset Percentage: 1%
# Performance: Instance AUROC: 0.991, Pixelwise AUROC: 0.981, PRO: 0.93
python bin/run_patchcore.py --gpu 0 --seed 0 --save_patchcore_model \
  --log_group IM224_WR50_L2-3_P001_D1024-1024_PS-3_AN-1_S0 --log_project MVTecAD_Results results \
  patch_core -b wideresnet50 -le layer2 -le layer3 --faiss_on_gpu --pretrain_embed_dimension 1024 \
  --target_embed_dimension 1024 --anomaly_scorer_num_nn 1 --patchsize 3 \
  sampler -p 0.01 approx_greedy_coreset \
  dataset --resize 256 --imagesize 224 "${dataset_flags[@]}" mvtec "$datapath" 2>&1 | tee logs/im224_wr50_p001.log

# Ensemble: Backbone: WR101 / ResNext101/ DenseNet201, Blocks: 2 & 3, Coreset Percentage: 1%,
# Embedding Dimensionalities: 1024 > 384, neighbourhood aggr. size: 3, neighbours: 1, seed: 3
# Performance: Instance AUROC: 0.993, Pixelwise AUROC: 0.982, PRO: 0.954
python bin/run_patchcore.py --gpu 0 --seed 3 --save_patchcore_model \
  --log_group IM224_Ensemble_L2-3_P001_D1024-384_PS-3_AN-1_S3 --log_project MVTecAD_Results results \
  patch_core -b wideresnet101 -b resnext101 -b densenet201 \
  -le 0.layer2 -le 0.layer3 -le 1.layer2 -le 1.layer3 -le 2.features.denseblock2 -le 2.features.denseblock3 \
  --faiss_on_gpu --pretrain_embed_dimension 1024 --target_embed_dimension 384 \
  --anomaly_scorer_num_nn 1 --patchsize 3 \
  sampler -p 0.01 approx_greedy_coreset \
  dataset --resize 256 --imagesize 224 "${dataset_flags[@]}" mvtec "$datapath" 2>&1 | tee logs/im224_ensemble.log

### IM320:
# Baseline: Backbone: WR50, Blocks: 2 & 3, Coreset Percentage: 1%, Embedding Dimensionalities: 1024 > 1024,
# neighbourhood aggr. size: 3, neighbours: 1, seed: 22
# Performance: Instance AUROC: 0.992, Pixelwise AUROC: 0.981, PRO: 0.944
python bin/run_patchcore.py --gpu 0 --seed 22 --save_patchcore_model \
  --log_group IM320_WR50_L2-3_P001_D1024-1024_PS-3_AN-1_S22 --log_project MVTecAD_Results results \
  patch_core -b wideresnet50 -le layer2 -le layer3 --pretrain_embed_dimension 1024 \
  --target_embed_dimension 1024 --anomaly_scorer_num_nn 1 --faiss_on_gpu --patchsize 3 \
  sampler -p 0.01 approx_greedy_coreset \
  dataset --resize 366 --imagesize 320 "${dataset_flags[@]}" mvtec "$datapath" 2>&1 | tee logs/im320_wr50.log

############# Evaluation of stored models (CPU faiss is enough here)
loadpath=results/MVTecAD_Results
modelfolder=IM224_WR50_L2-3_P001_D1024-1024_PS-3_AN-1_S0
savefolder=evaluated_results/$modelfolder
model_flags=($(for dataset in "${datasets[@]}"; do echo '-p '"$loadpath/$modelfolder/models/mvtec_${dataset}"; done))

python bin/load_and_evaluate_patchcore.py --gpu 0 --seed 0 "$savefolder" \
  patch_core_loader "${model_flags[@]}" --faiss_num_workers 8 \
  dataset --resize 256 --imagesize 224 "${dataset_flags[@]}" mvtec "$datapath"

echo "done: $(date)"
