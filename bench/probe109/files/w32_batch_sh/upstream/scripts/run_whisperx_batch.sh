#!/usr/bin/env bash
# Transcribe + align + diarize every file in a directory, one whisperx process per GPU.
#
#   HF_TOKEN=hf_xxx ./scripts/run_whisperx_batch.sh /data/interviews /data/out 4
#
set -uo pipefail

IN_DIR=${1:?input dir}
OUT_DIR=${2:?output dir}
NUM_GPUS=${3:-$(nvidia-smi -L | wc -l)}
MODEL=${MODEL:-large-v3}
BATCH=${BATCH:-16}
LANG_OPT=${LANGUAGE:+--language $LANGUAGE}

mkdir -p "$OUT_DIR" "$OUT_DIR/logs"

mapfile -t FILES < <(find "$IN_DIR" -type f \( -name '*.wav' -o -name '*.mp3' -o -name '*.m4a' -o -name '*.flac' \) | sort)
echo "[$(date +%T)] ${#FILES[@]} files, ${NUM_GPUS} GPUs, model=${MODEL}"

run_shard() {
    local gpu=$1
    shift
    for f in "$@"; do
        base=$(basename "${f%.*}")
        if [[ -s "$OUT_DIR/$base.json" ]]; then
            continue
        fi
        CUDA_VISIBLE_DEVICES=$gpu whisperx "$f" \
            --model "$MODEL" \
            --device cuda \
            --compute_type float16 \
            --batch_size "$BATCH" \
            --output_dir "$OUT_DIR" \
            --output_format json \
            --diarize --hf_token "$HF_TOKEN" \
            $LANG_OPT \
            >> "$OUT_DIR/logs/gpu${gpu}.log" 2>&1 \
            || echo "FAILED $f" >> "$OUT_DIR/logs/failed.txt"
    done
}

# round-robin shard the file list
for ((g = 0; g < NUM_GPUS; g++)); do
    shard=()
    for ((i = g; i < ${#FILES[@]}; i += NUM_GPUS)); do
        shard+=("${FILES[$i]}")
    done
    run_shard "$g" "${shard[@]}" &
done

# print GPU memory every minute while the shards run
while jobs -r | grep -q run_shard 2>/dev/null || [[ $(jobs -r | wc -l) -gt 0 ]]; do
    nvidia-smi --query-gpu=index,utilization.gpu,memory.used --format=csv,noheader
    sleep 60
done
wait

n_fail=$(wc -l < "$OUT_DIR/logs/failed.txt" 2>/dev/null || echo 0)
echo "[$(date +%T)] done, ${n_fail} failures"
