#!/usr/bin/env bash
# AutoFormer supernet training, one node with 8 GPUs.
#   bash scripts/train_supernet.sh tiny   /path/to/imagenet /path/to/output
#   bash scripts/train_supernet.sh small  /path/to/imagenet /path/to/output
set -x

SIZE=${1:-tiny}
DATA=${2:-./data/imagenet}
OUT=${3:-./output/supernet-${SIZE}}

case ${SIZE} in
  tiny)  CFG=./experiments/supernet/supernet-T.yaml; BS=128 ;;
  small) CFG=./experiments/supernet/supernet-S.yaml; BS=128 ;;
  base)  CFG=./experiments/supernet/supernet-B.yaml; BS=64  ;;
  *) echo "unknown supernet size ${SIZE}"; exit 1 ;;
esac

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
NGPUS=$(nvidia-smi -L | wc -l)
export NCCL_DEBUG=INFO
export OMP_NUM_THREADS=1
MASTER_PORT=${MASTER_PORT:-29500}

python -m torch.distributed.launch --nproc_per_node=${NGPUS} --master_port=${MASTER_PORT} --use_env \
    supernet_train.py --data-path ${DATA} --gp --change_qk --relative_position \
    --mode super --dist-eval --cfg ${CFG} --epochs 500 --warmup-epochs 20 \
    --output ${OUT} --batch-size ${BS}
