#!/usr/bin/env bash
# Usage: bash run.sh <method> <in-distribution>
#   method: pretrained | OE | energy_ft | energy
#   e.g.    bash run.sh energy_ft 0     (fine-tune cifar10 with the energy-bounded loss)
methods=(pretrained oe_tune)
data_models=(cifar10_wrn cifar100_wrn)
gpu=0

if [ "$1" = "MSP" ]; then
    for dm in ${data_models[$2]}; do
        for method in ${methods[0]}; do
            # MSP with in-distribution samples as pos
            echo "-----------"${dm}_${method}" MSP score-----------------"
            CUDA_VISIBLE_DEVICES=$gpu python test.py --method_name ${dm}_${method} --num_to_avg 10
        done
    done
    echo "||||||||done with "${dm}_${method}" above |||||||||||||||||||"
elif [ "$1" = "energy" ]; then
    for dm in ${data_models[$2]}; do
        for method in ${methods[0]}; do
            echo "-----------"${dm}_${method}" energy score-----------------"
            CUDA_VISIBLE_DEVICES=$gpu python test.py --method_name ${dm}_${method} --num_to_avg 10 --score energy
        done
    done
    echo "||||||||done with "${dm}_${method}" energy score above |||||||||||||||||||"
elif [ "$1" = "M" ]; then
    for dm in ${data_models[$2]}; do
        for method in ${methods[0]}; do
            for noise in 0.0 0.01 0.005 0.002 0.0014 0.001 0.0005; do
                echo "-----------"${dm}_${method}_M_noise_${noise}"-----------------"
                CUDA_VISIBLE_DEVICES=$gpu python test.py --method_name ${dm}_${method} --num_to_avg 10 --score M --noise $noise -v
            done
        done
    done
    echo "||||||||done with "${dm}_${method}_M" noise above|||||||||||||||||||"
elif [ "$1" = "Odin" ]; then
    for T in 1000 100 10 1; do
        for noise in 0 0.0004 0.0008 0.0014 0.002 0.0024 0.0028 0.0032 0.0038 0.0048; do
            echo "-------T="${T}_$2" noise="$noise"--------"
            CUDA_VISIBLE_DEVICES=$gpu python test.py --method_name $2 --score Odin --num_to_avg 10 --T $T --noise $noise -v
        done
        echo "||||Odin temperature|||||||||||||||||||||||||||||||||||||||||||"
    done
elif [ "$1" = "oe_tune" ] || [ "$1" = "energy_ft" ]; then # fine-tuning
    score=OE
    if [ "$1" = "energy_ft" ]; then # fine-tuning
        score=energy
    fi
    for seed in 1; do
        echo "---Training with dataset: "$3"---model used:"$2"---seed: "$seed"---score used:"$score"---------"
        if [ "$2" = "wrn" ]; then
            python train.py $3 --model $2 --score $score --seed $seed --ngpu 1 
            python test.py --method_name $3_$2_s${seed}_$1 --num_to_avg 10 --score $score
        fi
    done
    echo "||||||||done with training above "$1"|||||||||||||||||||"
elif [ "$1" = "T" ]; then
    for T in 1 2 5 10 20 50 100 200 500 1000; do
        for dm in ${data_models[$2]}; do
            for method in ${methods[0]}; do
                echo "-----------"${dm}_${method}_T_${T}"-----------------"
                CUDA_VISIBLE_DEVICES=$gpu python test.py --method_name ${dm}_${method} --num_to_avg 10 --score energy --T $T
            done
        done
        echo "||||||||done with "${dm}_${method}_T_${T}" above|||||||||||||||||||"
    done
fi
