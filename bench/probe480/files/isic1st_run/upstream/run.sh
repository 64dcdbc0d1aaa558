#!/bin/bash
# Training commands for the 18 models of the final ensemble (subset shown).
# Each line trains 5 folds; pass several GPU ids to train with DataParallel.
# Tested on 4x V100 32GB (DGX-1). 896/1024 px runs need all four cards.

DATA_DIR=/raid/
MODEL_DIR=./weights
LOG_DIR=./logs

python train.py --kernel-type 9c_b4ns_2e_896_ext_15ep --data-dir ${DATA_DIR} --data-folder 1024 --image-size 896 \
    --enet-type efficientnet_b4 --n-epochs 15 --batch-size 8 --init-lr 2e-5 --use-amp --CUDA_VISIBLE_DEVICES 0,1,2,3

python train.py --kernel-type 9c_b4ns_448_ext_15ep-newfold --data-dir ${DATA_DIR} --data-folder 512 --image-size 448 \
    --enet-type tf_efficientnet_b4_ns --n-epochs 15 --use-amp --CUDA_VISIBLE_DEVICES 0,1

python train.py --kernel-type 9c_b4ns_768_640_ext_15ep --data-dir ${DATA_DIR} --data-folder 768 --image-size 640 \
    --enet-type tf_efficientnet_b4_ns --n-epochs 15 --use-amp --CUDA_VISIBLE_DEVICES 0,1,2,3

python train.py --kernel-type 9c_b5ns_1.5e_640_ext_15ep --data-dir ${DATA_DIR} --data-folder 768 --image-size 640 \
    --enet-type tf_efficientnet_b5_ns --n-epochs 15 --init-lr 1.5e-5 --use-amp --CUDA_VISIBLE_DEVICES 0,1,2,3

python train.py --kernel-type 9c_meta_b3_768_512_ext_18ep --data-dir ${DATA_DIR} --data-folder 768 --image-size 512 \
    --enet-type efficientnet_b3 --n-epochs 18 --use-meta --use-amp --CUDA_VISIBLE_DEVICES 0,1

python train.py --kernel-type 4c_b5ns_1.5e_640_ext_15ep --data-dir ${DATA_DIR} --data-folder 768 --image-size 640 \
    --enet-type tf_efficientnet_b5_ns --n-epochs 15 --out-dim 4 --init-lr 1.5e-5 --use-amp --CUDA_VISIBLE_DEVICES 0,1,2,3

python train.py --kernel-type 9c_se_x101_640_ext_15ep --data-dir ${DATA_DIR} --data-folder 768 --image-size 640 \
    --enet-type seresnext101 --n-epochs 15 --use-amp --CUDA_VISIBLE_DEVICES 0,1,2,3

python train.py --kernel-type 9c_nest101_2e_640_ext_15ep --data-dir ${DATA_DIR} --data-folder 768 --image-size 640 \
    --enet-type resnest101 --n-epochs 15 --init-lr 2e-5 --use-amp --CUDA_VISIBLE_DEVICES 0,1,2,3

# out-of-fold evaluation and test prediction
for KT in 9c_b4ns_448_ext_15ep-newfold 9c_meta_b3_768_512_ext_18ep; do
    python evaluate.py --kernel-type ${KT} --data-dir ${DATA_DIR} --data-folder 512 --image-size 448 \
        --enet-type tf_efficientnet_b4_ns --model-dir ${MODEL_DIR} --log-dir ${LOG_DIR}
    python predict.py --kernel-type ${KT} --data-dir ${DATA_DIR} --data-folder 512 --image-size 448 \
        --enet-type tf_efficientnet_b4_ns --model-dir ${MODEL_DIR}
done
