#!/bin/bash
# Start the SBI container with the repository mounted at /workspace.
# Build the image first:  docker build -t sbi dockerfiles/
docker run -it --gpus all --shm-size 64G \
    -v $PWD:/workspace \
    -v /path/to/datasets:/workspace/data \
    --name sbi_container \
    sbi bash
