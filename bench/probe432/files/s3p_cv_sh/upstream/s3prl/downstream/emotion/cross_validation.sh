#!/bin/bash
# Five-fold (leave-one-session-out) IEMOCAP emotion recognition with a frozen upstream.
#   bash downstream/emotion/cross_validation.sh <gpu_id> <upstream> <expdir_prefix> [override]
# e.g.
#   bash downstream/emotion/cross_validation.sh 2 hubert result/downstream/er_hubert

set -x
set -e

gpu_id=$1
upstream=$2
expdir_prefix=$3
override=${4:-"none"}

export CUDA_VISIBLE_DEVICES=$gpu_id

for test_fold in fold1 fold2 fold3 fold4 fold5;
do
    expdir=${expdir_prefix}_${test_fold}
    if [ -f "${expdir}/dev-best.ckpt" ]; then
        echo "${expdir} already trained, skip training"
    else
        python3 run_downstream.py -m train -a \
            -n $(basename $expdir) -p $expdir \
            -u $upstream -d emotion \
            -c downstream/emotion/config.yaml \
            -o "config.downstream_expert.datarc.test_fold='$test_fold'"
    fi
    python3 run_downstream.py -m evaluate -e ${expdir}/dev-best.ckpt > ${expdir}/test.log
done

grep "test acc" ${expdir_prefix}_fold*/test.log | awk '{ s += $NF } END { print "average test acc:", s / NR }'
