#!/bin/bash
# Pre-train on static images, then fine-tune on YouTube-VOS + DAVIS and evaluate.
# Default: 4 GPUs (V100 32G / A100), AMP on.

exp="default"
gpu_num="4"
devices="0,1,2,3"

model="aott"
# model="aots"
# model="aotb"
# model="aotl"
# model="r50_deaotl"
# model="swinb_aotl"

export CUDA_VISIBLE_DEVICES=${devices}
export OMP_NUM_THREADS=2
# RTX 3090/4090 boxes without NVLink hang on P2P in the all-reduce
export NCCL_P2P_DISABLE=1
export NCCL_DEBUG=WARN

## Training ##
stage="pre"
python tools/train.py --amp \
	--exp_name ${exp} \
	--stage ${stage} \
	--model ${model} \
	--gpu_num ${gpu_num}

stage="pre_ytb_dav"
python tools/train.py --amp \
	--exp_name ${exp} \
	--stage ${stage} \
	--model ${model} \
	--gpu_num ${gpu_num}

## Evaluation ##
dataset="davis2017"
split="test"
python tools/eval.py --exp_name ${exp} --stage ${stage} --model ${model} \
	--dataset ${dataset} --split ${split} --gpu_num ${gpu_num}

dataset="davis2017"
split="val"
python tools/eval.py --exp_name ${exp} --stage ${stage} --model ${model} \
	--dataset ${dataset} --split ${split} --gpu_num ${gpu_num}

dataset="youtubevos2018"
split="val"  # or "val_all_frames"
python tools/eval.py --exp_name ${exp} --stage ${stage} --model ${model} \
	--dataset ${dataset} --split ${split} --gpu_num ${gpu_num}

# single-GPU speed test with AMP (reported FPS in the paper uses one V100)
CUDA_VISIBLE_DEVICES=0 python tools/eval.py --exp_name ${exp} --stage ${stage} --model ${model} \
	--dataset davis2017 --split val --gpu_num 1 --amp
