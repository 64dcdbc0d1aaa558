#!/usr/bin/env bash
# Reproduce the IHDP table of Shi, Blei & Veitch (2019) with the PyTorch port.
# Each knob is trained on its own GPU so the two runs can proceed in parallel.

set -e

DATA_DIR=${DATA_DIR:-/data/ihdp_csv}
OUT_DIR=${OUT_DIR:-${HOME}/result/ihdp}

options=(
    dragonnet
    tarnet
)

export PYTHONPATH=$(pwd)/src:${PYTHONPATH}
export OMP_NUM_THREADS=4

gpu=0
for i in ${options[@]}; do
    echo "launching ${i} on GPU ${gpu}"
    CUDA_VISIBLE_DEVICES=${gpu} python -m experiment.ihdp_main --data_base_dir ${DATA_DIR} \
                                 --knob $i \
                                 --output_base_dir ${OUT_DIR} > ${OUT_DIR}/${i}.log 2>&1 &
    gpu=$((gpu + 1))
done
wait

nvidia-smi --query-gpu=index,memory.used --format=csv

python -m semi_parameteric_estimation.ate --input_dir ${OUT_DIR}
