#!/usr/bin/env bash
# Continuously pull fresh training chunks from the rescorer output, train one
# cycle on the selected GPU and upload the resulting network.
#
# usage: scripts/train_loop.sh CONFIG GPU [NETDIR]
set -euo pipefail

CONFIG="$1"
GPU="$2"
NETDIR="${3:-./networks}"
REPO_DIR="$(cd "$(dirname "$0")/.." && pwd)"
LOGDIR="$REPO_DIR/logs"
mkdir -p "$LOGDIR" "$NETDIR"

# Keep a record of device load next to the training log
nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used,temperature.gpu --format=csv -l 60 -i "$GPU" > "$LOGDIR/gpu-$GPU.csv" &
MONITOR_PID=$!
trap 'kill $MONITOR_PID 2>/dev/null || true' EXIT

cycle=0
while true; do
    cycle=$((cycle + 1))
    echo "=== cycle $cycle $(date -u +%FT%TZ) ==="
    rsync -a --delete rescorer:/data/chunks/latest/ "$REPO_DIR/data/chunks/" || {
        echo "rsync failed, retrying in 5 minutes"
        sleep 300
        continue
    }

    OUT="$NETDIR/net-$(date -u +%Y%m%d-%H%M%S).pb.gz"
    CUDA_VISIBLE_DEVICES="$GPU" python3 "$REPO_DIR/pt/train.py" \
        --cfg "$CONFIG" \
        --output "$OUT" 2>&1 | tee -a "$LOGDIR/train.log"

    if [[ -f "$OUT" ]]; then
        echo "produced $OUT"
        ./scripts/upload.sh "$OUT" || echo "upload failed, keeping $OUT locally"
    fi
    sleep 60
done
