#!/bin/bash
#SBATCH --job-name=hidden_48b
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=1
#SBATCH --gres=gpu:8
#SBATCH --cpus-per-task=80
#SBATCH --time=72:00:00
#SBATCH --output=logs/%x_%j.out
#
# Train the HiDDeN watermark extractor used by Stable Signature (48 bits, one node, 8 GPUs).
#   bash launch_train.sh /path/to/coco output/hidden_48b
# or   sbatch launch_train.sh /path/to/coco output/hidden_48b
set -e

DATA=${1:-/datasets01/COCO/022719}
OUT=${2:-output/hidden_48b}
NGPUS=${NGPUS:-8}
PORT=${PORT:-29501}

mkdir -p logs "$OUT"

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=1
export NCCL_SOCKET_IFNAME=eth0
export OMP_NUM_THREADS=8

# log the hardware we are running on
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv
python -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"

torchrun --nproc_per_node=$NGPUS --master_port=$PORT main.py \
  --val_dir $DATA/val2014 --train_dir $DATA/train2014 --output_dir $OUT --eval_freq 5 \
  --img_size 256 --num_bits 48 --batch_size 16 --epochs 300 \
  --scheduler CosineLRScheduler,lr_min=1e-6,t_initial=300,warmup_lr_init=1e-6,warmup_t=5 \
  --optimizer Lamb,lr=2e-2 \
  --p_color_jitter 0.0 --p_blur 0.0 --p_rot 0.0 --p_crop 1.0 --p_res 1.0 --p_jpeg 1.0 \
  --scaling_w 0.3 --scale_channels False --attenuation none \
  --loss_w_type bce --loss_margin 1 \
  2>&1 | tee "$OUT/train.log"

# whiten + export the decoder for finetune_ldm_decoder.py
python -c "
import torch, sys
sys.path.append('.')
ckpt = torch.load('$OUT/checkpoint.pth', map_location='cpu')
print('epochs trained:', ckpt['epoch'])
"
