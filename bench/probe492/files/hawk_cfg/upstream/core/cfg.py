# Configuration parameters, stored as dataclasses so they can be overridden
# from the command line or from a yaml file.

from dataclasses import dataclass, field
from typing import List

@dataclass
class Audio:
    segment_len = 3         # spectrogram duration in seconds
    sampling_rate = 40960
    hop_length = 320
    win_length = 2048
    spec_height = 192       # spectrogram height
    spec_width = 384        # spectrogram width (3 * 128)
    check_seconds = 3
    min_audio_freq = 200
    max_audio_freq = 13000
    mel_scale = True
    spec_exponent = .68     # raise spectrogram values to this exponent (brings out faint sounds)
    spec_block_seconds = 240  # max seconds of spectrogram to create at a time (ignored by training)
    power = 1.0

@dataclass
class Training:
    compile = False
    mixed_precision = True  # usually improves performance, especially with larger models
    multi_label = True
    deterministic = False
    seed = 1
    learning_rate = .0025
    weight_decay = 1e-6
    num_epochs = 10
    batch_size = 64
    num_workers = 3
    dropout = None
    drop_rate = None
    drop_path_rate = None
    label_smoothing = 0.15
    model_name = "custom_efficientnet_5"
    load_weights = False    # for timm models, can load pretrained weights
    freeze_backbone = False
    pretrained_model_path = None
    save_last_n = 3         # save checkpoints for this many last epochs
    warmup_fraction = 0.0
    val_portion = 0.0
    lr_cooldown = 0.0
    pos_label_weight = 1.0

@dataclass
class Inference:
    num_threads = 3                # multiple threads improves performance but uses more GPU memory
    spec_overlap_seconds = 1.5     # number of seconds overlap for adjacent 3-second spectrograms
    min_score = 0.75               # only generate labels when score is at least this
    use_banding_codes = True       # use banding codes instead of species names in labels
    check_frequency = True         # check for low/high frequency sounds and ignore classes accordingly
    use_fp16 = False               # half precision inference (GPU only)
    top_n = 20                     # number of top matches to log in debug mode
    min_location_freq = .0001      # ignore if species frequency less than this for location/week
    file_date_regex = r'\S+_(\d+)_.*'  # regex used to get the date from a file name

@dataclass
class Miscellaneous:
    main_ckpt_folder = "data/ckpt"       # use an ensemble of all checkpoints in this folder for inference
    search_ckpt_path = "data/ckpt-search/custom_efficientnet_2.ckpt"
    classes_file = "data/classes.txt"    # list of classes used to generate pickle files
    ignore_file = "data/ignore.txt"      # classes listed in this file are ignored in analysis
    train_pickle = "data/specs.pickle"
    test_pickle = None

@dataclass
class BaseConfig:
    audio = Audio()
    train = Training()
    infer = Inference()
    misc = Miscellaneous()

# set a global config object
audio = Audio()
train = Training()
infer = Inference()
misc = Miscellaneous()

def set_config(name):
    # placeholder for named configurations (e.g. "low_band")
    if name == "low_band":
        audio.min_audio_freq = 0
        audio.max_audio_freq = 200
        audio.spec_height = 64
        audio.mel_scale = False
