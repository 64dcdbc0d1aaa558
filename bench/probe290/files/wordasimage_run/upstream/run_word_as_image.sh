#!/bin/bash
# Word-As-Image for Semantic Typography (SIGGRAPH 2023)
# Runs every letter of every word in the list, one letter at a time on a single GPU.
#   bash run_word_as_image.sh            # uses GPU 0
#   GPU=1 bash run_word_as_image.sh      # uses GPU 1

set -e

USE_WANDB=0 # CHANGE IF YOU WANT WANDB
WANDB_USER="none"
GPU=${GPU:-0}

EXPERIMENT=conformal_0.5_dist_pixel_100_kernel201

CONCEPT="BUNNY"
WORD="BUNNY"
fonts=(KaushanScript-Regular)
for j in "${fonts[@]}"
do
    letter_=("B" "U" "N" "Y")
    SEED=0
    for i in "${letter_[@]}"
    do
        echo "$i"
        font_name=$j
        ARGS="--experiment $EXPERIMENT --optimized_letter ${i} --seed $SEED --font ${font_name} --use_wandb ${USE_WANDB} --wandb_user ${WANDB_USER}"
        CUDA_VISIBLE_DEVICES=${GPU} python code/main.py $ARGS --semantic_concept "${CONCEPT}" --word "${WORD}"
    done
done

# the same for a couple of words from the paper, with a prompt suffix
declare -A words
words=( ["JAZZ"]="JAZZ" ["FROG"]="FROG" ["PARIS"]="PARIS" )
for WORD in "${!words[@]}"
do
    CONCEPT=${words[$WORD]}
    for (( k=0; k<${#WORD}; k++ ))
    do
        LETTER=${WORD:$k:1}
        CUDA_VISIBLE_DEVICES=${GPU} python code/main.py --experiment $EXPERIMENT \
            --optimized_letter ${LETTER} --seed 0 --font KaushanScript-Regular \
            --use_wandb ${USE_WANDB} --wandb_user ${WANDB_USER} \
            --semantic_concept "${CONCEPT}" --prompt_suffix "minimal flat 2d vector. lineal color. trending on artstation" \
            --word "${WORD}"
    done
done
