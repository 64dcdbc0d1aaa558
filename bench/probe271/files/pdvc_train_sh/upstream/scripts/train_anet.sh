#!/usr/bin/env bash
# Train PDVC on ActivityNet Captions (C3D / TSN features), then evaluate the best checkpoint.
# usage: bash scripts/train_anet.sh [GPU_ID] [CFG]
set -e

GPU_ID=${1:-0}
config_path=${2:-cfgs/anet_c3d_pdvc.yml}
export CUDA_VISIBLE_DEVICES=${GPU_ID}
export CUDA_LAUNCH_BLOCKING=0

# compile the deformable attention CUDA op once (needs nvcc matching torch.version.cuda)
if ! python -c "import MultiScaleDeformableAttention" 2>/dev/null; then
    echo "building MultiScaleDeformableAttention with $(nvcc --version | tail -n 1)"
    cd pdvc/ops
    sh make.sh
    cd ../..
fi

nvidia-smi --query-gpu=name,memory.total --format=csv

python train.py --cfg_path ${config_path} --gpu_id ${GPU_ID}

# The script will evaluate the model for every epoch. The results and logs are saved in `./save`.
cfg_name=$(basename ${config_path} .yml)
python eval.py --eval_folder ${cfg_name} --eval_transformer_input_type queries --gpu_id ${GPU_ID} \
    --eval_caption_file data/anet/captiondata/val_1.json
