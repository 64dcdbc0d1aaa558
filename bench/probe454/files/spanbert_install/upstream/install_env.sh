#!/usr/bin/env bash
# Environment used for the SpanBERT fine-tuning experiments (Python 3.7, CUDA 10.1).
set -e

conda create -y -n spanbert python=3.7
source activate spanbert

pip install torch==1.4.0+cu101 -f https://download.pytorch.org/whl/torch_stable.html
pip install boto3 requests tqdm regex sentencepiece

# apex provides FusedAdam / FP16_Optimizer / FusedLayerNorm used by --fp16
git clone https://github.com/NVIDIA/apex
cd apex
git checkout 880ab925bce9f817a93988b021e12db5f67f7787
pip install -v --no-cache-dir --global-option="--cpp_ext" --global-option="--cuda_ext" ./
cd ..

python -c "import torch; print(torch.__version__, torch.cuda.is_available())"
