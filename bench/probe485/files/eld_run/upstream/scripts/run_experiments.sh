#!/usr/bin/env bash
# Reproduce the main table: every model on every dataset, 5 seeds each.
# Jobs are spread round-robin over the GPUs that nvidia-smi reports.
#
#   bash scripts/run_experiments.sh            # all datasets
#   DATASETS="hyperpartisan" bash scripts/run_experiments.sh

set -euo pipefail

DATASETS=${DATASETS:-"hyperpartisan 20news eurlex inverted_eurlex books paired_books"}
MODELS=${MODELS:-"bert bertplusrandom bertplustextrank tobert longformer"}
SEEDS=${SEEDS:-"1 2 3 4 5"}
NUM_GPUS=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
OUT=outputs
mkdir -p ${OUT}/logs

export TOKENIZERS_PARALLELISM=false

gpu=0
for data in ${DATASETS}; do
  for model in ${MODELS}; do
    case ${model} in
      longformer) BS=4; ACC=4; LR=5e-5 ;;
      tobert)     BS=4; ACC=4; LR=3e-5 ;;
      *)          BS=16; ACC=1; LR=3e-5 ;;
    esac
    for seed in ${SEEDS}; do
      log=${OUT}/logs/${data}_${model}_${seed}.log
      echo "[gpu ${gpu}] ${data} ${model} seed=${seed} -> ${log}"
      CUDA_VISIBLE_DEVICES=${gpu} python src/train.py \
        --data ${data} --model_name ${model} --seed ${seed} \
        --batch_size ${BS} --grad_accum ${ACC} --lr ${LR} \
        --epochs 20 --fp16 --output_dir ${OUT}/${data}_${model}_${seed} > ${log} 2>&1 &
      gpu=$(( (gpu + 1) % NUM_GPUS ))
      if [ ${gpu} -eq 0 ]; then
        wait   # one job per GPU at a time
      fi
    done
  done
done
wait

python scripts/collect_results.py --output_dir ${OUT}
