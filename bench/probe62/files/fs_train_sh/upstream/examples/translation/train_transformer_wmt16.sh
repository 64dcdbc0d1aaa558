#!/usr/bin/env bash
# Reproduce "Scaling Neural Machine Translation" (Ott et al., 2018):
# transformer_vaswani_wmt_en_de_big on WMT'16 En-De, one node with 8 V100s.
#
#   bash examples/translation/train_transformer_wmt16.sh [prepare|train|average|generate|all]
#
# The binarized data is expected in data-bin/wmt16_en_de_bpe32k
# (see examples/translation/prepare-wmt14en2de.sh for the BPE step).

set -euo pipefail

STAGE=${1:-all}
FAIRSEQ=${FAIRSEQ:-$(pwd)}
DATA=${DATA:-data-bin/wmt16_en_de_bpe32k}
SAVE=${SAVE:-checkpoints/transformer_wmt16_en_de_big}
LOGDIR=${LOGDIR:-logs/transformer_wmt16_en_de_big}
NUM_GPUS=${NUM_GPUS:-8}
MAX_TOKENS=${MAX_TOKENS:-3584}
UPDATE_FREQ=${UPDATE_FREQ:-16}
SEED=${SEED:-1}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export NCCL_DEBUG=WARN
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export OMP_NUM_THREADS=4

mkdir -p "$SAVE" "$LOGDIR"

check_env() {
    python - <<'EOF'
import torch
print("torch", torch.__version__, "cuda", torch.version.cuda)
assert torch.cuda.is_available(), "this recipe needs GPUs"
print("visible devices:", torch.cuda.device_count())
EOF
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
}

build_extensions() {
    # fused kernels used by --fp16 training (LayerNorm, Adam) and by the
    # ngram repeat blocker during beam search
    pip install --no-build-isolation --global-option="--cpp_ext" \
        --global-option="--cuda_ext" --global-option="--deprecated_fused_adam" \
        git+https://github.com/NVIDIA/apex.git
    (cd "$FAIRSEQ" && python setup.py build_ext --inplace)
}

train() {
    fairseq-train "$DATA" \
        --arch transformer_vaswani_wmt_en_de_big --share-all-embeddings \
        --optimizer adam --adam-betas '(0.9, 0.98)' --clip-norm 0.0 \
        --lr 0.001 --lr-scheduler inverse_sqrt --warmup-updates 4000 --warmup-init-lr 1e-07 \
        --dropout 0.3 --weight-decay 0.0 \
        --criterion label_smoothed_cross_entropy --label-smoothing 0.1 \
        --max-tokens "$MAX_TOKENS" --update-freq "$UPDATE_FREQ" \
        --fp16 --fp16-init-scale 128 --threshold-loss-scale 1 \
        --distributed-world-size "$NUM_GPUS" --distributed-backend nccl \
        --ddp-backend pytorch_ddp --bucket-cap-mb 50 \
        --num-workers 4 --seed "$SEED" \
        --save-dir "$SAVE" --keep-last-epochs 10 --max-update 30000 \
        --log-format json --log-interval 100 --tensorboard-logdir "$LOGDIR" \
        2>&1 | tee "$LOGDIR/train.log"
}

average() {
    python scripts/average_checkpoints.py \
        --inputs "$SAVE" --num-epoch-checkpoints 10 \
        --output "$SAVE/checkpoint.avg10.pt"
}

generate() {
    # single-GPU decoding of newstest2014
    CUDA_VISIBLE_DEVICES=0 fairseq-generate "$DATA" \
        --path "$SAVE/checkpoint.avg10.pt" \
        --beam 4 --lenpen 0.6 --remove-bpe \
        --batch-size 128 --fp16 \
        --gen-subset test > "$LOGDIR/gen.out"

    bash scripts/compound_split_bleu.sh "$LOGDIR/gen.out"
    grep ^H "$LOGDIR/gen.out" | cut -f3- | sacrebleu -t wmt14/full -l en-de
}

multi_node() {
    # two nodes x 8 GPUs through torch.distributed.launch
    python -m torch.distributed.launch --nproc_per_node=8 \
        --nnodes=2 --node_rank="$NODE_RANK" --master_addr="$MASTER_ADDR" \
        --master_port=12345 \
        "$(which fairseq-train)" "$DATA" \
        --arch transformer_vaswani_wmt_en_de_big --share-all-embeddings \
        --optimizer adam --adam-betas '(0.9, 0.98)' --clip-norm 0.0 \
        --lr 0.001 --lr-scheduler inverse_sqrt --warmup-updates 4000 \
        --criterion label_smoothed_cross_entropy --label-smoothing 0.1 \
        --max-tokens "$MAX_TOKENS" --fp16 --memory-efficient-fp16 \
        --save-dir "$SAVE"
}

case "$STAGE" in
    prepare) check_env; build_extensions ;;
    train) check_env; train ;;
    average) average ;;
    generate) generate ;;
    multi) multi_node ;;
    all) check_env; build_extensions; train; average; generate ;;
    *) echo "unknown stage $STAGE"; exit 1 ;;
esac
