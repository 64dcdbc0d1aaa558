#!/usr/bin/env bash
# Two-stage SoftGroup training on ScanNet v2 (backbone pretrain -> full model).
#
#   bash scripts/train_scannet.sh            # 4 GPUs, default work dirs
#   GPUS=8 bash scripts/train_scannet.sh
#
# Stage 1 trains the HAIS-style point-wise backbone, stage 2 loads it and trains the
# top-down refinement. Both stages use torchrun with one process per GPU.
set -e

GPUS=${GPUS:-4}
PORT=${PORT:-29501}
WORK_ROOT=${WORK_ROOT:-./work_dirs}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
export OMP_NUM_THREADS=1
# NCCL: verbose init logs, and stay off InfiniBand on the shared workstation cluster
export NCCL_DEBUG=INFO
export NCCL_IB_DISABLE=1
export NCCL_SOCKET_IFNAME=eno1

if ! command -v nvidia-smi >/dev/null 2>&1; then
    echo "nvidia-smi not found - is the NVIDIA driver installed?" >&2
    exit 1
fi
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

python -c "import softgroup.ops.ops" 2>/dev/null || {
    echo "softgroup ops not built, running: python setup.py build_ext develop"
    python setup.py build_ext develop
}

STAGE1_CFG=configs/softgroup/softgroup_scannet_backbone.yaml
STAGE2_CFG=configs/softgroup/softgroup_scannet.yaml
STAGE1_DIR=${WORK_ROOT}/softgroup_scannet_backbone
STAGE2_DIR=${WORK_ROOT}/softgroup_scannet

echo "[stage 1] backbone on ${GPUS} GPU(s)"
torchrun --nproc_per_node=${GPUS} --master_port=${PORT} \
    tools/train.py --dist ${STAGE1_CFG} --work_dir ${STAGE1_DIR} --skip_validate

BACKBONE_CKPT=${STAGE1_DIR}/latest.pth
if [ ! -f "${BACKBONE_CKPT}" ]; then
    echo "stage 1 did not produce ${BACKBONE_CKPT}" >&2
    exit 1
fi

echo "[stage 2] full SoftGroup on ${GPUS} GPU(s)"
sed "s#^pretrain:.*#pretrain: ${BACKBONE_CKPT}#" ${STAGE2_CFG} > ${WORK_ROOT}/stage2.yaml
torchrun --nproc_per_node=${GPUS} --master_port=$((PORT + 1)) \
    tools/train.py --dist ${WORK_ROOT}/stage2.yaml --work_dir ${STAGE2_DIR}

echo "[eval] single GPU"
CUDA_VISIBLE_DEVICES=0 python tools/test.py ${WORK_ROOT}/stage2.yaml ${STAGE2_DIR}/latest.pth \
    --out ${STAGE2_DIR}/results
