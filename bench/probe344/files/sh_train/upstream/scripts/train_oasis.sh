#!/usr/bin/env bash
# Train VoxelMorph / TransMorph baselines on OASIS (Learn2Reg task 3) on one GPU.
#
# usage: bash scripts/train_oasis.sh [vxm|transmorph|lapirn] [GPU_ID]
#
# Data is expected under $DATA_ROOT (default ./data/OASIS) in the L2R layout:
#   $DATA_ROOT/imagesTr/OASIS_0001_0000.nii.gz ...

set -euo pipefail

MODEL=${1:-vxm}
GPU_ID=${2:-0}
DATA_ROOT=${DATA_ROOT:-./data/OASIS}
OUT_ROOT=${OUT_ROOT:-./experiments}
SEED=${SEED:-0}

export CUDA_VISIBLE_DEVICES=${GPU_ID}
# make cuDNN/cuBLAS deterministic so baseline numbers are reproducible
export CUBLAS_WORKSPACE_CONFIG=:4096:8
export PYTHONUNBUFFERED=1
export OMP_NUM_THREADS=8

mkdir -p "${OUT_ROOT}/${MODEL}" logs
LOG=logs/${MODEL}_$(date +%Y%m%d_%H%M%S).log

echo "training ${MODEL} on GPU ${GPU_ID} (CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES})" | tee "${LOG}"
python -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'gpus', torch.cuda.device_count())" | tee -a "${LOG}"

ls "${DATA_ROOT}"/imagesTr/*.nii.gz > "${OUT_ROOT}/${MODEL}/train_list.txt"

case "${MODEL}" in
  vxm)
    python scripts/torch/train.py \
      --img-list "${OUT_ROOT}/${MODEL}/train_list.txt" \
      --model-dir "${OUT_ROOT}/${MODEL}" \
      --gpu 0 \
      --image-loss ncc \
      --lambda 1.0 \
      --epochs 1500 \
      --steps-per-epoch 100 \
      --seed "${SEED}" 2>&1 | tee -a "${LOG}"
    ;;
  transmorph)
    cd TransMorph
    python -u train_TransMorph.py 2>&1 | tee -a "../${LOG}"
    ;;
  lapirn)
    cd Code
    python Train_LapIRN_diff.py \
      --datapath "../${DATA_ROOT}/imagesTr" \
      --iteration_lvl1 30001 --iteration_lvl2 30001 --iteration_lvl3 60001 \
      --smooth 3.0 --antifold 0 \
      --gpu_id 0 2>&1 | tee -a "../${LOG}"
    ;;
  *)
    echo "unknown model ${MODEL}" >&2
    exit 1
    ;;
esac

echo "done: $(date)" | tee -a "${LOG}"
