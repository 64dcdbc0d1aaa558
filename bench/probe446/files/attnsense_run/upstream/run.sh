#!/usr/bin/env bash
# Reproduce Table 2 of the AttnSense paper (one GPU is plenty; the model has < 1M parameters).
set -e

export CUDA_VISIBLE_DEVICES=1
export OMP_NUM_THREADS=4

DATA_DIR=${DATA_DIR:-./data}
OUT_DIR=${OUT_DIR:-./runs}

for ds in pamap2 skoda ucihar heterogeneous; do
    for seed in 0 1 2; do
        python train.py \
            --dataset ${ds} \
            --data_dir ${DATA_DIR} \
            --out_dir ${OUT_DIR}/seed${seed} \
            --epochs 100 \
            --batch_size 128 \
            --seed ${seed} \
            --amp
    done
done

python scripts/collect_results.py --runs ${OUT_DIR} --out results_table2.csv
