"""
Common configuration for the CUB concept bottleneck experiments
"""

# General
BASE_DIR = ''
N_ATTRIBUTES = 312
N_CLASSES = 200

# Training
UPWEIGHT_RATIO = 9.0
MIN_LR = 0.0001
LR_DECAY_SIZE = 0.1

# All of the 112 concepts that survive the majority-voting filter (see data_processing.py)
# are kept in CUB_processed/class_attr_data_10; the full 312 attributes live in CUB_processed/
PROCESSED_DIR = 'CUB_processed'
CLASS_ATTR_DIR = 'CUB_processed/class_attr_data_10'

# Every run was done on a single 12GB GPU; batch sizes below fit in that budget
BATCH_SIZE_XTOC = 64
BATCH_SIZE_CTOY = 64
BATCH_SIZE_JOINT = 64
