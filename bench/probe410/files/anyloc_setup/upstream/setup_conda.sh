#!/bin/bash
# Setup everything for this repository
#
# Usage: bash ./setup_conda.sh [--dev]
#   --dev   Also install the packages needed for development (docs,
#           linting and the notebooks)
#
# Run this inside an activated conda environment, for example
#   conda create -n anyloc python=3.9
#   conda activate anyloc

readarray -d '' args < <(printf '%s\0' "$@")
dev_tools=false
for arg in "${args[@]}"; do
    case "$arg" in
        --dev) dev_tools=true ;;
        *) echo "Unrecognized option: $arg" ;;
    esac
done

exec_name="conda"
if [ -x "$(command -v mamba)" ]; then
    exec_name="mamba"
    echo "Using mamba (faster)"
fi

echo "---- Installing foundational packages ----"
$exec_name install -y -c conda-forge python=3.9
echo "---- Installing PyTorch ----"
$exec_name install -y -c pytorch -c nvidia pytorch=1.13.1 torchvision=0.14.1 torchaudio=0.13.1 pytorch-cuda=11.7
echo "---- Installing Faiss ----"
$exec_name install -y -c pytorch faiss-gpu==1.7.2
echo "---- Installing other packages ----"
$exec_name install -y -c conda-forge matplotlib joblib scikit-learn
$exec_name install -y -c conda-forge einops tqdm natsort
pip install --upgrade fast_pytorch_kmeans==0.1.6
pip install --upgrade tyro
pip install --upgrade wandb
pip install --upgrade kornia
pip install --upgrade imageio
pip install --upgrade opencv-python
pip install --upgrade utm
pip install --upgrade pytorch-lightning
pip install --upgrade onedrivedownloader
pip install --upgrade distinctipy
pip install --upgrade timm
if [ "$dev_tools" = true ]; then
    echo "---- Installing development tools ----"
    $exec_name install -y -c conda-forge jupyter ipykernel
    pip install --upgrade sphinx sphinx-rtd-theme sphinx-copybutton
    pip install --upgrade black isort
fi

echo "---- Sanity check ----"
python -c "import torch; print('CUDA available:', torch.cuda.is_available())"
python -c "import faiss; print('Faiss GPUs:', faiss.get_num_gpus())"

echo "---- Environment setup completed ----"
