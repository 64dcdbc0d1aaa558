#!/bin/bash
# Run script
# Settings of training & test for different tasks.
#
#   ./train.sh DIS 0,1,2,3,4,5,6,7          # torchrun, 8 GPUs
#   ./train.sh Matting 0,1 --accelerate     # accelerate + fp16
#   ./train.sh General                      # all visible GPUs
method="$1"
devices="$2"
launcher="${3:---torchrun}"

task=$(python3 config.py --print_task)
case "${task}" in
    'DIS5K') epochs=500 && val_last=50 && step=5 ;;
    'COD') epochs=150 && val_last=50 && step=5 ;;
    'HRSOD') epochs=150 && val_last=50 && step=5 ;;
    'General') epochs=250 && val_last=50 && step=5 ;;
    'General-2K') epochs=250 && val_last=30 && step=2 ;;
    'Matting') epochs=150 && val_last=50 && step=5 ;;
    *) echo "unknown task ${task}" >&2; exit 1 ;;
esac
testsets=NO     # Non-existing folder to skip.
# testsets=TE-COD10K   # for COD

# Train
if [ -z "${devices}" ]; then
    # default: every GPU on the node
    devices=$(nvidia-smi --query-gpu=index --format=csv,noheader | paste -sd, -)
fi
nproc_per_node=$(echo ${devices%%,} | grep -o "," | wc -l)
nproc_per_node=$((nproc_per_node + 1))

to_be_distributed=`echo ${nproc_per_node} | awk '{if($e > 1) print "True"; else print "False";}'`

echo Training started at $(date)
echo "devices=${devices} nproc_per_node=${nproc_per_node} distributed=${to_be_distributed}"

export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
export NCCL_P2P_DISABLE=0
export NCCL_IB_DISABLE=1
export NCCL_DEBUG=WARN
export OMP_NUM_THREADS=4

if [ "${launcher}" = "--accelerate" ]; then
    CUDA_VISIBLE_DEVICES="${devices}" \
    accelerate launch --multi_gpu --num_processes ${nproc_per_node} --mixed_precision fp16 \
        train.py --ckpt_dir ckpt/${method} --epochs ${epochs} \
        --testsets ${testsets} \
        --dist False --use_accelerate
else
    if [ ${to_be_distributed} == "True" ]
    then
        # Adapt the nproc_per_node by the number of GPUs. Give 8989 as the default value of master_port.
        echo "Multi-GPU mode received..."
        CUDA_VISIBLE_DEVICES=${devices} \
        torchrun --standalone --nproc_per_node ${nproc_per_node} \
        train.py --ckpt_dir ckpt/${method} --epochs ${epochs} \
            --testsets ${testsets} \
            --dist ${to_be_distributed}
    else
        echo "Single-GPU mode received..."
        CUDA_VISIBLE_DEVICES=${devices%%,*} \
        python train.py --ckpt_dir ckpt/${method} --epochs ${epochs} \
            --testsets ${testsets} \
            --dist ${to_be_distributed} \
            --resume xx/xx-epoch_244.pth
    fi
fi

echo Training finished at $(date)

# Test the last `val_last` checkpoints on a single GPU.
test_device=$(echo ${devices} | cut -d, -f1)
CUDA_VISIBLE_DEVICES=${test_device} python inference.py --pred_root preds-${method} --ckpt_folder ckpt/${method} \
    --testsets ${testsets} --epochs ${epochs} --val_last ${val_last} --step ${step}

nvidia-smi --query-gpu=index,memory.used --format=csv > ckpt/${method}/gpu_mem_after_test.csv
echo Testing finished at $(date)
