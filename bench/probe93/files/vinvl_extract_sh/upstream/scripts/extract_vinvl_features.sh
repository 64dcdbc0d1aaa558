#!/usr/bin/env bash
# Extract VinVL (X152-C4) region features + attribute labels for an image
# folder, producing the predictions.tsv / feature.tsv pair read by Oscar+.
#
# usage: bash scripts/extract_vinvl_features.sh <image_dir> <output_dir> [num_gpus]
set -e

IMAGE_DIR=${1:?image dir}
OUTPUT_DIR=${2:?output dir}
NUM_GPUS=${3:-8}

MODEL_WEIGHT=${MODEL_WEIGHT:-pretrained_model/vinvl_vg_x152c4.pth}
LABELMAP=${LABELMAP:-visualgenome/VG-SGG-dicts-vgoi6-clipped.json}
CONFIG=sgg_configs/vgattr/vinvl_x152c4.yaml

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=1
export OMP_NUM_THREADS=4
export PYTHONPATH=$(pwd):${PYTHONPATH}

mkdir -p ${OUTPUT_DIR}

echo "== devices =="
nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv

# pick the per-device batch from the smallest free memory on the node
FREE_MB=$(nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits | sort -n | head -1)
if [ "${FREE_MB}" -gt 30000 ]; then
    IMS_PER_DEVICE=4
elif [ "${FREE_MB}" -gt 15000 ]; then
    IMS_PER_DEVICE=2
else
    IMS_PER_DEVICE=1
fi
IMS_PER_BATCH=$((IMS_PER_DEVICE * NUM_GPUS))
echo "images per batch: ${IMS_PER_BATCH}"

# 1) build the image tsv + yaml the ODTSVDataset reads
python tools/mini_tsv/tsv_demo.py \
    --image_dir ${IMAGE_DIR} \
    --output_dir ${OUTPUT_DIR}/tsv

# 2) run the detector on all devices
python -m torch.distributed.launch --nproc_per_node=${NUM_GPUS} --master_port=29517 \
    tools/test_sg_net.py \
    --config-file ${CONFIG} \
    TEST.IMS_PER_BATCH ${IMS_PER_BATCH} \
    MODEL.WEIGHT ${MODEL_WEIGHT} \
    MODEL.DEVICE cuda \
    MODEL.ROI_HEADS.NMS_FILTER 1 \
    MODEL.ROI_HEADS.SCORE_THRESH 0.2 \
    DATA_DIR ${OUTPUT_DIR}/tsv \
    DATASETS.LABELMAP_FILE ${LABELMAP} \
    DATASETS.TEST "('train.yaml',)" \
    TEST.IGNORE_BOX_REGRESSION True \
    TEST.OUTPUT_FEATURE True \
    TEST.GATHER_ON_CPU True \
    OUTPUT_DIR ${OUTPUT_DIR}

# 3) split predictions.tsv into the label / feature files Oscar expects
python tools/mini_tsv/split_predictions.py \
    --predictions ${OUTPUT_DIR}/inference/train.yaml/predictions.tsv \
    --out_label ${OUTPUT_DIR}/label.tsv \
    --out_feature ${OUTPUT_DIR}/feature.tsv \
    --feature_dim 2054

echo "done: ${OUTPUT_DIR}/feature.tsv"
nvidia-smi --query-gpu=index,memory.used --format=csv,noheader
