#!/bin/bash
# Train SGRNet on DESOBA.
# Usage: bash script/SGRNet_train.sh <gpu index>
batchs=1
GPU=$1
lr=0.0002
loadSize=256
fineSize=256
L1=100
model=SGRNet
G='RESNEXT18'
ngf=32

L_shadowrecons=10
L_imagerecons=10
L_GAN=0.1

#####network design
DISPLAY_PORT=8002
D='pixel'
lr_D=0.0002

#####datasets
datasetmode=ShadowGenerationDataset
dataroot='../DESOBA_DATASET/'
shadowimage_path=${dataroot}'/ShadowImage'
shadowfree_path=${dataroot}'/DeshadowedImage'
new_mask_path=${dataroot}'/ShadowMask'
param_path=${dataroot}'/SOBA_params'
instance_path=${dataroot}'/InstanceMask'

checkpoint='../TrainedModels/'

#### use resnet as backbone
model_name=SelfAttention
NAME="${model_name}_G${G}_C${ngf}_D${D}_lrD${lr_D}"

OTHER="--save_epoch_freq 100 --niter 50 --niter_decay 100"

CMD="python ../train.py --loadSize ${loadSize} \
    --name ${NAME} \
    --dataroot  ${dataroot}\
    --checkpoints_dir ${checkpoint} \
    --fineSize $fineSize --model $model\
    --batch_size $batchs --display_port ${DISPLAY_PORT}
    --display_server http://localhost
    --phase train  --gpu_ids 0 --lr ${lr} \
    --lambda_M1 $L1 --lambda_M2 $L1 \
    --netG $G\
    --ngf $ngf
    --netD $D
    --lr_D $lr_D
    --lambda_I1 $L_imagerecons
    --lambda_P1 $L_shadowrecons
    --lambda_GAN $L_GAN
    --dataset_mode $datasetmode\
    --mask_train $new_mask_path\
    --param_path $param_path\
    --instance_path $instance_path\
    --shadowimg_path $shadowimage_path\
    --shadowfree_path $shadowfree_path\
    $OTHER
"
echo $CMD
if [ ! -z "$GPU" ]; then
    export CUDA_VISIBLE_DEVICES=${GPU}
fi
eval $CMD
