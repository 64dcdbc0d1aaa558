#!/usr/bin/env bash
# End-to-end IEMOCAP recipe for emotion2vec:
#   1) build tsv manifests, 2) extract features on GPU, 3) 5-fold downstream training.
# Usage: bash scripts/run_iemocap.sh /path/to/IEMOCAP_full_release [gpu_ids]
set -euo pipefail

IEMOCAP_ROOT=${1:?"usage: $0 IEMOCAP_ROOT [GPUS]"}
GPUS=${2:-"0,1,2,3"}
export CUDA_VISIBLE_DEVICES=${GPUS}
NUM_GPUS=$(echo "${GPUS}" | awk -F, '{print NF}')

MODEL_DIR=$(pwd)/upstream
CKPT=${CKPT:-$(pwd)/checkpoints/emotion2vec_base.pt}
DATA=$(pwd)/data/iemocap
FEAT=$(pwd)/features/iemocap
LAYER=${LAYER:-11}
SEED=${SEED:-42}

export OMP_NUM_THREADS=4
export PYTHONPATH=$(pwd):${PYTHONPATH:-}

echo "[$(date)] using ${NUM_GPUS} GPU(s): ${CUDA_VISIBLE_DEVICES}"
nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv

# ---------------------------------------------------------------- 1. manifests
if [ ! -f "${DATA}/train.tsv" ]; then
  mkdir -p "${DATA}"
  python scripts/iemocap_manifest.py --root "${IEMOCAP_ROOT}" --dest "${DATA}" --four-class
fi

# ---------------------------------------------------------------- 2. features
# one extractor process per GPU, each on its own shard of the manifest
mkdir -p "${FEAT}" logs
for ((i = 0; i < NUM_GPUS; i++)); do
  CUDA_VISIBLE_DEVICES=$(echo "${GPUS}" | cut -d, -f$((i + 1))) \
  python scripts/extract_features.py \
    --source_file "${DATA}/train.tsv" \
    --target_file "${FEAT}/train_shard${i}" \
    --model_dir "${MODEL_DIR}" \
    --checkpoint_dir "${CKPT}" \
    --granularity utterance \
    --layer "${LAYER}" \
    --gpu 0 \
    --shard "${i}" --num_shards "${NUM_GPUS}" \
    > "logs/extract_${i}.log" 2>&1 &
done
wait
python scripts/merge_shards.py --prefix "${FEAT}/train" --num_shards "${NUM_GPUS}"
cp "${DATA}/train.emo" "${FEAT}/train.emo"

# ---------------------------------------------------------------- 3. downstream
export CUDA_VISIBLE_DEVICES=$(echo "${GPUS}" | cut -d, -f1)
python iemocap_downstream/main.py \
  common.seed="${SEED}" \
  common.use_cuda=true \
  dataset.feat_path="${FEAT}/train" \
  dataset.batch_size=128 \
  model._name=BaseModel \
  optimization.lr=5e-4 \
  optimization.epoch=100 \
  common.save_dir="outputs/iemocap_layer${LAYER}_seed${SEED}"

echo "[$(date)] done"
