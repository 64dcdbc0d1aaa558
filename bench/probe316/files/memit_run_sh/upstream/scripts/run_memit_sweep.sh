#!/usr/bin/env bash
# Mass-editing sweep: MEMIT / ROME / FT on GPT-J and GPT2-XL over MultiCounterFact and zsRE.
#
# Usage:  bash scripts/run_memit_sweep.sh [GPU_ID] [NUM_EDITS...]
#   e.g.  bash scripts/run_memit_sweep.sh 1 1 10 100 1000 10000
#
# GPT-J with 10k edits needs ~45GB of GPU memory for the covariance solve;
# use an A100-80G or pass --conserve_memory.
set -e

GPU_ID=${1:-0}
shift || true
NUM_EDITS=${@:-"1 10 100 1000 10000"}

export CUDA_VISIBLE_DEVICES=${GPU_ID}
export TOKENIZERS_PARALLELISM=false
export PYTHONPATH=$(pwd):${PYTHONPATH}
# Deterministic cuBLAS workspace so the sweeps are comparable run-to-run.
export CUBLAS_WORKSPACE_CONFIG=:4096:8

MODEL=${MODEL:-EleutherAI/gpt-j-6B}
HPARAMS=${HPARAMS:-EleutherAI_gpt-j-6B.json}
DS=${DS:-mcf}
LOG_DIR=logs/sweep_$(date +%Y%m%d_%H%M%S)
mkdir -p ${LOG_DIR}

echo "Running on GPU ${CUDA_VISIBLE_DEVICES}: $(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader -i ${GPU_ID})"

# Precompute the layer statistics once so that the timed runs do not include them.
for LAYER in 3 4 5 6 7 8; do
    python -m rome.layer_stats \
        --model_name=${MODEL} \
        --layers=${LAYER} \
        --sample_size=100000 \
        --precision=float32 \
        --to_collect=mom2 2>&1 | tee -a ${LOG_DIR}/layer_stats.log
done

for N in ${NUM_EDITS}; do
    for ALG in MEMIT ROME FT; do
        if [[ "${ALG}" == "ROME" && ${N} -gt 1 ]]; then
            continue
        fi
        echo ">>> ${ALG} with ${N} edits on ${MODEL} (${DS})"
        python3 -m experiments.evaluate \
            --alg_name=${ALG} \
            --model_name=${MODEL} \
            --hparams_fname=${HPARAMS} \
            --ds_name=${DS} \
            --dataset_size_limit=10000 \
            --num_edits=${N} \
            --use_cache \
            --skip_generation_tests 2>&1 | tee ${LOG_DIR}/${ALG}_${N}.log
    done
done

python3 -m experiments.summarize --dir_name=MEMIT --runs=$(ls results/MEMIT | tail -n 5 | paste -sd, -)
echo "Done. Logs in ${LOG_DIR}"
