#!/usr/bin/env bash
# Full Trans-SVNet pipeline on Cholec80:
#   1) ResNet50 embedding  2) long-range feature bank  3) TeCNO (MS-TCN)  4) transformer fusion
# Usage: bash scripts/run_phase_pipeline.sh [GPU_IDS]   e.g. bash scripts/run_phase_pipeline.sh 0,1
set -euo pipefail

GPU_IDS=${1:-0}
export CUDA_VISIBLE_DEVICES=${GPU_IDS}
export OMP_NUM_THREADS=8

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "${ROOT}"

echo "==> GPUs visible to this run: ${CUDA_VISIBLE_DEVICES}"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv

python - <<'PY'
import torch
assert torch.cuda.is_available(), "no CUDA device visible"
print("torch", torch.__version__, "cuda", torch.version.cuda, "devices", torch.cuda.device_count())
PY

mkdir -p best_model/emb best_model/TeCNO LFB logs

# 1) frame embedding (DataParallel over all visible GPUs)
N_GPU=$(echo "${GPU_IDS}" | tr ',' '\n' | wc -l)
python train_embedding.py -g True --gpu_ids "${GPU_IDS}" -t $((100 * N_GPU)) -v $((100 * N_GPU)) -e 20 -w 8 \
    2>&1 | tee logs/emb.log

EMB=$(ls -t best_model/emb/*.pth | head -n 1)
echo "==> using embedding ${EMB}"

# 2) long-range feature bank (single GPU is enough)
CUDA_VISIBLE_DEVICES=${GPU_IDS%%,*} python generate_LFB.py -g 1 -t 400 --model "${EMB}" --out LFB \
    2>&1 | tee logs/lfb.log

# 3) TeCNO on the feature bank
CUDA_VISIBLE_DEVICES=${GPU_IDS%%,*} python train.py -c modules/mstcn/config/config_tcn.yml --gpus 1 \
    2>&1 | tee logs/tecno.log

TCN=$(ls -t best_model/TeCNO/*.pth | head -n 1)

# 4) Trans-SVNet fusion
CUDA_VISIBLE_DEVICES=${GPU_IDS%%,*} python trans_SV.py --lfb LFB --tcn "${TCN}" -s 30 -e 25 \
    2>&1 | tee logs/trans.log

echo "==> done; peak GPU memory per device:"
nvidia-smi --query-gpu=index,memory.used --format=csv,noheader
