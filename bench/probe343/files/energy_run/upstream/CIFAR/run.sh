#!/bin/bash
# Usage:
#   bash run.sh <score> <data_model_index>
#   score: MSP | energy | M | Odin | energy_ft | OE
#   data_model_index: 0 = cifar10_wrn, 1 = cifar100_wrn
#
# e.g. `bash run.sh energy 0` evaluates the pretrained CIFAR-10 WRN with the
# energy score; `bash run.sh energy_ft 1` fine-tunes CIFAR-100 with the energy
# bounded loss. Everything runs on a single GPU, picked with $gpu below.

methods=(pretrained oe_tune)
data_models=(cifar10_wrn cifar100_wrn)
gpu=0
seeds="1 2 8 100 107"

if [ "$1" = "MSP" ]; then
    for dm in ${data_models[$2]}; do
        for method in ${methods[0]}; do
            # MSP with in-distribution samples as pos
            echo "-----------"${dm}_${method}" MSP score-----------------"
            CUDA_VISIBLE_DEVICES=$gpu python test.py --method_name ${dm}_${method} --num_to_avg 10 --score MSP
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
        for noise in 0 0.0004 0.0008 0.0014 0.002 0.0024 0.005 0.01 0.05 0.1 0.2; do
            echo "-------T=${T}_$2 odin noise=$noise-------------"
            CUDA_VISIBLE_DEVICES=$gpu python test.py --method_name $2 --score Odin --num_to_avg 10 --T $T --noise $noise -v
        done
    done
elif [ "$1" = "energy_ft" ]; then # fine-tuning
    score=energy
    if [ "$2" = "0" ]; then
        m_out=-5
        m_in=-23
    elif [ "$2" = "1" ]; then
        m_out=-5
        m_in=-27
    fi
    echo "-----------energy_ft_${data_models[$2]} m_in=$m_in m_out=$m_out-----------------"
    for seed in ${seeds}; do
        CUDA_VISIBLE_DEVICES=$gpu python train.py ${data_models[$2]:0:-4} --model wrn --score ${score} --seed ${seed} \
            --m_in ${m_in} --m_out ${m_out} --learning_rate 0.001 --epochs 10
        CUDA_VISIBLE_DEVICES=$gpu python test.py --method_name ${data_models[$2]}_s${seed}_energy_ft --num_to_avg 10 --score energy
    done
elif [ "$1" = "OE" ]; then # fine-tuning with outlier exposure
    for seed in ${seeds}; do
        CUDA_VISIBLE_DEVICES=$gpu python train.py ${data_models[$2]:0:-4} --model wrn --score OE --seed ${seed}
        CUDA_VISIBLE_DEVICES=$gpu python test.py --method_name ${data_models[$2]}_s${seed}_oe_tune --num_to_avg 10 --score MSP
    done
fi
