#!/bin/bash
# Render every Soccer AI mode for one clip. Models are fetched by ./setup.sh.
# Example: ./run_all_modes.sh data/2e57b9_0.mp4 out/
set -euo pipefail

SOURCE=${1:-data/2e57b9_0.mp4}
OUT_DIR=${2:-out}
DEVICE=${DEVICE:-cuda}
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}

mkdir -p "${OUT_DIR}"
name=$(basename "${SOURCE}" .mp4)

for mode in PITCH_DETECTION PLAYER_DETECTION BALL_DETECTION PLAYER_TRACKING TEAM_CLASSIFICATION; do
    echo "==> ${mode} on ${DEVICE}"
    python main.py \
        --source_video_path "${SOURCE}" \
        --target_video_path "${OUT_DIR}/${name}-${mode,,}.mp4" \
        --device "${DEVICE}" \
        --mode "${mode}"
done
