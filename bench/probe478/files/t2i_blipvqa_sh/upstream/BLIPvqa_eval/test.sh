#!/bin/bash
# BLIP-VQA evaluation for the attribute-binding categories (color / shape / texture).
# Expects generated images in ${out_dir}/samples/ named "<prompt>_<idx>.png".

export project_dir="BLIPvqa_eval/"
cd $project_dir

out_dir="../examples/"
CUDA_VISIBLE_DEVICES=0 python BLIP_vqa.py --out_dir=$out_dir
