#!/bin/bash
# Set up a local (non-docker) imaginaire environment.
# Requires a CUDA toolkit whose version matches the one PyTorch was built with,
# because the third_party ops are compiled with nvcc below.
set -e

CURRENT=$(pwd)

echo "Installing python dependencies"
pip install --upgrade -r scripts/requirements.txt

echo "Checking the CUDA toolkit"
nvcc --version

echo "Building the custom CUDA layers"
for p in correlation channelnorm resample2d bias_act upfirdn2d; do
    cd imaginaire/third_party/${p};
    rm -rf build dist *info;
    python setup.py install;
    cd ${CURRENT};
done

echo "Installing imaginaire in development mode"
pip install -e .
