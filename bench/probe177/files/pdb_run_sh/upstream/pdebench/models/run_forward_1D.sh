#!/bin/bash
## 1D forward baselines (FNO / U-Net) for the PDEBench 1D datasets.
## Four independent jobs at a time, one per GPU; each waits for its own slot.
## 'model_name' = 'FNO' or 'Unet'

DATA=../data/1D
LOGDIR=./logs_1D
mkdir -p ${LOGDIR}

## Advection
CUDA_VISIBLE_DEVICES='0' python3 train_models_forward.py +args=config_Adv.yaml ++args.filename='1D_Advection_Sols_beta0.1.hdf5' ++args.model_name='FNO' ++args.data_path=${DATA}/Advection/Train/ > ${LOGDIR}/adv_b0.1_fno.log 2>&1 &
CUDA_VISIBLE_DEVICES='1' python3 train_models_forward.py +args=config_Adv.yaml ++args.filename='1D_Advection_Sols_beta0.4.hdf5' ++args.model_name='FNO' ++args.data_path=${DATA}/Advection/Train/ > ${LOGDIR}/adv_b0.4_fno.log 2>&1 &
CUDA_VISIBLE_DEVICES='2' python3 train_models_forward.py +args=config_Adv.yaml ++args.filename='1D_Advection_Sols_beta1.0.hdf5' ++args.model_name='FNO' ++args.data_path=${DATA}/Advection/Train/ > ${LOGDIR}/adv_b1.0_fno.log 2>&1 &
CUDA_VISIBLE_DEVICES='3' python3 train_models_forward.py +args=config_Adv.yaml ++args.filename='1D_Advection_Sols_beta4.0.hdf5' ++args.model_name='FNO' ++args.data_path=${DATA}/Advection/Train/ > ${LOGDIR}/adv_b4.0_fno.log 2>&1 &
wait

## Burgers
CUDA_VISIBLE_DEVICES='0' python3 train_models_forward.py +args=config_Bgs.yaml ++args.filename='1D_Burgers_Sols_Nu0.001.hdf5' ++args.model_name='FNO' ++args.data_path=${DATA}/Burgers/Train/ > ${LOGDIR}/bgs_nu0.001_fno.log 2>&1 &
CUDA_VISIBLE_DEVICES='1' python3 train_models_forward.py +args=config_Bgs.yaml ++args.filename='1D_Burgers_Sols_Nu0.01.hdf5' ++args.model_name='FNO' ++args.data_path=${DATA}/Burgers/Train/ > ${LOGDIR}/bgs_nu0.01_fno.log 2>&1 &
CUDA_VISIBLE_DEVICES='2' python3 train_models_forward.py +args=config_Bgs.yaml ++args.filename='1D_Burgers_Sols_Nu0.1.hdf5' ++args.model_name='FNO' ++args.data_path=${DATA}/Burgers/Train/ > ${LOGDIR}/bgs_nu0.1_fno.log 2>&1 &
CUDA_VISIBLE_DEVICES='3' python3 train_models_forward.py +args=config_Bgs.yaml ++args.filename='1D_Burgers_Sols_Nu1.0.hdf5' ++args.model_name='FNO' ++args.data_path=${DATA}/Burgers/Train/ > ${LOGDIR}/bgs_nu1.0_fno.log 2>&1 &
wait

## U-Net with pushforward on the same Burgers sets
CUDA_VISIBLE_DEVICES='0' python3 train_models_forward.py +args=config_Bgs.yaml ++args.filename='1D_Burgers_Sols_Nu0.001.hdf5' ++args.model_name='Unet' ++args.pushforward=True ++args.unroll_step=20 ++args.data_path=${DATA}/Burgers/Train/ > ${LOGDIR}/bgs_nu0.001_unet.log 2>&1 &
CUDA_VISIBLE_DEVICES='1' python3 train_models_forward.py +args=config_Bgs.yaml ++args.filename='1D_Burgers_Sols_Nu0.01.hdf5' ++args.model_name='Unet' ++args.pushforward=True ++args.unroll_step=20 ++args.data_path=${DATA}/Burgers/Train/ > ${LOGDIR}/bgs_nu0.01_unet.log 2>&1 &
wait

## Evaluation of the trained FNOs (single GPU is enough)
export CUDA_VISIBLE_DEVICES=0
for beta in 0.1 0.4 1.0 4.0; do
    python3 train_models_forward.py +args=config_Adv.yaml ++args.filename="1D_Advection_Sols_beta${beta}.hdf5" ++args.model_name='FNO' ++args.if_training=False ++args.data_path=${DATA}/Advection/Train/
done
