#!/usr/bin/env bash

# Pull the default config.
source config/config.env.example
# Pull config from config.env
[ -f "config/config.env" ] && source config/config.env

# If the user has not provided VENV_PATH, we will assume $(pwd)/.venv
if [ -z "${VENV_PATH}" ]; then
    # what if we have VIRTUAL_ENV? use that instead
    if [ -n "${VIRTUAL_ENV}" ]; then
        export VENV_PATH="${VIRTUAL_ENV}"
    else
        export VENV_PATH="$(pwd)/.venv"
    fi
fi
if [ -z "${DISABLE_LD_OVERRIDE}" ]; then
    export NVJITLINK_PATH="$(find "${VENV_PATH}" -name nvjitlink -type d)/lib"
    # if it's not empty, we will add it to LD_LIBRARY_PATH at the front:
    if [ -n "${NVJITLINK_PATH}" ]; then
        export LD_LIBRARY_PATH="${NVJITLINK_PATH}:${LD_LIBRARY_PATH}"
    fi
fi

export TOKENIZERS_PARALLELISM=false
export PLATFORM
PLATFORM=$(uname -s)
if [[ "$PLATFORM" == "Darwin" ]]; then
    export MIXED_PRECISION="no"
fi

if [ -z "${ACCELERATE_EXTRA_ARGS}" ]; then
    ACCELERATE_EXTRA_ARGS=""
fi

if [ -z "${TRAINING_NUM_PROCESSES}" ]; then
    echo "Set custom env vars permanently in config/config.env:"
    printf "TRAINING_NUM_PROCESSES not set, detecting GPUs with nvidia-smi.\n"
    TRAINING_NUM_PROCESSES=$(nvidia-smi --list-gpus | wc -l)
fi

if [ -z "${TRAINING_NUM_MACHINES}" ]; then
    printf "TRAINING_NUM_MACHINES not set, defaulting to 1.\n"
    TRAINING_NUM_MACHINES=1
fi

if [ -z "${MIXED_PRECISION}" ]; then
    printf "MIXED_PRECISION not set, defaulting to bf16.\n"
    MIXED_PRECISION=bf16
fi

if [ -z "${TRAINING_DYNAMO_BACKEND}" ]; then
    printf "TRAINING_DYNAMO_BACKEND not set, defaulting to no.\n"
    TRAINING_DYNAMO_BACKEND="no"
fi

if [ -z "${CUDA_VISIBLE_DEVICES}" ]; then
    export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((TRAINING_NUM_PROCESSES - 1)))
fi

# Large SDXL/Flux runs fragment the allocator badly without this.
export PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True"
# Multi-GPU runs on PCIe-only consumer cards.
if [ "${TRAINING_NUM_PROCESSES}" -gt 1 ] && [ -n "${DISABLE_NCCL_P2P}" ]; then
    export NCCL_P2P_LEVEL=NVL
fi
# Longer collective timeout while the VAE cache is built on rank 0.
export NCCL_TIMEOUT=${NCCL_TIMEOUT:-3600}

# Sanity check: a CUDA device must be visible before we spend time loading models.
python -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 'No CUDA device is visible to torch.')" || exit 1

if [ -n "${SIMPLETUNER_PROFILE}" ]; then
    echo "Profiling enabled: traces will be written to ${OUTPUT_DIR}/profile"
    export CUDA_LAUNCH_BLOCKING=1
    PROFILE_PREFIX="nsys profile -t cuda,nvtx -o ${OUTPUT_DIR}/profile/simpletuner --force-overwrite true"
else
    PROFILE_PREFIX=""
fi

# Run the training script.
if [ -z "${ACCELERATE_CONFIG_PATH}" ]; then
    ACCELERATE_CONFIG_PATH="${HOME}/.cache/huggingface/accelerate/default_config.yaml"
fi
if [ -f "${ACCELERATE_CONFIG_PATH}" ]; then
    echo "Using Accelerate config file: ${ACCELERATE_CONFIG_PATH}"
    ${PROFILE_PREFIX} accelerate launch --config_file="${ACCELERATE_CONFIG_PATH}" train.py
else
    echo "Accelerate config file not found: ${ACCELERATE_CONFIG_PATH}. Using values from config.env."
    ${PROFILE_PREFIX} accelerate launch ${ACCELERATE_EXTRA_ARGS} --mixed_precision="${MIXED_PRECISION}" --num_processes="${TRAINING_NUM_PROCESSES}" --num_machines="${TRAINING_NUM_MACHINES}" --dynamo_backend="${TRAINING_DYNAMO_BACKEND}" train.py
fi

exit 0
