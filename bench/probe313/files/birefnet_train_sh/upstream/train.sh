#!/bin/bash
# Run script
# Settings of training & test for different tasks.
#   sh train.sh <method_name> <gpu_ids> [master_port] [gpu_id_for_test]
#   e.g. sh train.sh BiRefNet_COD 0,1,2,3,4,5,6,7
method="$1"
task=$(python3 config.py)
case "${task}" in
    'DIS5K') epochs=500 && val_last=50 && step=5 ;;
    'COD') epochs=150 && val_last=50 && step=5 ;;
    'HRSOD') epochs=150 && val_last=50 && step=5 ;;
    'General') epochs=250 && val_last=50 && step=2 ;;
    'General-2K') epochs=250 && val_last=30 && step=2 ;;
    'Matting') epochs=100 && val_last=30 && step=2 ;;
esac
testsets=NO     # Non-existing folder to skip.
# testsets=TE-COD10K   # for COD

# Train
devices=$2
nproc_per_node=$(echo ${devices%%,} | grep -o "," | wc -l)

to_be_distributed=`echo ${nproc_per_node} | awk '{if($e > 0) print "True"; else print "False";}'`

# long DIS5K epochs at 1024x1024 can exceed the default 10-min collective timeout on slow disks
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1

echo Training started at $(date)
if [ ${to_be_distributed} == "True" ]
then
    # Adapt the nproc_per_node by the number of GPUs. Give 8989 as the default value of master_port.
    echo "Multi-GPU mode received..."
    CUDA_VISIBLE_DEVICES=${devices} \
    torchrun --nproc_per_node $((nproc_per_node+1)) --master_port=${3:-8989} \
    train.py --ckpt_dir ckpt/${method} --epochs ${epochs} \
        --testsets ${testsets} \
        --dist ${to_be_distributed}
else
    echo "Single-GPU mode received..."
    CUDA_VISIBLE_DEVICES=${devices} python train.py --ckpt_dir ckpt/${method} --epochs ${epochs} \
        --testsets ${testsets} \
        --dist ${to_be_distributed} \
        --use_accelerate
fi

echo Training finished at $(date)

# Test the saved checkpoints on one GPU
devices_test=${4:-0}
CUDA_VISIBLE_DEVICES=${devices_test} python inference.py --pred_root e_preds --ckpt_folder ckpt/${method}
echo Inference finished at $(date)
