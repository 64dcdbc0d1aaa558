#!/bin/bash
# Train ColBERTv2 on MS MARCO with distillation from a cross-encoder (64-way).
# Tested on a single 8x A100-80GB node. Each rank gets bsize / nranks examples.
set -euo pipefail

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=0
export NCCL_SOCKET_IFNAME=eth0
export OMP_NUM_THREADS=8
export TOKENIZERS_PARALLELISM=false
export COLBERT_LOAD_TORCH_EXTENSION_VERBOSE=False

ROOT=${ROOT:-/expts}
DATA=${DATA:-/data/msmarco}
NRANKS=${NRANKS:-8}
BSIZE=${BSIZE:-32}
LR=${LR:-1e-05}
MAXSTEPS=${MAXSTEPS:-400000}

# the PLAID kernels are JIT-compiled by torch.utils.cpp_extension on first use;
# point the build at the same toolkit torch was built with.
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda-11.7}
export TORCH_EXTENSIONS_DIR=${TORCH_EXTENSIONS_DIR:-$HOME/.cache/torch_extensions}

nvidia-smi --query-gpu=index,name,memory.total --format=csv

python -m colbert.train_distill \
    --root "$ROOT" \
    --experiment msmarco.colbertv2 \
    --triples "$DATA/examples.64.json" \
    --queries "$DATA/queries.train.tsv" \
    --collection "$DATA/collection.tsv" \
    --checkpoint bert-base-uncased \
    --nranks "$NRANKS" \
    --bsize "$BSIZE" \
    --lr "$LR" \
    --maxsteps "$MAXSTEPS" \
    --nway 64 \
    --accumsteps 1 \
    --similarity cosine \
    --use_ib_negatives \
    --amp \
    --doc_maxlen 180 \
    --query_maxlen 32 \
    2>&1 | tee "$ROOT/train_colbertv2.log"
