#!/bin/bash
# Train 4D-GS on all eight D-NeRF synthetic scenes, two GPUs, four scenes each.
# Usage: bash scripts/train_dnerf.sh <expname>

exp_name1=$1

export CUDA_VISIBLE_DEVICES=0&&python train.py -s data/dnerf/lego --port 6068 --expname "$exp_name1/lego" --configs arguments/dnerf/lego.py &
export CUDA_VISIBLE_DEVICES=1&&python train.py -s data/dnerf/bouncingballs --port 6266 --expname "$exp_name1/bouncingballs" --configs arguments/dnerf/bouncingballs.py &
wait
export CUDA_VISIBLE_DEVICES=0&&python train.py -s data/dnerf/jumpingjacks --port 6069 --expname "$exp_name1/jumpingjacks" --configs arguments/dnerf/jumpingjacks.py &
export CUDA_VISIBLE_DEVICES=1&&python train.py -s data/dnerf/trex --port 6070 --expname "$exp_name1/trex" --configs arguments/dnerf/trex.py &
wait
export CUDA_VISIBLE_DEVICES=0&&python train.py -s data/dnerf/mutant --port 6068 --expname "$exp_name1/mutant" --configs arguments/dnerf/mutant.py &
export CUDA_VISIBLE_DEVICES=1&&python train.py -s data/dnerf/standup --port 6066 --expname "$exp_name1/standup" --configs arguments/dnerf/standup.py &
wait
export CUDA_VISIBLE_DEVICES=0&&python train.py -s data/dnerf/hook --port 6069 --expname "$exp_name1/hook" --configs arguments/dnerf/hook.py &
export CUDA_VISIBLE_DEVICES=1&&python train.py -s data/dnerf/hellwarrior --port 6070 --expname "$exp_name1/hellwarrior" --configs arguments/dnerf/hellwarrior.py &
wait
echo "Done"

# render + metrics, one GPU is enough
export CUDA_VISIBLE_DEVICES=0
for scene in lego bouncingballs jumpingjacks trex mutant standup hook hellwarrior; do
    python render.py --model_path "output/$exp_name1/$scene/" --skip_train --configs arguments/dnerf/$scene.py
done
wait
python metrics.py --model_path "output/$exp_name1/lego/" "output/$exp_name1/bouncingballs/" "output/$exp_name1/jumpingjacks/" \
    "output/$exp_name1/trex/" "output/$exp_name1/mutant/" "output/$exp_name1/standup/" "output/$exp_name1/hook/" \
    "output/$exp_name1/hellwarrior/"
echo "Done"
