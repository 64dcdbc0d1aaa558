#!/usr/bin/env bash
# Reproduce the transductive link-prediction table: every model on every dataset,
# one background job per GPU. Each job only sees its own card, so --gpu is always 0.
#
#   bash scripts/run_all_link_prediction.sh "0 1 2 3"
#   NUM_RUNS=1 bash scripts/run_all_link_prediction.sh "2 3"

GPUS=(${1:-0 1 2 3})
NUM_RUNS=${NUM_RUNS:-5}
DATASETS=(wikipedia reddit mooc lastfm enron SocialEvo uci Flights CanParl USLegis UNtrade UNvote Contacts)
MODELS=(JODIE DyRep TGAT TGN CAWN TCL GraphMixer DyGFormer)

cd "$(dirname "$0")/.."
mkdir -p logs/nohup

i=0
for dataset in "${DATASETS[@]}"; do
  for model in "${MODELS[@]}"; do
    gpu=${GPUS[$((i % ${#GPUS[@]}))]}
    echo "[$(date +%T)] ${model} on ${dataset} -> GPU ${gpu}"
    CUDA_VISIBLE_DEVICES=${gpu} nohup python train_link_prediction.py \
        --dataset_name ${dataset} \
        --model_name ${model} \
        --load_best_configs \
        --num_runs ${NUM_RUNS} \
        --gpu 0 \
        > logs/nohup/${model}_${dataset}.out 2>&1 &
    i=$((i + 1))
    # all cards busy: wait for this wave to finish before launching the next one
    if (( i % ${#GPUS[@]} == 0 )); then
      wait
    fi
  done
done
wait
echo "all runs finished, results in saved_results/"
