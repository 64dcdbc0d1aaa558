#!/bin/bash
# GWNET on the four LargeST subsets. CA does not fit in 24 GB with bs=64 -> use the 80 GB A100 (cuda:1).
python experiments/gwnet/main.py --device cuda:0 --dataset SD --years 2019 --model_name gwnet --seed 2018 --bs 64
python experiments/gwnet/main.py --device cuda:0 --dataset GBA --years 2019 --model_name gwnet --seed 2018 --bs 64
python experiments/gwnet/main.py --device cuda:0 --dataset GLA --years 2019 --model_name gwnet --seed 2018 --bs 32
python experiments/gwnet/main.py --device cuda:1 --dataset CA --years 2019 --model_name gwnet --seed 2018 --bs 16 --num_workers 8 --pin_memory

# test only (re-uses the checkpoint written by the run above)
# python experiments/gwnet/main.py --device cuda:0 --dataset SD --years 2019 --model_name gwnet --seed 2018 --mode test
