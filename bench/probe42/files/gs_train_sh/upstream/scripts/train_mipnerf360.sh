#!/usr/bin/env bash
#
# Train, render and evaluate every Mip-NeRF 360 scene with 3D Gaussian Splatting.
# One scene runs per GPU; when there are more scenes than GPUs the next scene waits
# until a card has been released.
#
#   DATA_ROOT=/data/360_v2 OUT_ROOT=output/m360 bash scripts/train_mipnerf360.sh
#
# Set SKIP_BUILD=1 when the rasterizer and simple-knn are already installed.
#
set -euo pipefail

DATA_ROOT=${DATA_ROOT:-/data/360_v2}
OUT_ROOT=${OUT_ROOT:-output/m360}
ITERS=${ITERS:-30000}
SKIP_BUILD=${SKIP_BUILD:-0}

OUTDOOR_SCENES=(bicycle flowers garden stump treehill)
INDOOR_SCENES=(room counter kitchen bonsai)

# ----------------------------------------------------------------------------
# toolchain
# ----------------------------------------------------------------------------
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export PATH=${CUDA_HOME}/bin:${PATH}
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-"7.5;8.0;8.6"}
# keep the allocator from fragmenting on the 4K garden / bicycle captures
export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512
# set DEBUG=1 to get synchronous kernel launches and readable stack traces
export CUDA_LAUNCH_BLOCKING=${DEBUG:-0}

if [[ "${SKIP_BUILD}" != "1" ]]; then
    echo "[build] compiling CUDA submodules with $(nvcc --version | tail -n1)"
    pip install --no-build-isolation submodules/diff-gaussian-rasterization
    pip install --no-build-isolation submodules/simple-knn
fi

# ----------------------------------------------------------------------------
# devices
# ----------------------------------------------------------------------------
NUM_GPUS=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
if [[ "${NUM_GPUS}" -lt 1 ]]; then
    echo "no GPU found" >&2
    exit 1
fi
echo "[info] ${NUM_GPUS} GPU(s) available"

# wait until the given GPU has less than 2 GB in use
wait_for_gpu() {
    local gpu=$1
    while true; do
        used=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i "${gpu}")
        if [[ "${used}" -lt 2000 ]]; then
            return 0
        fi
        sleep 30
    done
}

run_scene() {
    local gpu=$1
    local scene=$2
    local images=$3
    local out="${OUT_ROOT}/${scene}"

    mkdir -p "${out}"
    echo "[train] ${scene} on GPU ${gpu}"
    CUDA_VISIBLE_DEVICES=${gpu} python train.py \
        -s "${DATA_ROOT}/${scene}" -i "${images}" -m "${out}" \
        --iterations "${ITERS}" --eval --quiet --disable_viewer \
        --test_iterations -1 > "${out}/train.log" 2>&1

    echo "[render] ${scene} on GPU ${gpu}"
    CUDA_VISIBLE_DEVICES="${gpu}" python render.py -m "${out}" --skip_train --quiet \
        > "${out}/render.log" 2>&1
}

# ----------------------------------------------------------------------------
# main loop: round-robin scenes over the visible GPUs
# ----------------------------------------------------------------------------
i=0
for scene in "${OUTDOOR_SCENES[@]}" "${INDOOR_SCENES[@]}"; do
    gpu=$(( i % NUM_GPUS ))
    if [[ " ${OUTDOOR_SCENES[*]} " == *" ${scene} "* ]]; then
        images=images_4
    else
        images=images_2
    fi
    wait_for_gpu "${gpu}"
    run_scene "${gpu}" "${scene}" "${images}" &
    sleep 20   # let the job allocate before the next scene checks the same GPU
    i=$(( i + 1 ))
done
wait

# metrics for all scenes at once (CPU is fine for LPIPS on a few hundred images,
# but a GPU is much faster)
python metrics.py -m "${OUT_ROOT}"/*
echo "[done] results in ${OUT_ROOT}"
