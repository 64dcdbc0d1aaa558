#!/usr/bin/env bash
set -e

# DIMES TSP-500 (KNN-50): meta-training, then test-time fine-tuning + heatmap export for MCTS.
# Requires: 1x V100/A100, CUDA 11.3. Run from TSP/TSP-KNN.

GPU=${GPU:-0}
DATA_DIR=${DATA_DIR:-../data}
CKPT_DIR=${CKPT_DIR:-./ckpt}
HEATMAP_DIR=${HEATMAP_DIR:-./heatmaps/tsp500}

echo "Running on GPU ${GPU}:"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader | sed -n "$((GPU + 1))p"

export OMP_NUM_THREADS=8
export CUDA_LAUNCH_BLOCKING=${CUDA_LAUNCH_BLOCKING:-0}

mkdir -p "${CKPT_DIR}" "${HEATMAP_DIR}"

# 1) meta-training (about 10 h on one A100)
python3 -u tsp_train.py \
  --gpu "${GPU}" \
  --n_nodes 500 \
  --knn_k 50 \
  --outer_opt AdamW --outer_opt_lr 0.001 --outer_opt_wd 1e-5 \
  --inner_opt AdamW --inner_opt_lr 0.05 --inner_opt_wd 5e-4 \
  --net_units 32 --net_act silu --emb_depth 12 --par_depth 3 \
  --tr_batch_size 3 --tr_outer_steps 120 --tr_inner_steps 15 --tr_inner_sample_size 100 \
  --amp \
  --save_name tsp500 --save_dir "${CKPT_DIR}"

# 2) test: active search fine-tuning per instance, then dump heatmaps
CUDA_VISIBLE_DEVICES=${GPU} python3 -u tsp_test.py \
  --test_file "${DATA_DIR}/tsp500_test_concorde.txt" \
  --ckpt "${CKPT_DIR}/tsp500_best.pt" \
  --te_net_steps 100 --te_sample_size 200 \
  --save_heatmap_dir "${HEATMAP_DIR}"

# 3) MCTS on the exported heatmaps (C++, CPU only)
cd ../mcts
make -j
./solve-tsp500.sh "${HEATMAP_DIR}" 500 16
