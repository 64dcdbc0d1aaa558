#!/bin/sh
PARTITION=Segmentation

GPU_ID=0,1,2,3
NUM_GPU=4

dataset=pascal # pascal coco
exp_name=split0

arch=BAM
net=resnet50 # vgg resnet50

exp_dir=exp/${dataset}/${arch}/${exp_name}/${net}
snapshot_dir=${exp_dir}/snapshot
result_dir=${exp_dir}/result
config=config/${dataset}/${dataset}_${exp_name}_${net}.yaml
mkdir -p ${snapshot_dir} ${result_dir}
now=$(date +"%Y%m%d_%H%M%S")
cp train.sh train.py ${config} ${exp_dir}

echo ${arch}
echo ${config}

# NCCL tweaks for our PCIe-only 4x RTX 2080Ti box
export NCCL_P2P_DISABLE=1
export NCCL_DEBUG=WARN
export OMP_NUM_THREADS=4

CUDA_VISIBLE_DEVICES=${GPU_ID} python3 -m torch.distributed.launch --nproc_per_node=${NUM_GPU} --master_port=1234 train.py \
        --config=${config} \
        --arch=${arch} \
        --viz \
        2>&1 | tee ${result_dir}/train-$now.log
