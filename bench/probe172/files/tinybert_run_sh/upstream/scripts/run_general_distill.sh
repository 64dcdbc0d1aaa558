#!/usr/bin/env bash
# General distillation of TinyBERT (4 layers, 312 hidden) from BERT-base.
# Tested on one node with 8x V100-32GB, CUDA 10.1, apex (--cuda_ext build) for --fp16.
#
# Usage: bash scripts/run_general_distill.sh [NUM_GPUS]

set -e

NUM_GPUS=${1:-8}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export NCCL_DEBUG=WARN
export OMP_NUM_THREADS=4

# ${BERT_BASE_DIR}$ includes the BERT-base teacher model.
BERT_BASE_DIR=${BERT_BASE_DIR:-/data/models/bert-base-uncased}
CORPUS_RAW=${CORPUS_RAW:-/data/corpus/wiki_book.txt}
CORPUS_JSON_DIR=${CORPUS_JSON_DIR:-/data/corpus/json_corpus}
# ${GENERAL_TINYBERT_CONFIG} includes the config file of the student model.
GENERAL_TINYBERT_CONFIG=${GENERAL_TINYBERT_CONFIG:-./configs/tinybert_4l_312d}
GENERAL_TINYBERT_DIR=${GENERAL_TINYBERT_DIR:-./output/general_tinybert_4l}

if [ ! -d "${CORPUS_JSON_DIR}" ]; then
  echo "Generating the pre-training corpus (this runs on CPU) ..."
  python pregenerate_training_data.py --train_corpus ${CORPUS_RAW} \
                    --bert_model ${BERT_BASE_DIR} \
                    --reduce_memory --do_lower_case \
                    --epochs_to_generate 3 \
                    --output_dir ${CORPUS_JSON_DIR}
fi

mkdir -p ${GENERAL_TINYBERT_DIR}

python -m torch.distributed.launch --nproc_per_node=${NUM_GPUS} --master_port=29501 \
  general_distill.py --pregenerated_data ${CORPUS_JSON_DIR} \
                     --teacher_model ${BERT_BASE_DIR} \
                     --student_model ${GENERAL_TINYBERT_CONFIG} \
                     --reduce_memory --do_lower_case \
                     --train_batch_size 256 \
                     --learning_rate 1e-4 \
                     --num_train_epochs 3 \
                     --eval_step 1000 \
                     --fp16 \
                     --output_dir ${GENERAL_TINYBERT_DIR} 2>&1 | tee ${GENERAL_TINYBERT_DIR}/train.log
