#!/bin/bash
# Train and evaluate all pickers on one dataset.
#
#   bash scripts/run_benchmark.sh stead 0
#
# The second argument is the GPU index to use. Each model is trained with the
# learning rates from the paper, then evaluated on dev and test.

DATA=${1:-stead}
GPU=${2:-0}
LRS="1e-2 1e-3"
MODELS="phasenet eqtransformer gpd basicphaseae cred"

export CUDA_VISIBLE_DEVICES=${GPU}
export BENCHMARK_DEFAULT_WORKERS=${BENCHMARK_DEFAULT_WORKERS:-16}
# Needed on our DGX nodes, otherwise the dataloader workers fight over cores
export OMP_NUM_THREADS=4

cd "$(dirname "$0")/../benchmark" || exit 1

echo "=== $(date) host $(hostname) data ${DATA} gpu ${GPU}"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader

if [ ! -d "targets/${DATA}" ]; then
    python generate_eval_targets.py "${DATA}" "targets/${DATA}" --sampling_rate 100
fi

for model in ${MODELS}; do
    for lr in ${LRS}; do
        cfg="configs/${DATA}_${model}.json"
        if [ ! -f "${cfg}" ]; then
            echo "skip ${cfg}"
            continue
        fi
        python train.py --config "${cfg}" --lr "${lr}"
        python eval.py "weights/${DATA}_${model}_${lr}" "targets/${DATA}" \
            --sets dev,test --batchsize 1024 --device cuda
    done
done

python collect_results.py --path pred --output "results_${DATA}.csv"
echo "=== done $(date)"
