"""config.py -- default configuration for YourMT3-style multi-instrument transcription.

Everything here can be overridden from the command line (see train.py / update_config()).
"""
import numpy as np
# yapf: disable

"""
audio_cfg:
- Used by 'ymt3' to create a spectrogram layer.
- Input shape of model is determined by audio_cfg.
- 'train.py' arguments can override these defaults.
"""
audio_cfg = {
    # Overwrittable by args in train.py
    "codec": "melspec",  # {"melspec", "spec"} melspec for MT3, spec for PerceiverTF
    "hop_length": 128,  # {128, 300} 128 for MT3, 300 for PerceiverTF
    # Shared audio parameters
    "audio_backend": "torchaudio",  # {"torchaudio", "nnAudio"}
    "sample_rate": 16000,
    "input_frames": 32767, # number of input frames (~=2.048 s), determining in-/output shape of front layers.
    "n_fft": 2048,
    "n_mels": 512,  # only for melspec
    "f_min": 50.0,
    "f_max": 8000.0,
}

"""
model_cfg:
- Encoder type dictates use of T5_CFG or PERCEIVER_TF_CFG.
- 'train.py' arguments can override these defaults.
"""
model_cfg = {
    "encoder_type": "t5",  # {"t5", "perceiver-tf", "conformer"}
    "decoder_type": "t5",  # {"t5", "multi-t5"}
    "pre_encoder_type": "default",  # {None, "default", "conv", "conv1d", "conv2d_avpt"}
    "pre_encoder_type_default": {"t5": None, "perceiver-tf": "conv", "conformer": None},
    "pre_decoder_type": "default",
    "pre_decoder_type_default": {
        "t5": {"t5": None},
        "perceiver-tf": {"t5": "linear", "multi-t5": "mc_shared_linear"},
        "conformer": {"t5": None},
    },
    "conv_out_channels": 128,
    "t5_basename": "google/t5-v1_1-small",
    "pretrained": False,
    "use_task_conditional_encoder": True,
    "use_task_conditional_decoder": True,
    "d_feat": "auto",
    "tie_word_embeddings": True,
    "vocab_size": "auto",
    "num_max_positions": "auto",
    "encoder": {
        "t5": {
            "d_model": 512,
            "num_heads": 6,
            "num_layers": 8,
            "dropout_rate": 0.05,
            "position_encoding_type": "sinusoidal",
            "ff_widening_factor": 2,
            "ff_layer_type": "t5_gmlp",
        },
        "perceiver-tf": {
            "num_latents": 24,
            "d_latent": 128,
            "d_model": "q",
            "num_blocks": 3,
            "num_local_transformers_per_block": 2,
            "num_temporal_transformers_per_block": 2,
            "sca_use_query_residual": False,
            "dropout_rate": 0.1,
            "position_encoding_type": "trainable",
            "attention_to_channel": True,
            "layer_norm_type": "layer_norm",
            "ff_layer_type": "mlp",
            "ff_widening_factor": 1,
            "moe_num_experts": 4,
            "moe_topk": 2,
            "hidden_act": "gelu",
            "rotary_type_sca": "pixel",
            "rotary_type_latent": "pixel",
            "rotary_type_temporal": "lang",
            "rope_apply_to_keys": False,
            "rope_partial_pe": True,
        },
    },
    "decoder": {
        "t5": {
            "d_model": 512,
            "num_heads": 6,
            "num_layers": 8,
            "dropout_rate": 0.05,
            "position_encoding_type": None,
            "ff_widening_factor": 2,
            "ff_layer_type": "t5_gmlp",
        },
    },
    "feat_length": "auto",
    "event_length": 1024,
    "init_factor": 1.0,
    # attention backend used by the T5 blocks: {"eager", "sdpa", "flash"}
    "attn_implementation": "flash",
}

"""
shared_cfg:
- Paths, batch sizes, augmentation, trainer and checkpoint settings.
"""
shared_cfg = {
    "PATH": {
        "data_home": "../../data",  # path to the data directory. If using relative path, it is relative to /src directory.
    },
    "BSZ": {  # global batch size is local_bsz * n_GPUs in DDP mode
        "train_sub": 12,  #20, # sub-batch size is per CPU worker
        "train_local": 24,  #40, # local-batch size is per GPU
        "validation": 64,  # validation batch size is per GPU
        "test": 64,
    },
    "AUGMENTATION": {
        "train_random_amp_range": [0.8, 1.1],  # min, max amplitude
        "train_stem_iaug_prob": 0.7,
        "train_stem_xaug_policy": {
            "max_k": 3,
            "tau": 0.3,
            "alpha": 1.0,
            "max_subunit_stems": 12,
            "p_include_singing": None,
            "no_instr_overlap": True,
            "no_drum_overlap": True,
            "uhat_intra_stem_augment": True,
        },
        "train_pitch_shift_range": [-2, 2],
    },
    "DATAIO": {  # do not set `shuffle` here.
        "num_workers": 4,
        "prefetch_factor": 2,
        "pin_memory": True,
        "persistent_workers": False,
    },
    "CHECKPOINT": {
        "save_top_k": 4,
        "monitor": "validation/macro_onset_f",
        "mode": "max",
        "save_last": True,
        "filename": "{epoch}-{step}",
    },
    "TRAINER": {  # do not coverwrite args in this section
        "limit_train_batches": 1.0,  # overwrite by config.profile
        "limit_val_batches": 1.0,
        "limit_test_batches": 1.0,
        "gradient_clip_val": 1.0,
        "accumulate_grad_batches": 1,
        "check_val_every_n_epoch": 1,
        "num_sanity_val_steps": 0,
        "accelerator": "gpu",
        "sync_batchnorm": False,
        "benchmark": True,
    },
    "WANDB": {
        "save_dir": "../logs",
        "cache_dir": "../logs/.wandb_cache",
        "resume": "allow",
        "anonymous": "allow",
        "mode": "online",
    },
    "LR_SCHEDULE": {
        "warmup_steps": 1000,
        "total_steps": 100000,
        "final_cosine": 1e-5,
    },
    "TOKENIZER": {
        "max_shift_steps": "auto",
        "shift_steps_ms": 10,
    },
}

T5_BASE_CFG = {
    "google/t5-v1_1-small": {
        "architectures": ["T5ForConditionalGeneration"],
        "d_ff": 1024,
        "d_kv": 64,
        "d_model": 512,
        "decoder_start_token_id": 0,
        "dense_act_fn": "gelu_new",
        "dropout_rate": 0.1,
        "eos_token_id": 1,
        "feed_forward_proj": "gated-gelu",
        "initializer_factor": 1.0,
        "is_encoder_decoder": True,
        "is_gated_act": True,
        "layer_norm_epsilon": 1e-06,
        "model_type": "t5",
        "num_decoder_layers": 8,
        "num_heads": 6,
        "num_layers": 8,
        "output_past": True,
        "pad_token_id": 0,
        "relative_attention_num_buckets": 32,
        "use_cache": True,
        "vocab_size": 2,
    },
}

DEEPSPEED_CFG = {
    "zero_allow_untested_optimizer": True,
    "optimizer": {
        "type": "AdamW",
        "params": {
            "lr": 1e-4,
            "betas": [0.998, 0.999],
            "eps": 1e-3,
            "weight_decay": 1e-3,
        },
    },
    "zero_optimization": {"stage": 0, "contiguous_gradients": True, "overlap_comm": True},
    "bf16": {"enabled": True},
}

# fixed np RNG used when a profile asks for deterministic sub-sampling
DEFAULT_RNG = np.random.default_rng(1234)
