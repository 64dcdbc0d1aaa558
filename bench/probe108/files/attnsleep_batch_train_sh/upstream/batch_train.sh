#!/bin/bash
# Run the k-fold cross-validation of AttnSleep, one fold per GPU, several folds in parallel.
#
#   bash batch_train.sh <np_data_dir> <num_folds> [gpus]
#   e.g. bash batch_train.sh data/edf_20_npz 20 "0 1 2 3"
#
# Each fold writes its checkpoints under saved/<exp_name>/fold<k>/ and its predictions
# (outs_k.npy / trgs_k.npy); the last fold computes the overall metrics.

set -e

data_dir=$1
num_folds=${2:-20}
gpus=(${3:-0 1 2 3})
config=${CONFIG:-config.json}

if [ -z "$data_dir" ]; then
    echo "usage: bash batch_train.sh <np_data_dir> <num_folds> [gpus]"
    exit 1
fi

mkdir -p logs
echo "Training $num_folds folds on GPUs: ${gpus[*]}"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

start=0
end=$((num_folds - 1))
n_gpus=${#gpus[@]}

# folds 0..end-1 run n_gpus at a time; the last fold (which aggregates all
# predictions) runs alone afterwards
for i in $(seq $start $((end - 1)))
do
    gpu=${gpus[$((i % n_gpus))]}
    echo "fold $i -> GPU $gpu"
    CUDA_VISIBLE_DEVICES=$gpu python train_Kfold_CV.py --fold_id=$i --device 0 --np_data_dir "$data_dir" \
        --config "$config" > logs/fold_${i}.log 2>&1 &
    if (( (i + 1) % n_gpus == 0 )); then
        wait
    fi
done
wait

CUDA_VISIBLE_DEVICES=${gpus[0]} python train_Kfold_CV.py --fold_id=$end --device 0 --np_data_dir "$data_dir" \
    --config "$config" 2>&1 | tee logs/fold_${end}.log

echo "All folds done. Reports are in saved/"
