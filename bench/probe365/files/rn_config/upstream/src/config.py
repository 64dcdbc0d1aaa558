import torch

# Paths and hyper-parameters for RhythmNet on VIPL-HR.
# Edit the *_PATH entries to point at your local copies.

FACE_DATA_DIR = "/content/drive/My Drive/data/rhythmnet/face_video_data/"
HR_DATA_PATH = "/content/drive/My Drive/data/rhythmnet/hr_data/"
TARGET_SIGNAL_DIR = "/content/drive/My Drive/data/rhythmnet/hr_csvs/"
SAVE_CSV_PATH = "/content/drive/My Drive/data/rhythmnet/st_maps_csv/"
ST_MAPS_PATH = "/content/drive/My Drive/data/rhythmnet/st_maps/"
CHECKPOINT_PATH = "/content/drive/My Drive/checkpoints/rhythmnet"
DATA_PATH = "/content/drive/My Drive/data/rhythmnet/"
PLOT_PATH = "/content/drive/My Drive/plots/rhythmnet"

BATCH_SIZE = 32
EPOCHS = 50
EPOCHS_TEST = 1
CLIP_SIZE = 300
TIME_STEPS = 15
LEARNING_RATE = 1e-3
GRU_HIDDEN = 1
LAMBDA_SMOOTH = 100

NUM_WORKERS = 8
DEVICE = 'cuda' if torch.cuda.is_available() else 'cpu'

# tensorboard / plotting
TENSORBOARD_LOG_DIR = "runs/rhythmnet"
USE_CUDNN_BENCHMARK = True
