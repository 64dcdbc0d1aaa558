#!/usr/bin/env bash
# Set up a fresh environment for TinyLlama pretraining.
#
# Tested on A100-40G / A100-80G nodes with CUDA 11.8 drivers. The fused kernels
# (rotary, layer_norm, xentropy) take ~20 minutes to compile; set MAX_JOBS to
# something smaller if the build runs out of host memory.
set -euo pipefail

ENV_NAME=${ENV_NAME:-tinyllama}
MAX_JOBS=${MAX_JOBS:-8}
export MAX_JOBS

source "$(conda info --base)/etc/profile.d/conda.sh"
if ! conda env list | grep -q "^${ENV_NAME} "; then
    conda create -y -n "${ENV_NAME}" python=3.10
fi
conda activate "${ENV_NAME}"

python -m pip install --upgrade pip wheel packaging ninja

# PyTorch nightly (2.1 dev) built against CUDA 11.8
pip install --index-url https://download.pytorch.org/whl/nightly/cu118 --pre 'torch>=2.1.0dev'

# xformers provides the fused SwiGLU used by lit_gpt.model.LLaMAMLP
pip uninstall -y ninja && pip install ninja -U
pip install -v -U git+https://github.com/facebookresearch/xformers.git@main#egg=xformers

# flash-attention 2 plus its standalone CUDA extensions
WORKDIR=$(mktemp -d)
git clone --depth 1 https://github.com/Dao-AILab/flash-attention "${WORKDIR}/flash-attention"
pushd "${WORKDIR}/flash-attention"
python setup.py install
cd csrc/rotary && pip install .
cd ../layer_norm && pip install .
cd ../xentropy && pip install .
popd
rm -rf "${WORKDIR}"

# everything else
pip install -r requirements.txt tokenizers sentencepiece
python -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())"
