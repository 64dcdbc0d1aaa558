#!/usr/bin/env bash
# Cluster, train and test NetVLAD (VGG16, 64 clusters) on Pittsburgh 30k.
#
#   bash scripts/train_pitts30k.sh [GPU_ID]
#
# The HDF5 feature cache is rebuilt every --cacheRefreshRate queries, so put
# CACHE on a local SSD. CPU-only debugging: append --nocuda to the commands.
set -e

GPU=${1:-0}
DATA=${DATA:-/data/netvlad}
RUNS=${RUNS:-$DATA/runs}
CACHE=${CACHE:-/tmp/netvlad_cache}
ARCH=vgg16
CLUSTERS=64

export CUDA_VISIBLE_DEVICES=$GPU

# fail early (and log the card) if the driver is missing
nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv

mkdir -p "$CACHE" "$RUNS"

# 1) centroids (once per arch / dataset / #clusters)
CENTROIDS="$DATA/centroids/${ARCH}_pitts30k_train_${CLUSTERS}_desc_cen.hdf5"
if [ ! -f "$CENTROIDS" ]; then
    python main.py --mode=cluster --arch=$ARCH --pooling=netvlad --num_clusters=$CLUSTERS \
        --dataPath="$DATA" --cachePath="$CACHE" --threads 8
fi

# 2) train (single GPU; --nGPU >1 wraps the encoder in DataParallel)
python main.py --mode=train --arch=$ARCH --pooling=netvlad --num_clusters=$CLUSTERS \
    --dataPath="$DATA" --runsPath="$RUNS" --cachePath="$CACHE" \
    --threads 8 --nGPU 1 --batchSize 4 --cacheBatchSize 24 --nEpochs 30

# 3) evaluate the best checkpoint of the newest run on the test split
LAST_RUN=$(ls -td "$RUNS"/*/ | head -1)
python main.py --mode=test --resume="$LAST_RUN" --ckpt=best --split=test \
    --dataPath="$DATA" --cachePath="$CACHE" --threads 8
