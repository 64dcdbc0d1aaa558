#!/bin/bash
# Hyper-parameter sweep for the flair and spaCy NER models.
# Runs one job per GPU in parallel, round-robin over the visible cards.
#
#   bash scripts/sweep_ner.sh            # all GPUs
#   GPUS="0 1" bash scripts/sweep_ner.sh # subset
set -e

cd "$(dirname "$0")/.."

if [ -z "${GPUS}" ]; then
    NUM_GPUS=$(nvidia-smi --list-gpus | wc -l)
    GPUS=$(seq 0 $((NUM_GPUS - 1)))
fi
GPU_ARR=(${GPUS})
N=${#GPU_ARR[@]}
echo "Sweeping on ${N} GPU(s): ${GPUS}"

OUT=runs/sweep_$(date +%m%d_%H%M)
mkdir -p "${OUT}"

# free-memory check: refuse to start on a card somebody else is using
for g in ${GPUS}; do
    used=$(nvidia-smi -i "${g}" --query-gpu=memory.used --format=csv,noheader,nounits)
    if [ "${used}" -gt 2000 ]; then
        echo "GPU ${g} already has ${used} MiB in use, aborting" >&2
        exit 1
    fi
done

job=0
run() {
    local gpu=${GPU_ARR[$((job % N))]}
    local name=$1; shift
    echo "[gpu ${gpu}] ${name}"
    CUDA_VISIBLE_DEVICES=${gpu} "$@" > "${OUT}/${name}.log" 2>&1 &
    job=$((job + 1))
    if [ $((job % N)) -eq 0 ]; then
        wait
    fi
}

# --- flair BiLSTM-CRF: learning rate x hidden size ---
for lr in 0.05 0.1 0.2; do
    for hs in 256 512; do
        run "flair_lstm_lr${lr}_hs${hs}" \
            python examples/ner/train_ner.py --model lstm-crf --lr ${lr} --hidden-size ${hs} \
                --storage gpu --gpu 0 --output "${OUT}/flair_lstm_lr${lr}_hs${hs}"
    done
done

# --- flair FLERT transformer: lr, with AMP ---
for lr in 5e-6 1e-5; do
    run "flair_flert_lr${lr}" \
        python examples/ner/train_ner.py --model transformer --transformer xlm-roberta-large \
            --lr ${lr} --amp --gpu 0 --output "${OUT}/flair_flert_lr${lr}"
done

# --- spaCy transformer: dropout x learn rate (config overrides) ---
for dropout in 0.1 0.2; do
    for lr in 0.00005 0.0001; do
        run "spacy_trf_do${dropout}_lr${lr}" \
            python -m spacy train configs/ner_trf.cfg --output "${OUT}/spacy_trf_do${dropout}_lr${lr}" \
                --paths.train corpus/train.spacy --paths.dev corpus/dev.spacy \
                --training.dropout ${dropout} --training.optimizer.learn_rate.initial_rate ${lr} \
                --gpu-id 0
    done
done

wait
echo "all jobs finished; summarising"
python scripts/summarise_sweep.py "${OUT}" > "${OUT}/summary.tsv"
column -t "${OUT}/summary.tsv"
