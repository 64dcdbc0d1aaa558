#!/bin/bash
########################
# Script for the ASVspoof mega-benchmark demonstration
#
# Usage: bash 00_demo.sh MODEL CONFIG RAND_SEED
#  MODEL: lfcc-lcnn-lstmsum-p2s, lfcc-lcnn-lstmsum-am, ...
#  CONFIG: config_train_toyset_ID_6
#  RAND_SEED: 01, 02, ...
#
# Several seeds are trained in parallel, one per GPU: the list of GPUs is
# taken from GPU_LIST below.
#
# Note: this script will download pre-trained models and data.
########################
RED='\033[0;32m'
NC='\033[0m'

# load python environment
source $PWD/../../env.sh

# download pre-trained models and toy data if not available
if [ ! -e "../DATA/asvspoof2019_LA/" ]; then
    mkdir -p ../DATA
    cd ../DATA
    echo -e "${RED}Download and unpack the toy data set${NC}"
    wget -q --show-progress https://zenodo.org/record/6456704/files/asvspoof2019_LA.tar.gz
    tar -xzf asvspoof2019_LA.tar.gz
    cd -
fi

MODEL=$1
CONFIG=$2
SEEDS=${3:-"01 02 03"}
GPU_LIST=(${GPU_LIST:-0 1 2 3})

# how many GPUs does this machine have?
NUM_GPUS=$(nvidia-smi --list-gpus | wc -l)
echo -e "${RED}Found ${NUM_GPUS} GPUs, using ${GPU_LIST[*]}${NC}"

i=0
for SEED in ${SEEDS}; do
    GPU=${GPU_LIST[$((i % ${#GPU_LIST[@]}))]}
    TRAINDIR=${MODEL}/${CONFIG}/${SEED}
    mkdir -p ${TRAINDIR}
    cp ${MODEL}/main.py ${MODEL}/model.py ${TRAINDIR}/ 2>/dev/null || true
    cp ${CONFIG}.py ${TRAINDIR}/
    echo -e "${RED}Training ${TRAINDIR} on GPU ${GPU}${NC}"
    (
        cd ${TRAINDIR}
        CUDA_VISIBLE_DEVICES=${GPU} python main.py \
            --model-forward-with-file-name \
            --num-workers 3 --epochs 100 --no-best-epochs 50 \
            --batch-size 64 --sampler block_shuffle_by_length \
            --lr-decay-factor 0.5 --lr-scheduler-type 1 --lr 0.0003 \
            --not-save-each-epoch --seed 10${SEED} \
            --module-config ${CONFIG} > log_train 2> log_err
    ) &
    i=$((i + 1))
done
wait

# score the evaluation set with every trained model
for SEED in ${SEEDS}; do
    TRAINDIR=${MODEL}/${CONFIG}/${SEED}
    (
        cd ${TRAINDIR}
        CUDA_VISIBLE_DEVICES=${GPU_LIST[0]} python main.py --inference \
            --model-forward-with-file-name \
            --trained-model trained_network.pt \
            --module-config config_test > log_output_testset 2> log_output_err
        python ../../../02_evaluate.py log_output_testset ../../../DATA/asvspoof2019_LA/protocol.txt
    )
done
echo -e "${RED}Done${NC}"
