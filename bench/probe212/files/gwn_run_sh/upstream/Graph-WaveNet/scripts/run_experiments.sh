#!/bin/bash
# Reproduce Table 2 / Table 3 of the Graph WaveNet paper.
# Each configuration is pinned to one GPU of the 4x TITAN Xp box; run them in parallel.
set -e

mkdir -p garage logs

GPU=${GPU:-0}
export CUDA_VISIBLE_DEVICES=${GPU}
export OMP_NUM_THREADS=4

# METR-LA, full model (gcn + adaptive adj, transition-matrix init)
python train.py --device cuda:0 --data data/METR-LA --adjdata data/sensor_graph/adj_mx.pkl \
    --gcn_bool --adjtype doubletransition --addaptadj --randomadj \
    --save ./garage/metr --expid 1 2>&1 | tee logs/metr_full.log

# METR-LA, adaptive adjacency only (ablation)
python train.py --device cuda:0 --data data/METR-LA --gcn_bool --aptonly --addaptadj --randomadj \
    --save ./garage/metr_apt --expid 2 2>&1 | tee logs/metr_aptonly.log

# PEMS-BAY on a second card
CUDA_VISIBLE_DEVICES=1 python train.py --device cuda:0 --data data/PEMS-BAY \
    --adjdata data/sensor_graph/adj_mx_bay.pkl --num_nodes 325 \
    --gcn_bool --adjtype doubletransition --addaptadj --randomadj \
    --save ./garage/bay --expid 1 2>&1 | tee logs/bay_full.log

# evaluate the released checkpoint
python test.py --device cuda:0 --gcn_bool --addaptadj --randomadj \
    --checkpoint garage/metr_exp1_best_2.18.pth --plotheatmap False
