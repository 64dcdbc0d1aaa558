#!/bin/bash
# 8-GPU data parallel training of Wide&Deep on Criteo (single node, one process per GPU).
# usage: bash scripts/run_8p.sh /data/criteo_npy [extra train.py args]
#
# Tested on a DGX-1 (8x V100 32GB), driver 460, CUDA 11.1: ~2.1M samples/s with --amp.

DATA_DIR=${1:-/data/criteo_npy}
shift
NGPUS=8
BATCH_SIZE=4096        # per GPU, global batch = 32768

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export NCCL_DEBUG=WARN
export NCCL_SOCKET_IFNAME=eth0
export NCCL_IB_DISABLE=1
export OMP_NUM_THREADS=4

cur_path=$(cd "$(dirname "$0")/.." && pwd)
log_dir=${cur_path}/output/8p_$(date +%Y%m%d_%H%M%S)
mkdir -p ${log_dir}

# sanity check: all 8 cards must be listed
nvidia-smi -L | tee ${log_dir}/devices.txt

start_time=$(date +%s)
python -m torch.distributed.launch --nproc_per_node=${NGPUS} --master_port=29500 \
    ${cur_path}/train.py \
    --data_dir ${DATA_DIR} \
    --batch_size ${BATCH_SIZE} \
    --epochs 3 \
    --lr 0.002 \
    --amp --opt_level O1 \
    --num_workers 8 \
    --save_dir ${log_dir}/ckpt \
    "$@" > ${log_dir}/train_8p.log 2>&1 &
wait
end_time=$(date +%s)

echo "E2E training time: $(( end_time - start_time ))s"
grep "val AUC" ${log_dir}/train_8p.log | tail -n 1
grep "samples/s/gpu" ${log_dir}/train_8p.log | tail -n 5 | awk '{print $8}' | \
    awk -v n=${NGPUS} '{s+=$1} END {if (NR > 0) printf "avg throughput: %.0f samples/s (all gpus)\n", s/NR*n}'
