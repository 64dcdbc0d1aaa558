#!/bin/bash
# GPT-SoVITS one-click installer for Linux / WSL (conda env must already be active)
#
#   bash install.sh --device CU126 --source HF --download-uvr5
#   bash install.sh --device CPU   --source ModelScope

set -e

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$SCRIPT_DIR" || exit 1

RESET="\033[0m"
BOLD="\033[1m"
ERROR="\033[1;31m[ERROR]: $RESET"
WARNING="\033[1;33m[WARNING]: $RESET"
INFO="\033[1;32m[INFO]: $RESET"

print_help() {
    echo "Usage: bash install.sh [OPTIONS]"
    echo ""
    echo "Options:"
    echo "  --device   CU126|CU128|ROCM|MPS|CPU    Specify the Device (REQUIRED)"
    echo "  --source   HF|HF-Mirror|ModelScope     Specify the model source (REQUIRED)"
    echo "  --download-uvr5                        Enable downloading the UVR5 model"
    echo "  -h, --help                             Show this help message and exit"
}

USE_CUDA=false
USE_ROCM=false
USE_CPU=false
WORKFLOW=${WORKFLOW:-"false"}
DOWNLOAD_UVR5=false

while [[ $# -gt 0 ]]; do
    case "$1" in
    --source)
        case "$2" in
        HF) USE_HF=true ;;
        HF-Mirror) USE_HF_MIRROR=true ;;
        ModelScope) USE_MODELSCOPE=true ;;
        *) echo -e "${ERROR}Error: Invalid Download Source: $2"; exit 1 ;;
        esac
        shift 2
        ;;
    --device)
        case "$2" in
        CU126)
            CUDA=126
            USE_CUDA=true
            ;;
        CU128)
            CUDA=128
            USE_CUDA=true
            ;;
        ROCM)
            USE_ROCM=true
            ;;
        MPS|CPU)
            USE_CPU=true
            ;;
        *)
            echo -e "${ERROR}Error: Invalid Device: $2"
            print_help
            exit 1
            ;;
        esac
        shift 2
        ;;
    --download-uvr5)
        DOWNLOAD_UVR5=true
        shift
        ;;
    -h | --help)
        print_help
        exit 0
        ;;
    *)
        echo -e "${ERROR}Unknown Argument: $1"
        print_help
        exit 1
        ;;
    esac
done

if ! $USE_CUDA && ! $USE_ROCM && ! $USE_CPU; then
    echo -e "${ERROR}Error: Device is REQUIRED"
    print_help
    exit 1
fi

echo -e "${INFO}Installing FFmpeg & CMake..."
conda install ffmpeg cmake make -q -y

echo -e "${INFO}Installing unzip..."
conda install unzip -y --quiet

if [ "$USE_CUDA" = true ] && [ "$WORKFLOW" = false ]; then
    echo -e "${INFO}Checking For Nvidia Driver Installation..."
    if command -v nvidia-smi &>/dev/null; then
        echo -e "${INFO}Nvidia Driver Founded"
    else
        echo -e "${WARNING}Nvidia Driver Not Found, Fallback to CPU"
        USE_CUDA=false
        USE_CPU=true
    fi
    # the CUDA compiler is needed to build the fused kernels used by the v3/v4 vocoder
    conda install -c nvidia cuda-nvcc=12.4 cuda-toolkit=12.4 -y --quiet
fi

echo -e "${INFO}Installing PyTorch..."
if [ "$USE_CUDA" = true ]; then
    if [ "$CUDA" = 128 ]; then
        echo -e "${INFO}Installing PyTorch For CUDA 12.8..."
        pip install torch torchaudio --index-url "https://download.pytorch.org/whl/cu128"
    elif [ "$CUDA" = 126 ]; then
        echo -e "${INFO}Installing PyTorch For CUDA 12.6..."
        pip install torch==2.6 torchaudio --index-url "https://download.pytorch.org/whl/cu126"
    fi
elif [ "$USE_ROCM" = true ]; then
    echo -e "${INFO}Installing PyTorch For ROCm 6.2..."
    pip install torch==2.6 torchaudio --index-url "https://download.pytorch.org/whl/rocm6.2"
elif [ "$USE_CPU" = true ]; then
    echo -e "${INFO}Installing PyTorch For CPU..."
    pip install torch==2.6 torchaudio --index-url "https://download.pytorch.org/whl/cpu"
fi
echo -e "${INFO}PyTorch Installed"

echo -e "${INFO}Installing Python Dependencies From requirements.txt..."
hash -r
pip install -r extra-req.txt --no-deps --quiet
pip install -r requirements.txt --quiet
echo -e "${INFO}Python Dependencies Installed"

if [ "$USE_CUDA" = true ]; then
    echo -e "${INFO}Installing CUDA-only extras (onnxruntime-gpu for UVR5, flash-attn for the v3 DiT)..."
    pip install onnxruntime-gpu --quiet
    pip install flash-attn --no-build-isolation --quiet
fi

PY_PREFIX=$(python -c "import sys; print(sys.prefix)")
PYOPENJTALK_PREFIX=$(python -c "import os, pyopenjtalk; print(os.path.dirname(pyopenjtalk.__file__))")

echo -e "${INFO}Downloading NLTK Data..."
python -c "import nltk; nltk.download(['averaged_perceptron_tagger','averaged_perceptron_tagger_eng','cmudict'], quiet=True)"

echo -e "${INFO}Downloading Open JTalk Dict..."
python -c "import pyopenjtalk; pyopenjtalk.unset_user_dict()" || true

echo -e "${INFO}Checking the installation..."
python -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'available', torch.cuda.is_available())"

echo -e "${INFO}Installation Completed"
