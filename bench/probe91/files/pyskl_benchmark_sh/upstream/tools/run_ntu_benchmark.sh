#!/usr/bin/env bash
# Train and test every NTU RGB+D config of one model family (joint / bone /
# joint-motion / bone-motion for xsub, xview, xsub120, xset120), then ensemble
# the four streams.
#
# usage:
#   bash tools/run_ntu_benchmark.sh stgcn++ [GPUS]                 # local node
#   bash tools/run_ntu_benchmark.sh ctrgcn 16 --slurm mm_video     # slurm, 2 nodes
set -e
set -x

MODEL=$1
GPUS=${2:-8}
SLURM=false
PARTITION=""
if [ "$3" == "--slurm" ]; then
    SLURM=true
    PARTITION=$4
fi

GPUS_PER_NODE=${GPUS_PER_NODE:-8}
CPUS_PER_TASK=${CPUS_PER_TASK:-5}
SRUN_ARGS=${SRUN_ARGS:-""}
CONFIG_ROOT=configs/${MODEL}
WORK_ROOT=work_dirs/${MODEL}

# ---------------------------------------------------------------- environment
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
NUM_VISIBLE=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
if [ "$SLURM" == "false" ] && [ "$GPUS" -gt "$NUM_VISIBLE" ]; then
    echo "asked for $GPUS GPUs but only $NUM_VISIBLE are visible"
    exit 1
fi

export NCCL_DEBUG=WARN
export NCCL_SOCKET_IFNAME=eth0
export NCCL_IB_DISABLE=1
export OMP_NUM_THREADS=4
export MKL_NUM_THREADS=4
export PYTHONPATH="$(dirname $0)/..":$PYTHONPATH

# wait until no other job holds the GPUs (shared workstation etiquette)
wait_for_free_gpus() {
    while nvidia-smi --query-compute-apps=pid --format=csv,noheader | grep -q .; do
        echo "GPUs busy, sleeping 60s"
        sleep 60
    done
}

run_local() {
    local cfg=$1
    local port=$((12000 + RANDOM % 20000))
    wait_for_free_gpus
    python -m torch.distributed.launch --nproc_per_node=${GPUS} --master_port=${port} \
        tools/train.py ${cfg} --launcher pytorch --validate --test-last --test-best
}

run_slurm() {
    local cfg=$1
    local job=$(basename ${cfg} .py)
    srun -p ${PARTITION} \
        --job-name=${MODEL}_${job} \
        --gres=gpu:${GPUS_PER_NODE} \
        --ntasks=${GPUS} \
        --ntasks-per-node=${GPUS_PER_NODE} \
        --cpus-per-task=${CPUS_PER_TASK} \
        --kill-on-bad-exit=1 \
        ${SRUN_ARGS} \
        python -u tools/train.py ${cfg} --launcher="slurm" --validate --test-last --test-best
}

# ------------------------------------------------------------------ training
for split in ntu60_xsub_hrnet ntu60_xview_hrnet ntu120_xsub_hrnet ntu120_xset_hrnet; do
    for modality in j b jm bm; do
        cfg=${CONFIG_ROOT}/${MODEL}_pyskl_${split}/${modality}.py
        if [ ! -f ${cfg} ]; then
            echo "skip missing ${cfg}"
            continue
        fi
        if [ "$SLURM" == "true" ]; then
            run_slurm ${cfg}
        else
            run_local ${cfg}
        fi
    done

    # ------------------------------------------------------------ ensemble
    python tools/ensemble.py \
        --scores ${WORK_ROOT}/${MODEL}_pyskl_${split}/{j,b,jm,bm}/best_pred.pkl \
        --coefficients 2 2 1 1 \
        --out ${WORK_ROOT}/${MODEL}_pyskl_${split}/ensemble.txt
done
