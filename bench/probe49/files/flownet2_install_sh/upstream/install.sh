#!/bin/bash
# Build and install the custom CUDA layers of flownet2-pytorch, then (optionally)
# run a quick inference on one Sintel pair to check everything links.
#
#   bash install.sh              # build + smoke test
#   bash install.sh --no-test    # build only
set -e

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PYTHON=${PYTHON:-python3}
RUN_TEST=1
if [ "$1" == "--no-test" ]; then
    RUN_TEST=0
fi

export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export PATH=${CUDA_HOME}/bin:${PATH}
export LD_LIBRARY_PATH=${CUDA_HOME}/lib64:${LD_LIBRARY_PATH}

# build for the card in this box unless told otherwise
if [ -z "${TORCH_CUDA_ARCH_LIST}" ]; then
    export TORCH_CUDA_ARCH_LIST=$(${PYTHON} -c "import torch; print('%d.%d' % torch.cuda.get_device_capability())")
fi

echo "== toolchain"
nvcc --version | tail -n1
${PYTHON} -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"

build_package () {
    local pkg=$1
    echo "== building ${pkg}"
    cd "${ROOT}/networks/${pkg}"
    rm -rf *_cuda.egg-info build dist __pycache__
    ${PYTHON} setup.py install --user
    cd "${ROOT}"
}

build_package correlation_package
build_package resample2d_package
build_package channelnorm_package

echo "== import check"
${PYTHON} -c "import correlation_cuda, resample2d_cuda, channelnorm_cuda; print('custom layers OK')"

if [ "${RUN_TEST}" == "0" ]; then
    exit 0
fi

# one-pair smoke test on the first GPU
SINTEL=${SINTEL:-${ROOT}/MPI-Sintel/flow/training}
CKPT=${CKPT:-${ROOT}/work/FlowNet2_checkpoint.pth.tar}
if [ ! -f "${CKPT}" ]; then
    echo "no checkpoint at ${CKPT}; skipping smoke test"
    exit 0
fi

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader

CUDA_VISIBLE_DEVICES=0 ${PYTHON} main.py --inference --model FlowNet2 --save_flow \
    --number_gpus 1 \
    --inference_dataset MpiSintelClean \
    --inference_dataset_root "${SINTEL}" \
    --inference_n_batches 1 \
    --resume "${CKPT}" \
    --save "${ROOT}/work/smoke"

echo "== done: flows written to ${ROOT}/work/smoke/inference"
