#!/usr/bin/env bash
# Meta-train DIMES on TSP-500 (single GPU, ~2 days on a V100).
# Usage: bash train-tsp500.sh [GPU_ID]
set -e

GPU=${1:-0}
export CUDA_VISIBLE_DEVICES=${GPU}
export OMP_NUM_THREADS=8

cd "$(dirname "$0")"
mkdir -p output/tsp500

# build the CPU MCTS solver once (used only at test time)
if [ ! -x mcts/bin/solve-tsp ]; then
    make -C mcts -j8
fi

python -u train.py train \
    --n_nodes 500 \
    --knn_k 50 \
    --net_units 32 \
    --emb_depth 12 \
    --emb_agg mean \
    --tr_batch_size 3 \
    --tr_outer_steps 120 \
    --tr_inner_opt AdamW \
    --tr_inner_lr 5e-2 \
    --tr_inner_steps 15 \
    --tr_inner_sample_size 100 \
    --device cuda:0 \
    --output_dir output/tsp500 \
    --save_name tsp500~net32x12 \
    2>&1 | tee output/tsp500-train.log
