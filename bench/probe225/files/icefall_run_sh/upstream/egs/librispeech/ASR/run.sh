#!/usr/bin/env bash
#
# Train and decode a non-streaming zipformer on full LibriSpeech (960h)
# with 4 x A100 80GB. Results are written to zipformer/exp.
#
# Usage:
#   ./run.sh --stage 0 --stop-stage 2
#   ./run.sh --stage 1 --stop-stage 1 --gpus "4,5,6,7" --master-port 12356

# fix segmentation fault reported in https://github.com/k2-fsa/icefall/issues/674
export PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python

set -eou pipefail

stage=0
stop_stage=2
gpus="0,1,2,3"
master_port=12354
exp_dir=zipformer/exp
max_duration=1000
num_epochs=30
epoch=30
avg=9

. shared/parse_options.sh || exit 1

export CUDA_VISIBLE_DEVICES="$gpus"
world_size=$(echo "$gpus" | awk -F, '{print NF}')

# NCCL tuning for our cluster (8 x A100 per node, InfiniBand)
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=0
export NCCL_SOCKET_IFNAME=eth0
export OMP_NUM_THREADS=1

log() {
  # This function is from espnet
  local fname=${BASH_SOURCE[1]##*/}
  echo -e "$(date '+%Y-%m-%d %H:%M:%S') (${fname}:${BASH_LINENO[0]}:${FUNCNAME[1]}) $*"
}

log "Using GPUs: $CUDA_VISIBLE_DEVICES (world size $world_size)"
nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv

if [ $stage -le 0 ] && [ $stop_stage -ge 0 ]; then
  log "Stage 0: Prepare data (see prepare.sh)"
  ./prepare.sh
fi

if [ $stage -le 1 ] && [ $stop_stage -ge 1 ]; then
  log "Stage 1: Train zipformer"
  ./zipformer/train.py \
    --world-size $world_size \
    --master-port $master_port \
    --num-epochs $num_epochs \
    --start-epoch 1 \
    --use-fp16 1 \
    --exp-dir $exp_dir \
    --full-libri 1 \
    --max-duration $max_duration
fi

if [ $stage -le 2 ] && [ $stop_stage -ge 2 ]; then
  log "Stage 2: Decode"
  # decoding only needs a single GPU
  export CUDA_VISIBLE_DEVICES=$(echo "$gpus" | cut -d, -f1)
  for m in greedy_search modified_beam_search fast_beam_search; do
    ./zipformer/decode.py \
      --epoch $epoch \
      --avg $avg \
      --use-averaged-model 1 \
      --exp-dir $exp_dir \
      --max-duration 600 \
      --decoding-method $m
  done
fi
