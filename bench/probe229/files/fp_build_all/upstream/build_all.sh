#!/bin/bash
# Build the native helpers. Run inside the docker container (see docker/dockerfile).
DIR=$(pwd)

# CPU pybind module used for pose clustering
cd $DIR/mycpp/ && mkdir -p build && cd build && cmake .. -DPYTHON_EXECUTABLE=$(which python) && make -j11

# kaolin from source (matches the container's torch)
cd /kaolin && rm -rf build *egg* && pip install -e .

# CUDA kernels for the model-free (BundleSDF) setup
cd $DIR/bundlesdf/mycuda && rm -rf build *egg* && pip install -e .

cd ${DIR}
