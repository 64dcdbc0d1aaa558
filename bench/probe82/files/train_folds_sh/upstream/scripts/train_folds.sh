#!/usr/bin/env bash
# Full pipeline for the RANZCR / RSNA solutions on one 8-GPU node:
#   stage 0  preprocessing (DICOM -> PNG, GPU decode)
#   stage 1  per-fold single-GPU teachers, 5 folds in parallel (one GPU each)
#   stage 2  pseudo-labels on the external NIH data with the fold ensemble
#   stage 3  8-GPU DDP students with soft targets, fold by fold
#   stage 4  SWA over the best-k checkpoints + BN recalibration
#
#   GPUS=0,1,2,3,4,5,6,7 bash scripts/train_folds.sh [first_stage]
set -euo pipefail

STAGE=${1:-0}
GPUS=${GPUS:-0,1,2,3,4,5,6,7}
NGPU=$(echo "${GPUS}" | tr ',' '\n' | wc -l)
ARCH=${ARCH:-tf_efficientnet_b7_ns}
SIZE=${SIZE:-768}
OUT=${OUT:-outputs}
DATA=${DATA:-../input}
export CUDA_VISIBLE_DEVICES=${GPUS}
export OMP_NUM_THREADS=8
export NCCL_P2P_DISABLE=${NCCL_P2P_DISABLE:-0}    # set to 1 on consumer cards without P2P
export NCCL_IB_DISABLE=1
export NCCL_DEBUG=WARN
export TORCH_DISTRIBUTED_DEBUG=OFF

mkdir -p "${OUT}/logs"
log() { echo "[$(date +%H:%M:%S)] $*" | tee -a "${OUT}/logs/pipeline.log"; }

log "node: $(hostname), GPUs: ${GPUS} (${NGPU})"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader | tee -a "${OUT}/logs/pipeline.log"
python -c "import torch; assert torch.cuda.is_available(), 'no CUDA device visible'; print(torch.cuda.device_count(), 'devices')"

# ---------------------------------------------------------------------------------------------
if [ "${STAGE}" -le 0 ]; then
  log "stage 0: DICOM -> PNG"
  python tools/dicom_to_png_dali.py --src "${DATA}/rsna-breast-cancer-detection/train_images" \
      --dst "${DATA}/rsna-png-1024" --size 1024 --batch 8 2>&1 | tee "${OUT}/logs/stage0.log"
fi

# ---------------------------------------------------------------------------------------------
if [ "${STAGE}" -le 1 ]; then
  log "stage 1: fold teachers (one GPU per fold)"
  pids=()
  IFS=',' read -r -a gpu_arr <<< "${GPUS}"
  for FOLD in 0 1 2 3 4; do
    GPU=${gpu_arr[$((FOLD % NGPU))]}
    CUDA_VISIBLE_DEVICES=${GPU} python train.py --fold "${FOLD}" --backbone "${ARCH}" --gpus 0 \
        > "${OUT}/logs/stage1_fold${FOLD}.log" 2>&1 &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "${pid}"; done
fi

# ---------------------------------------------------------------------------------------------
if [ "${STAGE}" -le 2 ]; then
  log "stage 2: pseudo labels"
  python tools/make_pseudo_labels.py --teachers "${OUT}/round1" --round 2 --tta 2 --gpus "${NGPU}" \
      2>&1 | tee "${OUT}/logs/stage2.log"
fi

# ---------------------------------------------------------------------------------------------
if [ "${STAGE}" -le 3 ]; then
  log "stage 3: DDP students"
  for FOLD in 0 1 2 3 4; do
    torchrun --standalone --nproc_per_node="${NGPU}" -m ranzcr.train_ddp \
        --fold "${FOLD}" --arch "${ARCH}" --size "${SIZE}" --opt fusedlamb --compile \
        --pseudo pseudo/pseudo_round2.csv --out "${OUT}/stage2" 2>&1 | tee "${OUT}/logs/stage3_fold${FOLD}.log"
  done
fi

# ---------------------------------------------------------------------------------------------
if [ "${STAGE}" -le 4 ]; then
  log "stage 4: SWA"
  for FOLD in 0 1 2 3 4; do
    python -m src.tools.swa_fold --ckpt-dir "${OUT}/stage2/fold${FOLD}" --k 3 --mode best \
        --out "${OUT}/stage2/${ARCH}_fold${FOLD}_swa.pth"
  done
fi

log "peak GPU memory per device:"
nvidia-smi --query-gpu=index,memory.used --format=csv,noheader | tee -a "${OUT}/logs/pipeline.log"
log "done"
