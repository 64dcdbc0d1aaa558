#!/bin/bash
# Train TensoIR on the four synthetic scenes, single-light setting.
# Usage: GPU=1 bash scripts/train_single_light.sh
#   needs ~20GB of GPU memory per scene at the final grid resolution
set -e

export CUDA_VISIBLE_DEVICES=${GPU:-0}
export OMP_NUM_THREADS=8

for scene in armadillo ficus hotdog lego; do
    echo "==== training ${scene} ===="
    python train_tensoIR.py --config ./configs/single_light/${scene}.txt
done

# relight every scene under the eight test environment maps
for scene in armadillo ficus hotdog lego; do
    ckpt=$(ls -d ./log/log_single_light/tensoIR_single_light_${scene}-*/ | tail -n 1)
    python scripts/relight_importance.py \
        --ckpt ${ckpt}/checkpoints/tensoIR_single_light_${scene}_70000.th \
        --config ./configs/relighting_test/${scene}_single.txt \
        --batch_size 800
done
