#!/bin/bash
# Train SkexGen on DeepCAD data (one GPU per stage).
# Usage: bash scripts/train.sh <gpu_index>
GPU=${1:-0}

### Train the sketch branch ###
python train.py --data data/cad_data/train_deduplicate_s.pkl \
                --invalid data/cad_data/train_invalid.pkl \
                --output proj_log/exp_sketch \
                --batchsize 256 --device ${GPU} --mode sketch

### Train the extrude branch ###
python train.py --data data/cad_data/train_deduplicate_e.pkl \
                --invalid data/cad_data/train_invalid.pkl \
                --output proj_log/exp_extrude \
                --batchsize 256 --device ${GPU} --mode extrude

### Extract codes ###
python sample.py --sketch_weight proj_log/exp_sketch/sketch_dec_epoch_300.pt \
                 --ext_weight proj_log/exp_extrude/ext_dec_epoch_300.pt \
                 --data data/cad_data/train_deduplicate.pkl \
                 --invalid data/cad_data/train_invalid.pkl \
                 --output proj_log/exp_code \
                 --mode encode --device ${GPU}

### Train the code selector ###
python train_code.py --input proj_log/exp_code/train_codes.npy \
                     --output proj_log/exp_code \
                     --batchsize 512 --device ${GPU}
