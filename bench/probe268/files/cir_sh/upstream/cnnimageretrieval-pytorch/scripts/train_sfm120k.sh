#!/usr/bin/env bash
# Reproduce the TPAMI'18 fine-tuning runs on retrieval-SfM-120k.
#
# Usage:  bash scripts/train_sfm120k.sh <gpu_id> [arch] [pool]
#   e.g.  bash scripts/train_sfm120k.sh 2 resnet101 gem
#
# One run needs a single 12GB GPU (batch of 5 tuples, 1024px); the 362px variant fits on 8GB.
set -e

GPU=${1:-0}
ARCH=${2:-resnet101}
POOL=${3:-gem}

EXPORT_DIR=${EXPORT_DIR:-./experiments}
DATA_ROOT=${CIRTORCH_DATA_ROOT:-$(pwd)/data}
export CIRTORCH_DATA_ROOT=${DATA_ROOT}

mkdir -p "${EXPORT_DIR}/logs"
LOG="${EXPORT_DIR}/logs/${ARCH}_${POOL}_$(date +%Y%m%d_%H%M%S).log"

echo "==> host: $(hostname)"
nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv | tee -a "${LOG}"
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)" | tee -a "${LOG}"

# the loader uses 8 workers per GPU; more threads only slow down PIL decoding
export OMP_NUM_THREADS=4
# set to 1 when chasing device-side asserts (slows training down a lot)
export CUDA_LAUNCH_BLOCKING=${CUDA_LAUNCH_BLOCKING:-0}

python3 -m cirtorch.examples.train "${EXPORT_DIR}" \
    --gpu-id "${GPU}" \
    --training-dataset 'retrieval-SfM-120k' \
    --test-datasets 'roxford5k,rparis6k' \
    --test-whiten 'retrieval-SfM-30k' \
    --arch "${ARCH}" --pool "${POOL}" --whitening \
    --loss 'contrastive' --loss-margin 0.85 \
    --optimizer 'adam' --lr 5e-7 --weight-decay 1e-6 \
    --neg-num 5 --query-size 2000 --pool-size 20000 \
    --batch-size 5 --image-size 362 \
    --epochs 100 --workers 8 2>&1 | tee -a "${LOG}"

# evaluate the best checkpoint with multi-scale descriptors
BEST=$(ls -d "${EXPORT_DIR}"/retrieval-SfM-120k_${ARCH}_${POOL}_* | tail -n 1)/model_best.pth.tar
python3 -m cirtorch.examples.test \
    --gpu-id "${GPU}" \
    --network-path "${BEST}" \
    --datasets 'roxford5k,rparis6k' \
    --whitening 'retrieval-SfM-120k' \
    --multiscale '[1, 1/2**(1/2), 1/2**(1/4)]' 2>&1 | tee -a "${LOG}"
