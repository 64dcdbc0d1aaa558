#!/bin/bash
# Usage:
#   sh scripts/train.sh <num_gpu> <port>            # single node, torch.distributed.launch
#   sh scripts/train.sh <num_gpu> <port> <partition> slurm
set -e

now=$(date +"%Y%m%d_%H%M%S")

# modify these augments if you want to try other datasets, splits or methods
# dataset: ['pascal', 'cityscapes', 'coco']
# method: ['unimatch', 'fixmatch', 'supervised']
# exp: just for specifying the 'save_path'
# split: ['92', '1_16', 'u2pl_1_16', ...]. Please check directory './splits/$dataset' for concrete splits
dataset='pascal'
method='unimatch'
exp='r101'
split='732'

config=configs/${dataset}.yaml
labeled_id_path=splits/$dataset/$split/labeled.txt
unlabeled_id_path=splits/$dataset/$split/unlabeled.txt
save_path=exp/$dataset/$method/$exp/$split

mkdir -p $save_path

# ---- devices / communication ----
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
export NCCL_P2P_DISABLE=0
export NCCL_IB_DISABLE=1
export NCCL_DEBUG=WARN
export OMP_NUM_THREADS=4

# sanity check: how many GPUs does this node actually expose?
NGPUS_VISIBLE=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
echo "[$now] visible GPUs: $NGPUS_VISIBLE, requested: $1"
if [ "$1" -gt "$NGPUS_VISIBLE" ]; then
    echo "requested $1 GPUs but only $NGPUS_VISIBLE are visible" >&2
    exit 1
fi

if [ "$4" = "slurm" ]; then
    srun --mpi=pmi2 -p $3 -n $1 --gres=gpu:$1 --ntasks-per-node=$1 \
        --job-name=$method --kill-on-bad-exit=1 \
        python -u $method.py \
        --config=$config --labeled-id-path $labeled_id_path --unlabeled-id-path $unlabeled_id_path \
        --save-path $save_path --port $2 2>&1 | tee $save_path/$now.log
else
    python -m torch.distributed.launch \
        --nproc_per_node=$1 \
        --master_addr=localhost \
        --master_port=$2 \
        $method.py \
        --config=$config --labeled-id-path $labeled_id_path --unlabeled-id-path $unlabeled_id_path \
        --save-path $save_path --port $2 2>&1 | tee $save_path/$now.log
fi

# keep a copy of the config next to the logs
cp $config $save_path/

# report peak memory of the last run for the README table
nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv >> $save_path/$now.log || true

echo "done: $save_path"
