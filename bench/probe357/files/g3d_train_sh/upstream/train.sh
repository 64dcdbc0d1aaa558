#!/usr/bin/env bash
# Gait3D-Benchmark training / testing launcher.
# Usage: bash train.sh [smplgait|baseline|gaitset|gaitpart|gln|gaitgl] [train|test]

MODEL=${1:-smplgait}
PHASE=${2:-train}
NGPUS=4

export OMP_NUM_THREADS=4
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=1
export CUDA_VISIBLE_DEVICES=0,1,2,3

case ${MODEL} in
  smplgait) CFG=./config/smplgait_64pixel.yaml ;;
  baseline) CFG=./config/baseline_64pixel.yaml ;;
  gaitset)  CFG=./config/gaitset_64pixel.yaml ;;
  gaitpart) CFG=./config/gaitpart_64pixel.yaml ;;
  gln)      CFG=./config/gln_phase1_64pixel.yaml ;;
  gaitgl)   CFG=./config/gaitgl_64pixel.yaml ;;
  *) echo "unknown model ${MODEL}"; exit 1 ;;
esac

echo "Running ${MODEL} (${PHASE}) on ${NGPUS} GPU(s): ${CUDA_VISIBLE_DEVICES}"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

python -m torch.distributed.launch --nproc_per_node=${NGPUS} --master_port 29501 \
    lib/main.py --cfgs ${CFG} --phase ${PHASE} --log_to_file
