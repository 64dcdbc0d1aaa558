#!/bin/bash
# ============ Download dataset ============
echo "------ Download metadata ------"
mkdir -p "./metadata"

# Video list csv
wget -O "./metadata/eval_segments.csv" "http://storage.googleapis.com/us_audioset/youtube_corpus/v1/csv/eval_segments.csv"
wget -O "./metadata/balanced_train_segments.csv" "http://storage.googleapis.com/us_audioset/youtube_corpus/v1/csv/balanced_train_segments.csv"
wget -O "./metadata/unbalanced_train_segments.csv" "http://storage.googleapis.com/us_audioset/youtube_corpus/v1/csv/unbalanced_train_segments.csv"

# Class labels indices
wget -O "./metadata/class_labels_indices.csv" "http://storage.googleapis.com/us_audioset/youtube_corpus/v1/csv/class_labels_indices.csv"

# Quality of counts
wget -O "./metadata/qa_true_counts.csv" "http://storage.googleapis.com/us_audioset/youtube_corpus/v1/qa/qa_true_counts.csv"

echo "Download metadata to ./metadata"

# ============ Download and pack waveforms ============
DATASET_DIR="/mnt/cephfs_new_wj/mlnlp/qiuqiangkong/datasets/audioset201906"
WORKSPACE="/mnt/cephfs_new_wj/mlnlp/qiuqiangkong/workspaces/pub_audioset_tagging_cnn"

# Pack waveform to hdf5
python3 utils/dataset.py pack_waveforms_to_hdf5 \
    --csv_path=$DATASET_DIR"/metadata/balanced_train_segments.csv" \
    --audios_dir=$DATASET_DIR"/audios/balanced_train_segments" \
    --waveforms_hdf5_path=$WORKSPACE"/hdf5s/waveforms/balanced_train.h5"

python3 utils/dataset.py pack_waveforms_to_hdf5 \
    --csv_path=$DATASET_DIR"/metadata/eval_segments.csv" \
    --audios_dir=$DATASET_DIR"/audios/eval_segments" \
    --waveforms_hdf5_path=$WORKSPACE"/hdf5s/waveforms/eval.h5"

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

for IDX in {00..40}; do
    echo $IDX
    python3 utils/create_indexes.py create_indexes \
        --waveforms_hdf5_path=$WORKSPACE"/hdf5s/waveforms/unbalanced_train/unbalanced_train_part$IDX.h5" \
        --indexes_hdf5_path=$WORKSPACE"/hdf5s/indexes/unbalanced_train/unbalanced_train_part$IDX.h5"
done

python3 utils/create_indexes.py combine_full_indexes \
    --indexes_hdf5s_dir=$WORKSPACE"/hdf5s/indexes/unbalanced_train" \
    --full_indexes_hdf5_path=$WORKSPACE"/hdf5s/indexes/full_train.h5"

# ============ Blacklist for training (optional) ============
# Audios in the balck list will not be used in training
python3 utils/create_black_list.py dcase2017task4 \
    --workspace=$WORKSPACE

# ============ Train & Inference ============
CUDA_VISIBLE_DEVICES=0 python3 pytorch/main.py train \
    --workspace=$WORKSPACE \
    --data_type='full_train' \
    --window_size=1024 \
    --hop_size=320 \
    --mel_bins=64 \
    --fmin=50 \
    --fmax=14000 \
    --model_type='Cnn14' \
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

# ============ Fine-tune on a species subset ============
CUDA_VISIBLE_DEVICES=1 python3 pytorch/finetune_template.py train \
    --workspace=$WORKSPACE"/species" \
    --audio_dir=$DATASET_DIR"/species/clips" \
    --train_csv=$DATASET_DIR"/species/train.csv" \
    --valid_csv=$DATASET_DIR"/species/valid.csv" \
    --species_list=$DATASET_DIR"/species/species.txt" \
    --pretrained_checkpoint_path="Cnn14_mAP=0.431.pth" \
    --freeze_base \
    --cuda

# Inference
MODEL_TYPE="Cnn14_DecisionLevelAtt"
CHECKPOINT_PATH="Cnn14_DecisionLevelAtt_mAP=0.425.pth"
CUDA_VISIBLE_DEVICES=0 python3 pytorch/inference.py sound_event_detection \
    --model_type=$MODEL_TYPE \
    --checkpoint_path=$CHECKPOINT_PATH \
    --audio_path='resources/R9_ZSCveAHg_7s.wav' \
    --cuda
