#!/bin/bash
# 5-fold leave-one-session-out SUPERB ER evaluation.
#   ./downstream/emotion/cross_validation.sh hubert_large_ll60k result/downstream/er_hubert_large "0,1"
# With more than one GPU id the folds are trained with DDP (one process per GPU).

set -e

upstream=$1
expdir=$2
gpus=${3:-0}
lr=${LR:-1e-4}

if [ -z "$upstream" ] || [ -z "$expdir" ]; then
    echo "Usage: $0 <upstream> <expdir> [gpu_ids]"
    exit 1
fi

export CUDA_VISIBLE_DEVICES=$gpus
ngpu=$(echo $gpus | tr ',' '\n' | wc -l)
export OMP_NUM_THREADS=1
export NCCL_ASYNC_ERROR_HANDLING=1
export NCCL_SOCKET_IFNAME=eth0
master_port=$((29500 + RANDOM % 1000))

mkdir -p $expdir

for test_fold in fold1 fold2 fold3 fold4 fold5;
do
    fold_dir=$expdir/$test_fold
    if [ -f "$fold_dir/test_${test_fold}_predict.txt" ]; then
        echo "skip $test_fold (done)"
        continue
    fi

    if [ "$ngpu" -gt 1 ]; then
        python3 -m torch.distributed.launch --nproc_per_node $ngpu --master_port $master_port \
            run_downstream.py -m train -n $(basename $expdir)/$test_fold \
            -u $upstream -d emotion -c downstream/emotion/config.yaml \
            -o "config.downstream_expert.datarc.test_fold='$test_fold',,config.optimizer.lr=$lr" \
            --backend nccl -a
    else
        python3 run_downstream.py -m train -p $fold_dir -u $upstream -d emotion \
            -c downstream/emotion/config.yaml --device cuda -a \
            -o "config.downstream_expert.datarc.test_fold='$test_fold',,config.optimizer.lr=$lr"
    fi

    python3 run_downstream.py -m evaluate -e $fold_dir/dev-best.ckpt --device cuda > $fold_dir/test.log 2>&1
done

python3 - <<PY
import re, glob, statistics
accs = []
for log in sorted(glob.glob("$expdir/fold*/test.log")):
    with open(log) as f:
        m = re.findall(r"test acc: ([0-9.]+)", f.read())
    if m:
        accs.append(float(m[-1]))
        print(log, m[-1])
if accs:
    print("mean acc over %d folds: %.4f" % (len(accs), statistics.mean(accs)))
PY
