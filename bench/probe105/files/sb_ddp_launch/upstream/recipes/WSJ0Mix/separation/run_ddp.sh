#!/usr/bin/env bash
# Multi-GPU (single node) SepFormer training on WHAMR! with dynamic mixing.
#
#   bash run_ddp.sh hparams/sepformer-whamr-dm.yaml /data/whamr /data/wsj0-processed/si_tr_s
#
# Environment knobs:
#   NGPUS        number of GPUs to use (default: all visible)
#   MASTER_PORT  rendezvous port (default: 29512)
set -eo pipefail

HPARAMS=${1:-hparams/sepformer-whamr-dm.yaml}
DATA=${2:?"path to whamr"}
DM_BASE=${3:?"path to processed wsj0 si_tr_s"}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
NGPUS=${NGPUS:-$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | wc -l)}
MASTER_PORT=${MASTER_PORT:-29512}

# NCCL settings that made the A100 box stable (PCIe switch, no NVLink between pairs)
export NCCL_DEBUG=WARN
export NCCL_P2P_DISABLE=1
export NCCL_IB_DISABLE=1
export OMP_NUM_THREADS=4
export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512

echo "Launching $NGPUS processes on GPUs $CUDA_VISIBLE_DEVICES (port $MASTER_PORT)"
python -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.device_count())"

python -m torch.distributed.launch \
    --nproc_per_node="$NGPUS" \
    --master_port="$MASTER_PORT" \
    train.py "$HPARAMS" \
    --data_folder "$DATA" \
    --base_folder_dm "$DM_BASE" \
    --distributed_launch \
    --distributed_backend=nccl \
    --auto_mix_prec \
    2>&1 | tee "logs/train_$(date +%Y%m%d_%H%M%S).log"
