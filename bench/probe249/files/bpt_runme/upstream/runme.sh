#!/bin/bash
# ============ Piano transcription: data preparation, training and evaluation ============
# Reproduces the high-resolution piano transcription results on MAESTRO v2.0.0.
# All training commands assume one 12GB+ GPU.

DATASET_DIR="./datasets/maestro/dataset_root"
WORKSPACE="./workspaces/piano_transcription"

# ------ 1. Pack audio and MIDI into hdf5 files (CPU only) ------
python3 utils/features.py pack_maestro_dataset_to_hdf5 --dataset_dir=$DATASET_DIR --workspace=$WORKSPACE

# ------ 2. Train the note transcription model ------
CUDA_VISIBLE_DEVICES=0 python3 pytorch/main.py train --workspace=$WORKSPACE --model_type='Regress_onset_offset_frame_velocity_CRNN' --loss_type='regress_onset_offset_frame_velocity_bce' --augmentation='none' --max_note_shift=0 --batch_size=12 --learning_rate=5e-4 --reduce_iteration=10000 --resume_iteration=0 --early_stop=300000 --cuda

# ------ 3. Train the pedal transcription model ------
CUDA_VISIBLE_DEVICES=1 python3 pytorch/main.py train --workspace=$WORKSPACE --model_type='Regress_pedal_CRNN' --loss_type='regress_pedal_bce' --augmentation='none' --max_note_shift=0 --batch_size=12 --learning_rate=5e-4 --reduce_iteration=10000 --resume_iteration=0 --early_stop=300000 --cuda

# ------ 4. Combine the note and pedal models into one checkpoint (CPU only) ------
NOTE_CHECKPOINT_PATH="$WORKSPACE/checkpoints/main/Regress_onset_offset_frame_velocity_CRNN/loss_type=regress_onset_offset_frame_velocity_bce/augmentation=none/max_note_shift=0/batch_size=12/300000_iterations.pth"
PEDAL_CHECKPOINT_PATH="$WORKSPACE/checkpoints/main/Regress_pedal_CRNN/loss_type=regress_pedal_bce/augmentation=none/max_note_shift=0/batch_size=12/300000_iterations.pth"
NOTE_PEDAL_CHECKPOINT_PATH="$WORKSPACE/checkpoints/main/note_pedal.pth"
python3 pytorch/combine_note_and_pedal_models.py --note_checkpoint_path=$NOTE_CHECKPOINT_PATH --pedal_checkpoint_path=$PEDAL_CHECKPOINT_PATH --output_checkpoint_path=$NOTE_PEDAL_CHECKPOINT_PATH

# ------ 5. Inference probabilities on the test split ------
CUDA_VISIBLE_DEVICES=0 python3 pytorch/calculate_score_for_paper.py infer_prob --workspace=$WORKSPACE --model_type='Note_pedal' --checkpoint_path=$NOTE_PEDAL_CHECKPOINT_PATH --augmentation='none' --dataset='maestro' --split='test' --cuda

# ------ 6. Calculate metrics (CPU only) ------
python3 pytorch/calculate_score_for_paper.py calculate_metrics --workspace=$WORKSPACE --model_type='Note_pedal' --augmentation='none' --dataset='maestro' --split='test'

# ------ 7. Transcribe a single recording ------
CUDA_VISIBLE_DEVICES=0 python3 pytorch/inference.py --model_type='Note_pedal' --checkpoint_path=$NOTE_PEDAL_CHECKPOINT_PATH --post_processor_type='regression' --audio_path='resources/cut_liszt.mp3' --cuda

# ------ 8. Plot training statistics ------
python3 utils/plot_for_paper.py plot --workspace=$WORKSPACE
