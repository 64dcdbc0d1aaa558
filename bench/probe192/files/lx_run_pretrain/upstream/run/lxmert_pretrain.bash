# The name of experiment
name=lxmert

# Create dirs and make backup
output=snap/pretrain/$name
mkdir -p $output/src
cp -r src/* $output/src/
cp $0 $output/run.bash

# Pre-training on 4 GPUs (4 x Titan V 12GB with --fp16, or 4 x V100 without).
# usage: bash run/lxmert_pretrain.bash 0,1,2,3 [--fp16] [--tiny]
export NCCL_DEBUG=INFO
CUDA_VISIBLE_DEVICES=$1 PYTHONPATH=$PYTHONPATH:./src \
    python src/pretrain/lxmert_pretrain.py \
    --taskMaskLM --taskObjPredict --taskMatched --taskQA \
    --visualLosses obj,attr,feat \
    --wordMaskRate 0.15 --objMaskRate 0.15 \
    --train mscoco_train,mscoco_nominival,vgnococo --valid mscoco_minival \
    --llayers 9 --xlayers 5 --rlayers 5 \
    --fromScratch \
    --batchSize 256 --optim bert --lr 1e-4 --epochs 20 \
    --tqdm --output $output --multiGPU ${@:2}
