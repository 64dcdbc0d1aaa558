#!/bin/bash
# Setup everything for this repository (AnyLoc)
#
# Usage:
#   conda create -n anyloc python=3.9
#   conda activate anyloc
#   bash ./setup_conda.sh [--dev]
#
# Tested on Ubuntu 20.04 with an NVIDIA driver >= 525 (CUDA 11.8).
#
readonly ARGS="$@"  # Reset using https://stackoverflow.com/a/4827707
readonly PROGNAME=$(basename $0)
readonly PROGPATH=$(realpath $(dirname $0))

# Internal variables
env_name="anyloc"   # Name of the environment
exec_name="conda"   # Executable
dry_run="false"     # 'true' or 'false'
ask_prompts="true"  # 'true' or 'false'
dev_tools="false"   # 'true' or 'false'
warn_exit="true"    # 'true' or 'false'

# Output formatting
debug_msg_fmt="\e[2;90m"
info_msg_fmt="\e[1;37m"
warn_msg_fmt="\e[1;35m"
fatal_msg_fmt="\e[2;31m"
command_msg_fmt="\e[0;36m"

function echo_debug {
    echo -ne $debug_msg_fmt
    echo $@
    echo -ne "\e[0m"
}
function echo_info {
    echo -ne $info_msg_fmt
    echo $@
    echo -ne "\e[0m"
}
function echo_warn {
    echo -ne $warn_msg_fmt
    echo $@
    echo -ne "\e[0m"
}
function echo_fatal {
    echo -ne $fatal_msg_fmt
    echo $@
    echo -ne "\e[0m"
}
function echo_command {
    echo -ne $command_msg_fmt
    echo $@
    echo -ne "\e[0m"
}

# Installing a conda package
function conda_install {
    echo_command $exec_name install -y $@
    if [ "$dry_run" == "true" ]; then
        echo_debug "Dry run, not executing"
    else
        $exec_name install -y $@
    fi
}
# Installing a pip package
function pip_install {
    echo_command pip install --upgrade $@
    if [ "$dry_run" == "true" ]; then
        echo_debug "Dry run, not executing"
    else
        pip install --upgrade $@
    fi
}

for arg in $ARGS; do
    case $arg in
        "--dev") dev_tools="true" ;;
        "--dry-run") dry_run="true" ;;
        "--no-prompt") ask_prompts="false" ;;
        *) echo_warn "Unknown argument: $arg" ;;
    esac
done

# Ensure the right environment is active
if [ "$CONDA_DEFAULT_ENV" != "$env_name" ]; then
    echo_fatal "Wrong environment activated: '$CONDA_DEFAULT_ENV' (expected '$env_name')"
    if [ "$warn_exit" == "true" ]; then
        exit 1
    fi
fi

# Check that a GPU is visible before installing the CUDA stack
if ! command -v nvidia-smi &> /dev/null; then
    echo_fatal "nvidia-smi not found; AnyLoc needs an NVIDIA GPU"
    exit 1
fi
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader

start_time=$(date)
start_time_secs=$SECONDS
echo_debug "---- Start time: $start_time ----"

# Core packages
echo_info "------ Installing core packages ------"
conda_install -c pytorch -c nvidia pytorch==2.0.1 torchvision==0.15.2 pytorch-cuda=11.8
conda_install -c conda-forge matplotlib
conda_install -c conda-forge tqdm
conda_install -c conda-forge einops
conda_install -c pytorch faiss-gpu==1.7.2
conda_install -c conda-forge scikit-learn
conda_install -c conda-forge natsort
conda_install -c conda-forge pillow
conda_install -c conda-forge joblib
pip_install fast_pytorch_kmeans
pip_install tyro
pip_install opencv-python
pip_install wandb
pip_install onedrivedownloader
pip_install distinctipy
pip_install timm==0.6.13
# xFormers gives ~1.3x faster DINOv2 ViT-G inference (memory efficient attention)
pip_install xformers==0.0.21 --index-url https://download.pytorch.org/whl/cu118

if [ "$dev_tools" == "true" ]; then
    echo_info "------ Installing documentation and dev tools ------"
    conda_install -c conda-forge jupyterlab
    conda_install -c conda-forge ipywidgets
    pip_install sphinx sphinx-rtd-theme sphinx-copybutton
    pip_install sphinx-reload
    pip_install black isort
fi

# Sanity check: the GPU build must be importable
python -c "import torch; assert torch.cuda.is_available(), 'CUDA not available'; print(torch.__version__, torch.version.cuda)"
python -c "import faiss; print('faiss GPUs:', faiss.get_num_gpus())"

# Installation ended
end_time=$(date)
end_time_secs=$SECONDS
echo_debug "---- End time: $end_time ----"
# dur=$(echo "$end_time_secs - $start_time_secs" | bc)
dur=$(( $end_time_secs - $start_time_secs ))
_d=$(( $dur/3600 ))
_h=$(( ($dur/60)%60 ))
_s=$(( $dur%60 ))
echo_info "---- Environment setup took (h:m:s): $_d:$_h:$_s ----"
