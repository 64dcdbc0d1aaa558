#!/usr/bin/env bash
# Train + evaluate the WMT14 en-de Transformer-big on a single 4-GPU node.
#
#   bash examples/wmt14/train_ende.sh [RUN_DIR]
#
# Expects prepare_wmt14_data.sh to have been run first (raw corpora +
# SentencePiece model in data/wmt14_ende).
set -euo pipefail

RUN_DIR=${1:-data/wmt14_ende/run}
CONFIG=config/wmt14_ende_big.yaml
SP_MODEL=data/wmt14_ende/wmtende.model
TEST_SRC=data/wmt14_ende/test/newstest2014-deen-src.en.sgm
TEST_REF=data/wmt14_ende/test/newstest2014-deen-ref.de.sgm

# GPUs used for training / translation
export CUDA_VISIBLE_DEVICES=0,1,2,3
export NCCL_DEBUG=WARN
export NCCL_P2P_LEVEL=NVL
export OMP_NUM_THREADS=4

mkdir -p "${RUN_DIR}"

echo "== GPU inventory =="
nvidia-smi --query-gpu=index,name,memory.total --format=csv

echo "== Build vocab =="
onmt_build_vocab -config "${CONFIG}" -n_sample -1 -num_threads 16

echo "== Train =="
onmt_train -config "${CONFIG}" \
    -world_size 4 -gpu_ranks 0 1 2 3 \
    2>&1 | tee "${RUN_DIR}/train.log"

echo "== Average last 10 checkpoints =="
CKPTS=$(ls -1v "${RUN_DIR}"/model_step_*.pt | tail -n 10)
python tools/average_models.py -models ${CKPTS} -output "${RUN_DIR}/model_avg10.pt"

echo "== Translate newstest2014 =="
sed -e 's/<[^>]*>//g; /^\s*$/d' "${TEST_SRC}" > "${RUN_DIR}/test.en"
sed -e 's/<[^>]*>//g; /^\s*$/d' "${TEST_REF}" > "${RUN_DIR}/test.de"
spm_encode --model="${SP_MODEL}" < "${RUN_DIR}/test.en" > "${RUN_DIR}/test.sp.en"

CUDA_VISIBLE_DEVICES=0 onmt_translate \
    -model "${RUN_DIR}/model_avg10.pt" \
    -src "${RUN_DIR}/test.sp.en" \
    -output "${RUN_DIR}/test.hyp.sp.de" \
    -gpu 0 -batch_size 4096 -batch_type tokens -beam_size 4 -length_penalty avg \
    -report_time

spm_decode --model="${SP_MODEL}" < "${RUN_DIR}/test.hyp.sp.de" > "${RUN_DIR}/test.hyp.de"

echo "== Score =="
sacrebleu "${RUN_DIR}/test.de" < "${RUN_DIR}/test.hyp.de" | tee "${RUN_DIR}/bleu.txt"
