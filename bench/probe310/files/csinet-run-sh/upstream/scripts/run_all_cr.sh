#!/bin/bash
# Train CsiNet / CRNet for every compression ratio and both COST2100 scenarios.
# Each (scenario, CR) job is pinned to one GPU; jobs are spread round-robin
# over the GPUs listed in $GPU_LIST and run in the background.
#
#   GPU_LIST="0 1 2 3" bash scripts/run_all_cr.sh crnet
#   bash scripts/run_all_cr.sh csinet        # single GPU 0

MODEL=${1:-crnet}
GPU_LIST=${GPU_LIST:-"0"}
DATA_DIR=${DATA_DIR:-/data/COST2100}
EPOCHS=${EPOCHS:-1000}
LOG_DIR=./logs/${MODEL}
mkdir -p ${LOG_DIR}

read -r -a GPUS <<< "${GPU_LIST}"
NGPU=${#GPUS[@]}

i=0
for SCENARIO in in out; do
    for CR in 4 8 16 32 64; do
        GPU=${GPUS[$((i % NGPU))]}
        NAME=${MODEL}_${SCENARIO}_cr${CR}
        echo "[$(date +%T)] launching ${NAME} on GPU ${GPU}"
        if [ "${MODEL}" == "csinet" ]; then
            CUDA_VISIBLE_DEVICES=${GPU} nohup python main.py \
                --envir $([ "${SCENARIO}" == "in" ] && echo indoor || echo outdoor) \
                --encoded_dim $((2048 / CR)) \
                --epochs ${EPOCHS} \
                --data_dir ${DATA_DIR} \
                --gpu 0 \
                > ${LOG_DIR}/${NAME}.log 2>&1 &
        else
            python main.py \
                --data-dir ${DATA_DIR} \
                --scenario ${SCENARIO} \
                --epochs ${EPOCHS} \
                --batch-size 200 \
                --workers 0 \
                --cr ${CR} \
                --scheduler cosine \
                --gpu ${GPU} \
                > ${LOG_DIR}/${NAME}.log 2>&1 &
        fi
        i=$((i + 1))
        # do not oversubscribe: wait when every GPU already has a job
        if [ $((i % NGPU)) -eq 0 ]; then
            wait
        fi
    done
done
wait

echo "all jobs finished; best NMSE per run:"
grep -H "Best NMSE" ${LOG_DIR}/*.log | sed 's/.*\/\(.*\)\.log:/\1 /'
