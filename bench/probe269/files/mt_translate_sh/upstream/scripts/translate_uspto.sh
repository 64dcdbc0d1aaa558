#!/bin/bash
# Top-5 forward prediction + scoring on a USPTO test split.
#   GPU=1 bash scripts/translate_uspto.sh STEREO_mixed
dataset=${1:-STEREO_mixed}
model=${dataset}_model_average.pt
export CUDA_VISIBLE_DEVICES=${GPU:-0}

nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

mkdir -p experiments/results

python translate.py -model experiments/models/${model} \
                    -src data/${dataset}/src-test.txt \
                    -output experiments/results/predictions_${model}_on_${dataset}_test.txt \
                    -batch_size 64 -replace_unk -max_length 200 -fast -n_best 5 -beam_size 5 \
                    -gpu 0 -log_probs

python score_predictions.py -targets data/${dataset}/tgt-test.txt \
                            -beam_size 5 -invalid_smiles \
                            -predictions experiments/results/predictions_${model}_on_${dataset}_test.txt
