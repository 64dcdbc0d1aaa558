#!/bin/bash
# Default setup
# bash run.sh config_name tag map_name_list (arg_list threads_num gpu_list experinments_num)
# e.g. bash run.sh qmix baseline 3s5z_vs_3s6z,corridor epsilon_anneal_time=500000,td_lambda=0.6 2 0,1,2,3 5

config=$1  # qmix
tag=$2
maps=${3:-sc2_2s3z,sc2_3s5z}   # MMM2 left out
args=${4:-}    # ""
threads=${5:-8} # 2
gpus=${6:-0,1,2,3,4,5,6,7}    # 0,1
times=${7:-3}   # 5

maps=(${maps//,/ })
gpus=(${gpus//,/ })
args=(${args//,/ })

if [ ! $config ] || [ ! $tag ]; then
    echo "Please enter the correct command."
    echo "bash run.sh config_name tag map_name_list (arg_list threads_num gpu_list experinments_num)"
    exit 1
fi

echo "CONFIG:" $config
echo "MAP LIST:" ${maps[@]}
echo "THREADS:" $threads
echo "ARGS:"  ${args[@]}
echo "GPU LIST:" ${gpus[@]}
echo "TIMES:" $times

export SC2PATH=${SC2PATH:-"$(pwd)/3rdparty/StarCraftII"}

# run parallel
count=0
for map in "${maps[@]}"; do
    for((i=0;i<times;i++)); do
        gpu=${gpus[$(($count % ${#gpus[@]}))]}
        group="${config}-${map}-${tag}"
        CUDA_VISIBLE_DEVICES="$gpu" python3 src/main.py --config="$config" --env-config=sc2 with env_args.map_name="$map" group="$group" use_cuda=True "${args[@]}" seed="$i" &

        count=$(($count + 1))
        if [ $(($count % $threads)) -eq 0 ]; then
            wait
        fi
        # for random seeds
        sleep $((RANDOM % 60 + 60))
    done
done
wait
