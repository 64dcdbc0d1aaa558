#!/bin/bash
# Train Dual-Path-RNN on the least-loaded GPU of this machine, then separate a test file.
# Usage: ./run.sh [config] [mix.wav]

config=${1:-./config/Dual_RNN/train.yml}
mix=${2:-./samples/mix.wav}

# pick the GPU with the most free memory (single-GPU training)
gpu=$(nvidia-smi --query-gpu=index,memory.free --format=csv,noheader,nounits | sort -t, -k2 -nr | head -n1 | cut -d, -f1)
export CUDA_VISIBLE_DEVICES=${gpu}
echo "training on GPU ${gpu}"

mkdir -p logs
python train_rnn.py --opt ${config} 2>&1 | tee logs/train_$(date +%Y%m%d_%H%M).log

python test_dualrnn.py \
  -mix_scp ${mix} \
  -yaml ${config} \
  -model ./checkpoint/Dual_Path_RNN/best.pt \
  -gpuid 0 \
  -save_path ./test
