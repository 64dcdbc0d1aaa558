#!/usr/bin/env bash
# 8-GPU single-node ResNet-50 training on ImageNet (pytorch/examples imagenet/main.py).
#
# Usage:
#   bash scripts/train_8p.sh --data_path=/data/imagenet [--arch=resnet50] [--epochs=90]
#
# Tested on 8x V100-SXM2-32GB / 8x A100-SXM4-40GB with CUDA 11.x.

set -u

data_path=""
arch="resnet50"
epochs=90
batch_size=2048
lr=0.8
workers=64
master_port=23456

for para in "$@"; do
    if [[ $para == --data_path* ]]; then
        data_path=$(echo ${para#*=})
    elif [[ $para == --arch* ]]; then
        arch=$(echo ${para#*=})
    elif [[ $para == --epochs* ]]; then
        epochs=$(echo ${para#*=})
    elif [[ $para == --batch_size* ]]; then
        batch_size=$(echo ${para#*=})
    elif [[ $para == --lr* ]]; then
        lr=$(echo ${para#*=})
    fi
done

if [[ -z "$data_path" ]]; then
    echo "[Error] --data_path must be set"
    exit 1
fi

cur_path=$(cd "$(dirname "$0")/.." && pwd)
test_path_dir=${cur_path}/test
mkdir -p ${test_path_dir}/output

# ------------------------------------------------------------------------------
# environment
# ------------------------------------------------------------------------------
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=1
export NCCL_P2P_LEVEL=NVL
export OMP_NUM_THREADS=8

RANK_SIZE=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
echo "Found ${RANK_SIZE} GPUs"
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv

start_time=$(date +%s)

python3 ${cur_path}/main.py \
    "${data_path}" \
    -a ${arch} \
    --epochs ${epochs} \
    -b ${batch_size} \
    --lr ${lr} \
    -j ${workers} \
    --dist-url "tcp://127.0.0.1:${master_port}" \
    --dist-backend 'nccl' \
    --multiprocessing-distributed \
    --world-size 1 \
    --rank 0 \
    > ${test_path_dir}/output/train_8p.log 2>&1 &

wait

end_time=$(date +%s)
e2e_time=$(( end_time - start_time ))

# ------------------------------------------------------------------------------
# results
# ------------------------------------------------------------------------------
echo "------------------ Final result ------------------"
echo "Network = ${arch}"
echo "RankSize = ${RANK_SIZE}"
echo "BatchSize = ${batch_size}"
echo "E2E training duration (sec) = ${e2e_time}"

best_acc1=$(grep -a '\* Acc@1' ${test_path_dir}/output/train_8p.log | awk 'END {print $3}')
echo "Final Acc@1 = ${best_acc1}"

fps=$(grep -a 'Epoch:' ${test_path_dir}/output/train_8p.log | tail -n 100 \
      | awk -F 'Time' '{print $2}' | awk '{sum += $1} END {if (NR > 0) print '"${batch_size}"' * NR / sum}')
echo "Final Performance images/sec = ${fps}"

nvidia-smi --query-gpu=index,memory.used --format=csv >> ${test_path_dir}/output/train_8p.log
