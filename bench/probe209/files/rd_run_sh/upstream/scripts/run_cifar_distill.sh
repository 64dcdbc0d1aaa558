#!/bin/bash
# sample scripts for running the distillation code
# use resnet32x4 and resnet8x4 as an example
#
# All runs below were done on a single GPU (TITAN V / 2080Ti). Pass GPU=<id> to pick the card,
# e.g.  GPU=3 bash scripts/run_cifar_distill.sh

GPU=${GPU:-0}
export CUDA_VISIBLE_DEVICES=${GPU}
export OMP_NUM_THREADS=4

TEACHER=./save/models/resnet32x4_vanilla/ckpt_epoch_240.pth
STUDENT=resnet8x4
TRIAL=${TRIAL:-1}

# fetch the pretrained teachers first (see scripts/fetch_pretrained_teachers.sh)
if [ ! -f "${TEACHER}" ]; then
    echo "teacher checkpoint ${TEACHER} not found, run scripts/fetch_pretrained_teachers.sh" >&2
    exit 1
fi

nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv

# kd
python train_student.py --path_t ${TEACHER} --distill kd --model_s ${STUDENT} -r 0.1 -a 0.9 -b 0 --trial ${TRIAL}
# FitNet
python train_student.py --path_t ${TEACHER} --distill hint --model_s ${STUDENT} -a 0 -b 100 --trial ${TRIAL}
# AT
python train_student.py --path_t ${TEACHER} --distill attention --model_s ${STUDENT} -a 0 -b 1000 --trial ${TRIAL}
# SP
python train_student.py --path_t ${TEACHER} --distill similarity --model_s ${STUDENT} -a 0 -b 3000 --trial ${TRIAL}
# CC
python train_student.py --path_t ${TEACHER} --distill correlation --model_s ${STUDENT} -a 0 -b 0.02 --trial ${TRIAL}
# VID
python train_student.py --path_t ${TEACHER} --distill vid --model_s ${STUDENT} -a 0 -b 1 --trial ${TRIAL}
# RKD
python train_student.py --path_t ${TEACHER} --distill rkd --model_s ${STUDENT} -a 0 -b 1 --trial ${TRIAL}
# PKT
python train_student.py --path_t ${TEACHER} --distill pkt --model_s ${STUDENT} -a 0 -b 30000 --trial ${TRIAL}
# AB
python train_student.py --path_t ${TEACHER} --distill abound --model_s ${STUDENT} -a 0 -b 1 --trial ${TRIAL}
# FT
python train_student.py --path_t ${TEACHER} --distill factor --model_s ${STUDENT} -a 0 -b 200 --trial ${TRIAL}
# FSP
python train_student.py --path_t ${TEACHER} --distill fsp --model_s ${STUDENT} -a 0 -b 50 --trial ${TRIAL}
# NST
python train_student.py --path_t ${TEACHER} --distill nst --model_s ${STUDENT} -a 0 -b 50 --trial ${TRIAL}
# CRD
python train_student.py --path_t ${TEACHER} --distill crd --model_s ${STUDENT} -a 0 -b 0.8 --trial ${TRIAL}

# CRD+KD
python train_student.py --path_t ${TEACHER} --distill crd --model_s ${STUDENT} -a 1 -b 0.8 --trial ${TRIAL}
