#!/bin/bash
# Usage: bash docker_run.sh
# Runs TruFor inside the container on ./images and writes the .npz maps to ./output.
INPUT_DIR=$(realpath -e images)
OUTPUT_DIR=$(realpath output)
mkdir -p "${OUTPUT_DIR}"

docker run --runtime=nvidia --gpus all \
    -v "${INPUT_DIR}":/data \
    -v "${OUTPUT_DIR}":/data_out \
    --shm-size 8g \
    trufor \
    -gpu 0 \
    -in /data \
    -out /data_out
