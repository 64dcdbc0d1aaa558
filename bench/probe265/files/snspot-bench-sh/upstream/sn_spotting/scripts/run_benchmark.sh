#!/usr/bin/env bash
# Reproduce the pooling ablation of the NetVLAD++ paper (Table 2) on SoccerNet-v2.
#
# usage: bash scripts/run_benchmark.sh /data/SoccerNet [GPU_ID]
#
# Every configuration trains on train, early-stops on valid and reports the
# tight/loose average-mAP on test. One run takes ~25 min on a single V100.
set -e

SOCCERNET_PATH=${1:-/data/SoccerNet}
GPU_ID=${2:-0}
FEATURES=${FEATURES:-ResNET_TF2_PCA512.npy}
LOG_DIR=${LOG_DIR:-logs/benchmark}

# make the GPU numbering match nvidia-smi, and keep cuDNN from printing
# its autotuner warnings for every window size
export CUDA_DEVICE_ORDER=PCI_BUS_ID
export CUDA_VISIBLE_DEVICES=${GPU_ID}
export CUDA_LAUNCH_BLOCKING=${CUDA_LAUNCH_BLOCKING:-0}

mkdir -p "${LOG_DIR}"

POOLS=("MAX" "MAX++" "AVG" "AVG++" "NetVLAD" "NetVLAD++" "NetRVLAD" "NetRVLAD++")
WINDOWS=(5 15 30)

for POOL in "${POOLS[@]}"; do
  for WS in "${WINDOWS[@]}"; do
    NAME="${POOL}_ws${WS}_$(basename "${FEATURES}" .npy)"
    if [ -f "models/${NAME}/results_spotting_test.zip" ]; then
      echo "[skip] ${NAME} already evaluated"
      continue
    fi
    echo "[run ] ${NAME} on GPU ${GPU_ID}"
    # --GPU -1: device selection is done through CUDA_VISIBLE_DEVICES above
    python src/main.py \
      --SoccerNet_path="${SOCCERNET_PATH}" \
      --features="${FEATURES}" \
      --model_name="${NAME}" \
      --pool="${POOL}" \
      --window_size="${WS}" \
      --batch_size=256 \
      --LR=1e-03 \
      --patience=10 \
      --max_num_worker=8 \
      --GPU=-1 \
      2>&1 | tee "${LOG_DIR}/${NAME}.log"
  done
done

# collect the a_mAP lines into one table
echo "pool,window,a_mAP" > "${LOG_DIR}/summary.csv"
for f in "${LOG_DIR}"/*.log; do
  NAME=$(basename "$f" .log)
  MAP=$(grep "a_mAP visibility all:" "$f" | tail -n 1 | awk '{print $NF}')
  POOL=$(echo "${NAME}" | cut -d_ -f1)
  WS=$(echo "${NAME}" | cut -d_ -f2 | sed 's/ws//')
  echo "${POOL},${WS},${MAP}" >> "${LOG_DIR}/summary.csv"
done
column -s, -t < "${LOG_DIR}/summary.csv"
