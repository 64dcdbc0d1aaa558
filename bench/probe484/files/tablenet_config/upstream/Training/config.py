import torch

SEED = 0
LEARNING_RATE = 0.0001
EPOCHS = 100
BATCH_SIZE = 2
WEIGHT_DECAY = 3e-4

DATAPATH = '../data/'
MODEL_DIR = './saved_models/'
LOG_DIR = './runs/'

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
NUM_WORKERS = 4
PIN_MEMORY = True
USE_AMP = True

ENCODER = 'densenet'  # 'vgg' | 'densenet' | 'efficientnet'
USE_PRETRAINED = True
BASEMODEL_REQUIRES_GRAD = True

# thresholds used by utils.compute_metrics and predict.py
THRESHOLD = 0.5
MIN_TABLE_AREA = 3000
MIN_COLUMN_AREA = 1000

CHECKPOINT_NAME = f"{ENCODER}_config_4_model_checkpoint.pth.tar"
