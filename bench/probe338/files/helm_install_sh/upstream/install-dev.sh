#!/bin/bash

# Extra dependencies for HELM when developing or running local (non-API) models.
# Run this from the root of the repository inside a fresh conda/venv:
#
#   conda create -n crfm-helm python=3.10 pip
#   conda activate crfm-helm
#   ./install-dev.sh
#
# The GPU build of PyTorch below is pinned to match the CUDA 12.1 driver on
# the lab's A100 nodes; adjust the index URL if your driver is older.

set -e

# On Mac OS, skip installing pytorch with CUDA because CUDA is not supported
if [[ $OSTYPE != 'darwin'* ]]; then
  # Manually install pytorch to avoid pip getting killed: https://stackoverflow.com/a/54329850
  pip install --no-cache-dir --index-url https://download.pytorch.org/whl/cu121 torch==2.2.2 torchvision==0.17.2
fi

# Install all pinned dependencies
pip install -r requirements.txt
# Install HELM in edit mode with all optional dependencies
pip install -e .[all,dev]
# Check dependencies
pip check

# Local-model extras used by src/helm/clients/huggingface_client.py and the
# vLLM client when benchmarking self-hosted checkpoints.
pip install "accelerate>=0.25" "bitsandbytes>=0.41" "flash-attn==2.5.8" --no-build-isolation
pip install "vllm==0.4.2"

# Sanity check: make sure torch sees the GPUs before kicking off a long run.
python -c "import torch; assert torch.cuda.is_available(), 'CUDA not available'; print(torch.cuda.get_device_name(0))"

# Work around a bug in pymongo that breaks the cache when the optional
# `[mongo]` extra is not installed.
pip uninstall -y pymongo || true
