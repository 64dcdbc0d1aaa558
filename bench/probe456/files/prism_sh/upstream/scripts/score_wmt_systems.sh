#!/usr/bin/env bash
# Score every WMT19 system submission for a language pair with Prism-ref and Prism-src.
#
#   bash scripts/score_wmt_systems.sh de-en /path/to/wmt19-submitted-data m39v1/
#
# Scoring all systems for one language pair takes roughly 20 minutes on a single
# V100; on CPU expect several hours.

set -euo pipefail

LANGPAIR=${1:?language pair, e.g. de-en}
SUBMISSIONS=${2:?path to wmt19-submitted-data}
MODEL_DIR=${3:-m39v1}
GPU=${GPU:-0}
OUT=${OUT:-scores/wmt19/${LANGPAIR}}

SRC_LANG=${LANGPAIR%-*}
TGT_LANG=${LANGPAIR#*-}

mkdir -p "${OUT}"

if [ ! -d "${MODEL_DIR}" ]; then
    echo "Downloading model to ${MODEL_DIR}"
    wget -q http://data.statmt.org/prism/m39v1.tar
    tar xf m39v1.tar
fi

echo "GPU status before scoring:"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

export CUDA_VISIBLE_DEVICES=${GPU}

for SYS in "${SUBMISSIONS}"/txt/system-outputs/newstest2019/${LANGPAIR}/newstest2019.*.${LANGPAIR}; do
    NAME=$(basename "${SYS}")
    NAME=${NAME#newstest2019.}
    NAME=${NAME%.${LANGPAIR}}

    if [ -s "${OUT}/${NAME}.ref.seg" ]; then
        echo "skipping ${NAME} (already scored)"
        continue
    fi

    echo "scoring ${NAME}"
    python prism.py --cand "${SYS}" --ref "sacrebleu:wmt19:${LANGPAIR}" \
        --lang "${TGT_LANG}" --model-dir "${MODEL_DIR}" --segment-scores \
        > "${OUT}/${NAME}.ref.seg"

    python prism.py --cand "${SYS}" --src "sacrebleu:wmt19:${LANGPAIR}" \
        --lang "${TGT_LANG}" --model-dir "${MODEL_DIR}" --segment-scores \
        > "${OUT}/${NAME}.src.seg"

    # system-level score = mean of segment scores
    python -c "import sys, numpy as np; print(np.mean([float(l) for l in open(sys.argv[1])]))" \
        "${OUT}/${NAME}.ref.seg" > "${OUT}/${NAME}.ref.sys"
done

echo "done; scores written to ${OUT}"
