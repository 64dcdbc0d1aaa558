#! /bin/bash
#
# hFT-Transformer training (MAESTRO v3 / MAPS)
#   usage: ./training/run_train.sh [maestro|maps]
#
# Tested on a single A100 (40GB). With -amp the batch of 8 fits on a 24GB card.

CORPUS=${1:-maestro}

export CUDA_VISIBLE_DEVICES=0
DEVICE=cuda
export OMP_NUM_THREADS=8

if [ "$CORPUS" = "maestro" ]; then
    CKPT=./checkpoint/MAESTRO-V3
    python3 training/m_training.py \
        -d_out ${CKPT} \
        -d_dataset ./corpus/MAESTRO-V3/dataset \
        -n_div_train 4 -n_div_valid 1 -n_div_test 1 \
        -n_slice 16 -epoch 50 -batch 8 -lr 0.0001 \
        -cnn_channel 4 -cnn_kernel 5 \
        -hid_dim 256 -pf_dim 512 \
        -enc_layer 3 -dec_layer 3 -enc_head 4 -dec_head 4 \
        -dropout 0.1 -valid_test -v_seed \
        -weight_A 1.0 -weight_B 1.0 \
        -device ${DEVICE} -amp \
        2>&1 | tee ${CKPT}/train.log
elif [ "$CORPUS" = "maps" ]; then
    CKPT=./checkpoint/MAPS
    python3 training/m_training.py \
        -d_out ${CKPT} \
        -d_dataset ./corpus/MAPS/dataset \
        -n_div_train 1 -n_div_valid 1 -n_div_test 1 \
        -n_slice 16 -epoch 20 -batch 8 -lr 0.0001 \
        -cnn_channel 4 -cnn_kernel 5 \
        -hid_dim 256 -pf_dim 512 \
        -enc_layer 3 -dec_layer 3 -enc_head 4 -dec_head 4 \
        -dropout 0.1 -v_seed \
        -weight_A 1.0 -weight_B 1.0 \
        -device ${DEVICE} \
        2>&1 | tee ${CKPT}/train.log
else
    echo "unknown corpus: $CORPUS"
    exit 1
fi

# quick sanity check that the checkpoint loads on the GPU
python3 -c "import torch; m = torch.load('${CKPT}/best_model.pkl', map_location='${DEVICE}'); print(type(m))"
