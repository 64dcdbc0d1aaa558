#!/bin/bash
# ------ Train PANNs on AudioSet (balanced / full) and run SED inference ------
# Dataset & workspace
DATASET_DIR="/home/tiger/datasets/audioset"
WORKSPACE="/home/tiger/workspaces/audioset_tagging"

# ============ Pack waveform and target to hdf5 ============
# Pack evaluation & balanced train subsets
python3 utils/dataset.py pack_waveforms_to_hdf5 \
    --csv_path=$DATASET_DIR"/metadata/balanced_train_segments.csv" \
    --audios_dir=$DATASET_DIR"/audios/balanced_train_segments" \
    --waveforms_hdf5_path=$WORKSPACE"/hdf5s/waveforms/balanced_train.h5"

python3 utils/dataset.py pack_waveforms_to_hdf5 \
    --csv_path=$DATASET_DIR"/metadata/eval_segments.csv" \
    --audios_dir=$DATASET_DIR"/audios/eval_segments" \
    --waveforms_hdf5_path=$WORKSPACE"/hdf5s/waveforms/eval.h5"

# Pack unbalanced training part 00 .. 40 (takes a long time)
for IDX in {00..40}; do
    echo $IDX
    python3 utils/dataset.py pack_waveforms_to_hdf5 \
        --csv_path=$DATASET_DIR"/metadata/unbalanced_partial_csvs/unbalanced_train_segments_part$IDX.csv" \
        --audios_dir=$DATASET_DIR"/audios/unbalanced_train_segments/unbalanced_train_segments_part$IDX" \
        --waveforms_hdf5_path=$WORKSPACE"/hdf5s/waveforms/unbalanced_train/unbalanced_train_part$IDX.h5"
done

# ============ Prepare training indexes ============
python3 utils/create_indexes.py create_indexes \
    --waveforms_hdf5_path=$WORKSPACE"/hdf5s/waveforms/balanced_train.h5" \
    --indexes_hdf5_path=$WORKSPACE"/hdf5s/indexes/balanced_train.h5"

python3 utils/create_indexes.py create_indexes \
    --waveforms_hdf5_path=$WORKSPACE"/hdf5s/waveforms/eval.h5" \
    --indexes_hdf5_path=$WORKSPACE"/hdf5s/indexes/eval.h5"

python3 utils/create_indexes.py combine_full_indexes \
    --indexes_hdf5s_dir=$WORKSPACE"/hdf5s/indexes/unbalanced_train" \
    --full_indexes_hdf5_path=$WORKSPACE"/hdf5s/indexes/full_train.h5"

# ============ Blacklist for training (optional) ============
# python3 utils/dataset.py pack_waveforms_to_hdf5 ...

# ============ Train & Inference ============
# Training on 1 GPU takes ~3 days for 600k iterations on the full set.
CUDA_VISIBLE_DEVICES=0 python3 pytorch/main.py train \
    --workspace=$WORKSPACE \
    --data_type='full_train' \
    --window_size=1024 \
    --hop_size=320 \
    --mel_bins=64 \
    --fmin=50 \
    --fmax=14000 \
    --model_type='Cnn14_DecisionLevelMax' \
    --loss_type='clip_bce' \
    --balanced='balanced' \
    --augmentation='mixup' \
    --batch_size=32 \
    --learning_rate=1e-3 \
    --resume_iteration=0 \
    --early_stop=1000000 \
    --cuda

# Plot statistics
python3 utils/plot_statistics.py plot \
    --dataset_dir=$DATASET_DIR \
    --workspace=$WORKSPACE \
    --select=1_aug

# ------ Inference audio tagging / sound event detection result with pretrained model. ------
MODEL_TYPE="Cnn14_DecisionLevelMax"
CHECKPOINT_PATH="Cnn14_DecisionLevelMax_mAP=0.385.pth"
wget -O $CHECKPOINT_PATH "https://zenodo.org/record/3987831/files/Cnn14_DecisionLevelMax_mAP%3D0.385.pth?download=1"

CUDA_VISIBLE_DEVICES=1 python3 pytorch/inference.py sound_event_detection \
    --model_type=$MODEL_TYPE \
    --checkpoint_path=$CHECKPOINT_PATH \
    --audio_path="resources/R9_ZSCveAHg_7s.wav" \
    --cuda
