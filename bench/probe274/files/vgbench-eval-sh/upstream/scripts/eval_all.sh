#!/usr/bin/env bash
# Evaluate one trained model on all the benchmark datasets.
#
#   bash scripts/eval_all.sh <path/to/best_model.pth> <backbone> <aggregation> [gpu_id]
#
# Every dataset is evaluated in its own process so that a crash (e.g. a GPU OOM on
# the 480x640 five-crops test of st_lucia) does not kill the whole sweep.
set -u

RESUME=${1:?"path to the model to evaluate"}
BACKBONE=${2:-resnet50conv4}
AGGREGATION=${3:-netvlad}
GPU=${4:-0}

DATASETS_FOLDER=${DATASETS_FOLDER:-/data/vg_datasets}
DATASETS=(pitts30k pitts250k msls tokyo247 st_lucia sf_xl_small)
LOG_DIR=logs/eval_$(basename $(dirname $RESUME))
mkdir -p $LOG_DIR

export CUDA_VISIBLE_DEVICES=$GPU
export OMP_NUM_THREADS=8
# PyTorch caching allocator: avoid fragmentation with the variable-size query batches
export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512

echo "Evaluating $RESUME on GPU $GPU ($(nvidia-smi --query-gpu=name --format=csv,noheader -i $GPU))"

for DS in "${DATASETS[@]}"; do
    case $DS in
        tokyo247)   TEST_METHOD=central_crop ;;
        st_lucia)   TEST_METHOD=five_crops ;;
        msls)       TEST_METHOD=hard_resize ;;
        *)          TEST_METHOD=hard_resize ;;
    esac
    echo "=== $DS ($TEST_METHOD) ==="
    python eval.py \
        --backbone=$BACKBONE \
        --aggregation=$AGGREGATION \
        --resume=$RESUME \
        --datasets_folder=$DATASETS_FOLDER \
        --dataset_name=$DS \
        --test_method=$TEST_METHOD \
        --infer_batch_size=32 \
        --num_workers=8 \
        --device=cuda \
        --save_dir=$LOG_DIR/$DS 2>&1 | tee $LOG_DIR/$DS.txt
done

# Collect the R@1/R@5 of every dataset into one table
grep -h "Recalls on" $LOG_DIR/*.txt | sed -e 's/.*Recalls on < BaseDataset, //' -e 's/ - #database.*>: / /' \
    | column -t > $LOG_DIR/summary.txt
cat $LOG_DIR/summary.txt
