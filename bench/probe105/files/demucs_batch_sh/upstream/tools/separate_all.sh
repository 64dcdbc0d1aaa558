#!/usr/bin/env bash
# Separate every audio file under a directory with Demucs, spreading the
# work over the available GPUs (one worker per GPU).
#
#   tools/separate_all.sh /mnt/music/incoming /mnt/music/stems [model]
#
set -euo pipefail

IN_DIR=${1:?"usage: $0 IN_DIR OUT_DIR [MODEL]"}
OUT_DIR=${2:?"usage: $0 IN_DIR OUT_DIR [MODEL]"}
MODEL=${3:-htdemucs_ft}
SHIFTS=${SHIFTS:-2}
OVERLAP=${OVERLAP:-0.25}
SEGMENT=${SEGMENT:-}
JOBS_PER_GPU=${JOBS_PER_GPU:-1}

# GPUs to use; default: all GPUs reported by nvidia-smi
if [[ -z "${GPUS:-}" ]]; then
    NUM_GPUS=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
    GPUS=$(seq -s, 0 $((NUM_GPUS - 1)))
fi
IFS=',' read -r -a GPU_LIST <<< "$GPUS"
echo "Using GPUs: ${GPU_LIST[*]} (model=$MODEL, shifts=$SHIFTS)"

mkdir -p "$OUT_DIR" logs
LIST=$(mktemp)
find "$IN_DIR" -type f \( -iname '*.mp3' -o -iname '*.wav' -o -iname '*.flac' -o -iname '*.m4a' \) | sort > "$LIST"
TOTAL=$(wc -l < "$LIST")
echo "Found $TOTAL tracks"

extra_args=()
if [[ -n "$SEGMENT" ]]; then
    extra_args+=(--segment "$SEGMENT")
fi

worker() {
    local gpu=$1
    local shard=$2
    local n_shards=$3
    awk -v s="$shard" -v n="$n_shards" 'NR % n == s' "$LIST" | while read -r track; do
        CUDA_VISIBLE_DEVICES=$gpu python3 -m demucs.separate \
            -n "$MODEL" \
            -d cuda \
            --shifts "$SHIFTS" \
            --overlap "$OVERLAP" \
            "${extra_args[@]}" \
            -o "$OUT_DIR" \
            "$track" >> "logs/demucs_gpu${gpu}.log" 2>&1 \
            || echo "FAILED: $track" >> "logs/failed.txt"
    done
}

n_shards=$(( ${#GPU_LIST[@]} * JOBS_PER_GPU ))
shard=0
for gpu in "${GPU_LIST[@]}"; do
    for _ in $(seq 1 "$JOBS_PER_GPU"); do
        worker "$gpu" "$shard" "$n_shards" &
        shard=$((shard + 1))
    done
done
wait

rm -f "$LIST"
if [[ -f logs/failed.txt ]]; then
    echo "Some tracks failed, see logs/failed.txt"
    exit 1
fi
echo "Done: stems written to $OUT_DIR/$MODEL"
