#!/usr/bin/env bash
# Copyright (c) Guangsheng Bao.
#
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.

# setup the environment
echo `date`, Setup the environment ...
set -e  # exit if error

conda create -y -n fast-detect-gpt python=3.8
source "$(conda info --base)/etc/profile.d/conda.sh"
conda activate fast-detect-gpt

pip install torch==1.13.1+cu117 --extra-index-url https://download.pytorch.org/whl/cu117
pip install -r requirements.txt

# sanity check: the experiments assume at least one visible GPU
python -c "import torch; print('torch', torch.__version__, 'cuda available:', torch.cuda.is_available())"

# download the reference statistics used by local_infer.py
mkdir -p local_infer_ref
echo `date`, Setup finished.
