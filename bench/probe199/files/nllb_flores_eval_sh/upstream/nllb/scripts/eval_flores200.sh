#!/bin/bash
# Evaluate an NLLB-200 checkpoint on FLORES-200 devtest for a list of directions.
# Each direction is pinned to one GPU; directions are scheduled round-robin and
# at most one job runs per GPU at a time.
#
#   MODEL=facebook/nllb-200-distilled-1.3B GPUS="0 1 2 3" bash eval_flores200.sh pairs.txt
#
# pairs.txt: one "src_code tgt_code" per line, e.g. "eng_Latn zul_Latn".
set -e

PAIRS_FILE=${1:-pairs.txt}
MODEL=${MODEL:-facebook/nllb-200-distilled-600M}
FLORES_DIR=${FLORES_DIR:-$HOME/data/flores200_dataset}
SPLIT=${SPLIT:-devtest}
OUT=${OUT:-results/$(basename "$MODEL")/$SPLIT}
BATCH_SIZE=${BATCH_SIZE:-32}
BEAMS=${BEAMS:-4}
read -r -a GPU_LIST <<< "${GPUS:-0 1 2 3 4 5 6 7}"

mkdir -p "$OUT"
SCRIPT_DIR=$(cd "$(dirname "$0")" && pwd)

if [ ! -d "$FLORES_DIR/$SPLIT" ]; then
    echo "FLORES-200 not found at $FLORES_DIR, download it from the NLLB repo first" >&2
    exit 1
fi

echo "model=$MODEL  split=$SPLIT  gpus=${GPU_LIST[*]}"
echo "driver: $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n1)"

declare -A SLOT_PID
i=0
while read -r SRC TGT; do
    [ -z "$SRC" ] && continue
    gpu=${GPU_LIST[$((i % ${#GPU_LIST[@]}))]}
    # wait for this GPU's previous job
    if [ -n "${SLOT_PID[$gpu]}" ]; then
        wait "${SLOT_PID[$gpu]}" || echo "job on gpu $gpu failed" >&2
    fi
    hyp="$OUT/$SRC-$TGT.hyp"
    log="$OUT/$SRC-$TGT.log"
    CUDA_VISIBLE_DEVICES=$gpu python "$SCRIPT_DIR/../translate_hf.py" \
        --model "$MODEL" \
        --src-lang "$SRC" --tgt-lang "$TGT" \
        --input "$FLORES_DIR/$SPLIT/$SRC.$SPLIT" \
        --output "$hyp" \
        --batch-size "$BATCH_SIZE" --num-beams "$BEAMS" --fp16 --verbose > "$log" 2>&1 &
    SLOT_PID[$gpu]=$!
    i=$((i + 1))
done < "$PAIRS_FILE"
wait

echo "scoring..."
: > "$OUT/scores.tsv"
while read -r SRC TGT; do
    [ -z "$SRC" ] && continue
    hyp="$OUT/$SRC-$TGT.hyp"
    ref="$FLORES_DIR/$SPLIT/$TGT.$SPLIT"
    if [ ! -s "$hyp" ]; then
        echo -e "$SRC-$TGT\tNA\tNA" >> "$OUT/scores.tsv"
        continue
    fi
    bleu=$(sacrebleu "$ref" -i "$hyp" -tok flores200 -b -w 2)
    chrf=$(sacrebleu "$ref" -i "$hyp" -m chrf --chrf-word-order 2 -b -w 2)
    echo -e "$SRC-$TGT\t$bleu\t$chrf" >> "$OUT/scores.tsv"
done < "$PAIRS_FILE"

column -t "$OUT/scores.tsv"
