#!/bin/bash -l
# Reproduce LoFTR-DS (dual-softmax) outdoor training on MegaDepth.
#
#   bash scripts/reproduce_train/outdoor_ds.sh              # all GPUs of this node
#   GPUS=0,1 bash scripts/reproduce_train/outdoor_ds.sh     # a subset
#   N_NODES=2 NODE_RANK=1 MASTER_ADDR=10.0.0.1 bash ...      # multi-node
#
# 64 GB of GPU memory in total is enough for bs=1 per GPU at 640x640.
set -euo pipefail

SCRIPTPATH=$(dirname $(readlink -f "$0"))
PROJECT_DIR="${SCRIPTPATH}/../../"

# conda activate loftr
export PYTHONPATH=$PROJECT_DIR:${PYTHONPATH:-}
cd $PROJECT_DIR

# ----------------------------------------------------------------------------- devices
export CUDA_VISIBLE_DEVICES=${GPUS:-$(seq -s, 0 $(( $(nvidia-smi -L | wc -l) - 1 )))}
n_gpus_per_node=$(echo ${CUDA_VISIBLE_DEVICES} | tr ',' '\n' | wc -l)

# bf16/tf32 kernels need Ampere or newer; older cards fall back to fp32 (slow but fine)
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n1)
if [[ "${cc%%.*}" -lt 8 ]]; then
    echo "[outdoor_ds] compute capability ${cc} < 8.0: expect ~2x longer epochs" >&2
fi

# ----------------------------------------------------------------------------- comms
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_IB_DISABLE=${NCCL_IB_DISABLE:-1}     # our cluster has no working IB between racks
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export OMP_NUM_THREADS=4

# ----------------------------------------------------------------------------- experiment
data_cfg_path="configs/data/megadepth_trainval_640.py"
main_cfg_path="configs/loftr/outdoor/loftr_ds_dense.py"

n_nodes=${N_NODES:-1}
torch_num_workers=4
batch_size=1
pin_memory=true
exp_name="outdoor-ds-640-bs=$(($n_gpus_per_node * $n_nodes * $batch_size))"

echo "[outdoor_ds] ${exp_name}: ${n_gpus_per_node} GPU(s) x ${n_nodes} node(s)"
nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv

python -u ./train.py \
    ${data_cfg_path} \
    ${main_cfg_path} \
    --exp_name=${exp_name} \
    --gpus=${n_gpus_per_node} --num_nodes=${n_nodes} --accelerator="ddp" \
    --batch_size=${batch_size} --num_workers=${torch_num_workers} --pin_memory=${pin_memory} \
    --check_val_every_n_epoch=1 \
    --log_every_n_steps=1 \
    --flush_logs_every_n_steps=1 \
    --limit_val_batches=1. \
    --num_sanity_val_steps=10 \
    --benchmark=True \
    --max_epochs=30

# ----------------------------------------------------------------------------- eval
ckpt=$(ls -t logs/tb_logs/${exp_name}/version_*/checkpoints/last.ckpt 2>/dev/null | head -n1 || true)
if [[ -n "${ckpt}" ]]; then
    CUDA_VISIBLE_DEVICES=0 python -u ./test.py \
        configs/data/megadepth_test_1500.py ${main_cfg_path} \
        --ckpt_path=${ckpt} --gpus=1 --accelerator="ddp" \
        --dump_dir=dump/${exp_name} --batch_size=1 --num_workers=4
fi
