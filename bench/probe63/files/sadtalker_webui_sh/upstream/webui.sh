#!/usr/bin/env bash
#################################################
# SadTalker one-click launcher (Linux / macOS)
#################################################

# If run from macOS, load defaults from webui-macos-env.sh
if [[ "$OSTYPE" == "darwin"* ]]; then
    export TORCH_COMMAND="pip install torch==1.12.1 torchvision==0.13.1"
fi

# python3 executable
if [[ -z "${python_cmd}" ]]
then
    python_cmd="python3"
fi

# git executable
if [[ -z "${GIT}" ]]
then
    export GIT="git"
fi

# python3 venv without trailing slash (defaults to ${install_dir}/${clone_dir}/venv)
if [[ -z "${venv_dir}" ]]
then
    venv_dir="venv"
fi

if [[ -z "${LAUNCH_SCRIPT}" ]]
then
    LAUNCH_SCRIPT="launcher.py"
fi

# pick the GPU to run on; override with GPU_ID=1 ./webui.sh
if [[ -z "${GPU_ID}" ]]
then
    GPU_ID=0
fi
export CUDA_VISIBLE_DEVICES="${GPU_ID}"

# torch wheel for the default (CUDA 11.3) install
if [[ -z "${TORCH_COMMAND}" ]]
then
    export TORCH_COMMAND="pip install torch==1.12.1+cu113 torchvision==0.13.1+cu113 torchaudio==0.12.1 --extra-index-url https://download.pytorch.org/whl/cu113"
fi

# Disable sentry logging
export ERROR_REPORTING=FALSE

# Do not reinstall existing pip packages on Debian/Ubuntu
export PIP_IGNORE_INSTALLED=0

# Pretty print
delimiter="################################################################"

printf "\n%s\n" "${delimiter}"
printf "\e[1m\e[32mInstall script for SadTalker + Web UI\n"
printf "\e[1m\e[34mTested on Debian 11 (Bullseye)\e[0m"
printf "\n%s\n" "${delimiter}"

# Do not run as root
if [[ $(id -u) -eq 0 ]]
then
    printf "\n%s\n" "${delimiter}"
    printf "\e[1m\e[31mERROR: This script must not be launched as root, aborting...\e[0m"
    printf "\n%s\n" "${delimiter}"
    exit 1
else
    printf "\n%s\n" "${delimiter}"
    printf "Running on \e[1m\e[32m%s\e[0m user" "$(whoami)"
    printf "\n%s\n" "${delimiter}"
fi

# check that an NVIDIA driver is present, otherwise warn that inference will run on the CPU
if command -v nvidia-smi >/dev/null 2>&1
then
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
else
    printf "\e[1m\e[33mWARNING: nvidia-smi not found, SadTalker will fall back to the CPU (very slow)\e[0m\n"
fi

for preq in "${GIT}" "${python_cmd}"
do
    if ! hash "${preq}" &>/dev/null
    then
        printf "\n%s\n" "${delimiter}"
        printf "\e[1m\e[31mERROR: %s is not installed, aborting...\e[0m" "${preq}"
        printf "\n%s\n" "${delimiter}"
        exit 1
    fi
done

if ! "${python_cmd}" -c "import venv" &>/dev/null
then
    printf "\n%s\n" "${delimiter}"
    printf "\e[1m\e[31mERROR: python3-venv is not installed, aborting...\e[0m"
    printf "\n%s\n" "${delimiter}"
    exit 1
fi

printf "\n%s\n" "${delimiter}"
printf "Create and activate python venv"
printf "\n%s\n" "${delimiter}"
if [[ ! -d "${venv_dir}" ]]
then
    "${python_cmd}" -m venv "${venv_dir}"
    first_launch=1
fi
# shellcheck source=/dev/null
if [[ -f "${venv_dir}"/bin/activate ]]
then
    source "${venv_dir}"/bin/activate
else
    printf "\n%s\n" "${delimiter}"
    printf "\e[1m\e[31mERROR: Cannot activate python venv, aborting...\e[0m"
    printf "\n%s\n" "${delimiter}"
    exit 1
fi

if [[ -n "${first_launch}" ]]
then
    ${TORCH_COMMAND}
    pip install -r requirements.txt
fi

# sanity check: torch must see the GPU
"${python_cmd}" -c "import torch; assert torch.cuda.is_available(), 'Torch is not able to use GPU'" || {
    printf "\e[1m\e[31mERROR: torch cannot use the GPU; set COMMANDLINE_ARGS=--cpu to run anyway\e[0m\n"
    exit 1
}

printf "\n%s\n" "${delimiter}"
printf "Launching launcher.py..."
printf "\n%s\n" "${delimiter}"
exec "${python_cmd}" "${LAUNCH_SCRIPT}" "$@"
