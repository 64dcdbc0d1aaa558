# find all configs in configs/
config_file=configs/pool_128x128_k5l8_tacos.yaml
# the dir of the saved weight
output_dir=outputs/pool_128x128_k5l8_tacos
# set your gpu id
gpus=0,1
# number of gpus
gpun=2
# please modify it with different value (e.g., 127.0.0.2, 29502) when you run multi mmn task on the same machine
master_addr=127.0.0.3
master_port=29511

# RTX 3090 boxes without NVLink hang in all_gather otherwise
export NCCL_P2P_DISABLE=1

CUDA_VISIBLE_DEVICES=$gpus python -m torch.distributed.launch \
--nproc_per_node=$gpun --master_addr $master_addr --master_port $master_port \
train_net.py --config-file $config_file OUTPUT_DIR $output_dir \
