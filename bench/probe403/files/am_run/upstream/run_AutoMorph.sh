#!/bin/bash
# AutoMorph: automated retinal vascular morphology quantification.
# Put the fundus images in ./images and run `sh run_AutoMorph.sh`.
# The results are written to ./Results
#
# Set CUDA_NUMBER to the index of the GPU to use. Leave it empty to run on CPU
# (much slower: roughly 20 s per image instead of 1 s on a single GPU).

CUDA_NUMBER="0"
export CUDA_VISIBLE_DEVICES=${CUDA_NUMBER}
export PYTHONPATH=.:$PYTHONPATH

date
echo "### GPU status ###"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

# STEP 1 IMAGE PREPROCESSING (EXTRA BACKGROUND REMOVE, SQUARE)

echo "### Preprocess Start ###"
cd M0_Preprocess
python EyeQ_process_main.py

# STEP 2 IMAGE QUALITY ASSESSMENT

echo "### Image Quality Assessment ###"

cd ../M1_Retinal_Image_quality_EyePACS
sh test_outside.sh
python merge_quality_assessment.py

# STEP 3 OPTIC DISC & VESSEL & ARTERY/VEIN SEG

echo "### Segmentation Modules ###"

cd ../M2_Vessel_seg
sh test_outside.sh

cd ../M2_Artery_vein
sh test_outside.sh

cd ../M2_lwnet_disc_cup
sh test_outside.sh

# STEP 4 METRIC MEASUREMENT (ZONE B, ZONE C AND WHOLE IMAGE)

echo "### Feature measuring ###"

cd ../M3_feature_zone/retipy/
python create_datasets_disc_centred_B.py
python create_datasets_disc_centred_C.py
python create_datasets_macular_centred_B.py
python create_datasets_macular_centred_C.py

cd ../../M3_feature_whole_pic/retipy/
python create_datasets_macular_centred.py
python create_datasets_disc_centred.py

cd ../../
python csv_merge.py

echo "### Done ###"

date
