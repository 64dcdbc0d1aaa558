#!/bin/bash
# Environment set-up for SSL_Anti-spoofing (wav2vec 2.0 XLS-R + AASIST back-end).
#
#   bash install.sh            # creates the "SSL_Spoofing" conda env
#
# Needs conda and a CUDA 11.x capable NVIDIA driver on the machine.

set -e

ENV_NAME=SSL_Spoofing
CONDA_BASE=$(conda info --base)
source "${CONDA_BASE}/etc/profile.d/conda.sh"

conda create -y -n ${ENV_NAME} python=3.8
conda activate ${ENV_NAME}

# pip 20.2 is needed for the fairseq editable install below
pip install pip==20.2

# PyTorch 1.8.1 built against CUDA 11.1
pip install torch==1.8.1+cu111 torchvision==0.9.1+cu111 torchaudio==0.8.1 -f https://download.pytorch.org/whl/torch_stable.html

# fairseq (pinned commit) for the XLS-R front-end
if [ ! -d fairseq-a54021305d6b3c4c5959ac9395135f63202db8f1 ]; then
    wget https://github.com/facebookresearch/fairseq/archive/a54021305d6b3c4c5959ac9395135f63202db8f1.zip
    unzip -q a54021305d6b3c4c5959ac9395135f63202db8f1.zip
    rm a54021305d6b3c4c5959ac9395135f63202db8f1.zip
fi
cd fairseq-a54021305d6b3c4c5959ac9395135f63202db8f1
pip install --editable ./
cd ..

pip install -r requirements.txt

# pre-trained XLS-R 300M
if [ ! -f xlsr2_300m.pt ]; then
    wget https://dl.fbaipublicfiles.com/fairseq/wav2vec/xlsr2_300m.pt
fi

# sanity check: torch sees the GPU
python -c "import torch; assert torch.cuda.is_available(), 'no GPU'; print(torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0))"
echo "done. conda activate ${ENV_NAME}"
