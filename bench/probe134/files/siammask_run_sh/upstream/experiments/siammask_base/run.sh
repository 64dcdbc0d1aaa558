#!/usr/bin/env bash
# Train SiamMask (base, w/o refine) on YTB-VOS + COCO + ImageNet-VID/DET,
# then evaluate every snapshot on VOT2018.
#
# Usage: bash run.sh   (from experiments/siammask_base)

ROOT=`git rev-parse --show-toplevel`
export PYTHONPATH=$ROOT:$PYTHONPATH

mkdir -p logs

CUDA_VISIBLE_DEVICES=0,1,2,3 python -u $ROOT/tools/train_siammask.py \
    --config=config.json -b 64 \
    -j 20 \
    --epochs 20 \
    --log logs/log.txt \
    2>&1 | tee logs/train.log

# test all snapshots, one GPU per snapshot
gpu=4
start=1
end=20
dataset=VOT2018

for i in $(seq $start $end)
do
    CUDA_VISIBLE_DEVICES=$((i % gpu)) python -u $ROOT/tools/test.py \
        --config config.json \
        --resume snapshot/checkpoint_e$i.pth \
        --dataset $dataset \
        --log logs/test_$dataset_e$i.log 2>&1 | tee logs/test_e$i.log &
    if [ $((i % gpu)) -eq 0 ]; then
        wait
    fi
done
wait

# collect the results
python $ROOT/tools/eval.py --dataset $dataset --num 20 --tracker_prefix C --result_dir ./test/$dataset 2>&1 | tee logs/eval_test_$dataset.log
