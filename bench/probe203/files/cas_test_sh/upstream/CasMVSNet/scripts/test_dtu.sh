#!/usr/bin/env bash
# usage: bash scripts/test_dtu.sh ./checkpoints/casmvsnet/model_000015.ckpt [extra args]
TESTPATH="data/DTU/dtu_test_all"
TESTLIST="lists/dtu/test.txt"
CKPT_FILE=$1
OUTDIR=${OUTDIR:-./outputs/dtu_gipuma}

# fusibile: https://github.com/YoYo000/fusibile, build with `cmake . && make` (needs nvcc)
FUSIBILE_EXE_PATH=${FUSIBILE_EXE_PATH:-"../fusibile/fusibile"}

export CUDA_VISIBLE_DEVICES=0

python test.py --dataset=general_eval --batch_size=1 --testpath=$TESTPATH --testlist=$TESTLIST \
    --loadckpt $CKPT_FILE --outdir $OUTDIR --interval_scale 1.06 \
    --ndepths "48,32,8" --depth_inter_r "4,2,1" --max_h 1152 --max_w 1600 \
    --filter_method gipuma --fusibile_exe_path $FUSIBILE_EXE_PATH \
    --prob_threshold 0.9 --disp_threshold 0.25 --num_consistent 4 ${@:2}
