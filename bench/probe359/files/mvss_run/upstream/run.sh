#!/usr/bin/env bash
# Evaluate the released MVSS-Net checkpoints on the CASIA / Columbia / COVER splits.
set -e

MODEL=${MODEL:-ckpt/mvssnet_casia.pt}
SAVE=${SAVE:-save_out}

for split in CASIAv1plus Columbia COVER; do
    echo "== ${split} =="
    python inference.py --model_path "${MODEL}" --test_file "data/${split}.txt" --save_dir "${SAVE}" --gpu 2
done
