#!/usr/bin/env bash
# DG-Font training / evaluation launcher.
#
#   bash run.sh train  0,1,2,3      # 4-GPU DDP training (one process per GPU via mp.spawn)
#   bash run.sh train  0            # single GPU
#   bash run.sh val    0  GAN_20210301-101010
#
# --gpu takes a comma separated list; main.py exports it as CUDA_VISIBLE_DEVICES and
# spawns one worker per visible GPU.
set -e

MODE=${1:-train}
GPUS=${2:-0,1,2,3}
LOAD=${3:-}

DATA=${DATA:-../data}
PORT=${PORT:-$(( 8000 + RANDOM % 1000 ))}

export OMP_NUM_THREADS=4
export NCCL_DEBUG=WARN

if [ "$MODE" = "train" ]; then
    python main.py --gpu "$GPUS" --data_path "$DATA" --output_k 400 --batch_size 32 \
        --iters 1000 --epochs 200 --port "$PORT" --ddp
elif [ "$MODE" = "val" ]; then
    if [ -z "$LOAD" ]; then
        echo "usage: bash run.sh val <gpu> <model_name>"; exit 1
    fi
    python main.py --gpu "$GPUS" --data_path "$DATA" --output_k 400 --batch_size 32 \
        --load_model "$LOAD" --validation --port "$PORT"
elif [ "$MODE" = "test" ]; then
    # single-GPU inference over the test fonts, writes images to ./results/<model>/test
    CUDA_VISIBLE_DEVICES=${GPUS%%,*} python test.py --data_path "$DATA" \
        --load_model "$LOAD" --output_k 400 --img_size 80
else
    echo "unknown mode $MODE"; exit 1
fi

# Show memory of the GPUs we used (handy when tuning batch size)
nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv
