#!/bin/bash
# Build the image and start a container with the repository mounted.
# Requires the NVIDIA container toolkit so the container can see the GPUs.
set -e

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_DIR="$(dirname "$SCRIPT_DIR")"
IMAGE=alpha-zero-general:pytorch

docker build -t "$IMAGE" -f "$SCRIPT_DIR/Dockerfile.pytorch" "$SCRIPT_DIR"

nvidia-docker run -it --rm \
    --name alpha-zero-general \
    -p 8888:8888 \
    -v "$REPO_DIR":/workspace/alpha-zero-general \
    --shm-size=8g \
    "$IMAGE" "$@"
