#!/usr/bin/env bash
# Train the four streams (joint / bone / joint-motion / bone-motion) of the GCN ensemble
# on NTU RGB+D 120 (X-Sub, X-Set) and WLASL-2000 / AUTSL skeletons, then ensemble.
#
#   bash scripts/train_ntu120.sh ntu120/xsub ctrgcn       # picks the 4 least used GPUs
#   DEVICES="0 1" bash scripts/train_ntu120.sh wlasl2000 msg3d
set -euo pipefail

BENCH=${1:-ntu120/xsub}
ARCH=${2:-ctrgcn}
NUM_GPUS=${NUM_GPUS:-4}
WORK_ROOT=./work_dir/${BENCH}/${ARCH}

pick_free_gpus() {
    # lowest memory.used first
    nvidia-smi --query-gpu=index,memory.used --format=csv,noheader,nounits \
        | sort -t',' -k2 -n | head -n "$1" | cut -d',' -f1 | tr '\n' ' '
}

if [ -z "${DEVICES:-}" ]; then
    DEVICES=$(pick_free_gpus ${NUM_GPUS})
fi
echo "[$(date)] ${ARCH} on ${BENCH}, devices: ${DEVICES}"

export OMP_NUM_THREADS=2
# a few of the feeders use numba for the motion streams
export NUMBA_CACHE_DIR=/tmp/numba_cache
export CUDA_LAUNCH_BLOCKING=${DEBUG:-0}

for STREAM in joint bone joint_motion bone_motion; do
    CFG=./config/${BENCH}/train_${STREAM}.yaml
    [ -f "${CFG}" ] || { echo "missing ${CFG}"; exit 1; }
    python main.py \
        --config ${CFG} \
        --work-dir ${WORK_ROOT}/${STREAM} \
        --device ${DEVICES} \
        --half True --amp-opt-level 1 \
        --assume-yes
done

# test every stream with its best weights (single card is enough)
FIRST_DEV=$(echo ${DEVICES} | cut -d' ' -f1)
for STREAM in joint bone joint_motion bone_motion; do
    BEST=$(ls -t ${WORK_ROOT}/${STREAM}/weights/*.pt | head -n 1)
    python main.py \
        --config ./config/${BENCH}/test_${STREAM}.yaml \
        --work-dir ${WORK_ROOT}/${STREAM}_test \
        --weights ${BEST} \
        --device ${FIRST_DEV} \
        --save-score True \
        --assume-yes
done

python ensemble.py --dataset ${BENCH} \
    --joint-dir ${WORK_ROOT}/joint_test \
    --bone-dir ${WORK_ROOT}/bone_test \
    --joint-motion-dir ${WORK_ROOT}/joint_motion_test \
    --bone-motion-dir ${WORK_ROOT}/bone_motion_test
