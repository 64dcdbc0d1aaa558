# Copyright (c) 2022, NVIDIA CORPORATION.  All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");

import contextlib
import glob
import json
import os
from dataclasses import dataclass, field, is_dataclass
from typing import List, Optional, Union

import lightning.pytorch as pl
import torch
from omegaconf import OmegaConf, open_dict

from nemo.collections.asr.models import ASRModel, EncDecCTCModel, EncDecRNNTModel
from nemo.collections.asr.parts.submodules.ctc_decoding import CTCDecodingConfig
from nemo.collections.asr.parts.submodules.rnnt_decoding import RNNTDecodingConfig
from nemo.core.config import hydra_runner
from nemo.utils import logging

"""
Transcribe audio file on a single CPU/GPU. Useful for transcription of moderate amounts of audio data.

# Arguments
  model_path: path to .nemo ASR checkpoint
  pretrained_name: name of pretrained ASR model (from NGC registry)
  audio_dir: path to directory with audio files
  dataset_manifest: path to dataset JSON manifest file (in NeMo format)
  cuda: Optional int to enable or disable execution of model on certain CUDA device.
  amp: Bool to decide if Automatic Mixed Precision should be used during inference

# Usage
python transcribe_speech.py \
    model_path=null pretrained_name=null audio_dir="<remove or path to folder of audio files>" \
    output_filename="<remove or specify output filename>" batch_size=32 cuda=0 amp=True
"""


@dataclass
class TranscriptionConfig:
    # Required configs
    model_path: Optional[str] = None  # Path to a .nemo file
    pretrained_name: Optional[str] = None  # Name of a pretrained model
    audio_dir: Optional[str] = None  # Path to a directory which contains audio files
    dataset_manifest: Optional[str] = None  # Path to dataset's JSON manifest
    output_filename: Optional[str] = None
    batch_size: int = 32
    num_workers: int = 0

    # Set `cuda` to int to define CUDA device. If 'None', will look for CUDA
    # device anyway, and do inference on CPU only if CUDA device is not found.
    # If `cuda` is a negative number, inference will be on CPU only.
    cuda: Optional[int] = None
    allow_mps: bool = False  # allow to select MPS device (Apple Silicon M-series GPU)
    amp: bool = False
    amp_dtype: str = "float16"  # can be set to "float16" or "bfloat16" when using amp
    matmul_precision: str = "highest"  # Literal["highest", "high", "medium"]
    audio_type: str = "wav"

    # Decoding strategy for CTC models
    ctc_decoding: CTCDecodingConfig = field(default_factory=CTCDecodingConfig)
    # Decoding strategy for RNNT models
    rnnt_decoding: RNNTDecodingConfig = field(default_factory=lambda: RNNTDecodingConfig(fused_batch_size=-1))


def setup_model(cfg, map_location):
    if cfg.model_path is not None:
        model_cfg = ASRModel.restore_from(restore_path=cfg.model_path, return_config=True)
        classpath = model_cfg.target
        imported_class = ASRModel.from_config_dict({"target": classpath}).__class__
        asr_model = imported_class.restore_from(restore_path=cfg.model_path, map_location=map_location)
        model_name = os.path.splitext(os.path.basename(cfg.model_path))[0]
    else:
        asr_model = ASRModel.from_pretrained(model_name=cfg.pretrained_name, map_location=map_location)
        model_name = cfg.pretrained_name
    return asr_model, model_name


@hydra_runner(config_name="TranscriptionConfig", schema=TranscriptionConfig)
def main(cfg: TranscriptionConfig) -> Union[TranscriptionConfig, List]:
    logging.info(f"Hydra config: {OmegaConf.to_yaml(cfg)}")

    for key in cfg:
        cfg[key] = None if cfg[key] == "None" else cfg[key]

    if is_dataclass(cfg):
        cfg = OmegaConf.structured(cfg)

    if cfg.model_path is None and cfg.pretrained_name is None:
        raise ValueError("Both cfg.model_path and cfg.pretrained_name cannot be None!")

    # setup GPU
    torch.set_float32_matmul_precision(cfg.matmul_precision)
    if cfg.cuda is None:
        if torch.cuda.is_available():
            device = [0]  # use 0th CUDA device
            accelerator = "gpu"
            map_location = torch.device("cuda:0")
        elif cfg.allow_mps and hasattr(torch.backends, "mps") and torch.backends.mps.is_available():
            logging.warning("MPS device (Apple Silicon M-series GPU) support is experimental.")
            device = [0]
            accelerator = "mps"
            map_location = torch.device("mps")
        else:
            device = 1
            accelerator = "cpu"
            map_location = torch.device("cpu")
    else:
        device = [cfg.cuda]
        accelerator = "gpu"  # cfg.cuda given explicitly
        map_location = torch.device(f"cuda:{cfg.cuda}")

    logging.info(f"Inference will be done on device: {map_location}")

    asr_model, model_name = setup_model(cfg, map_location)
    trainer = pl.Trainer(devices=device, accelerator=accelerator)
    asr_model.set_trainer(trainer)
    asr_model = asr_model.eval()

    # collect additional transcription information
    if isinstance(asr_model, EncDecRNNTModel):
        asr_model.change_decoding_strategy(cfg.rnnt_decoding)
    elif isinstance(asr_model, EncDecCTCModel):
        asr_model.change_decoding_strategy(cfg.ctc_decoding)

    # prepare audio filepaths
    if cfg.audio_dir is not None:
        filepaths = sorted(glob.glob(os.path.join(cfg.audio_dir, f"**/*.{cfg.audio_type}"), recursive=True))
    else:
        with open(cfg.dataset_manifest, "r", encoding="utf-8") as f:
            filepaths = [json.loads(line)["audio_filepath"] for line in f if line.strip()]
    logging.info(f"\nTranscribing {len(filepaths)} files...\n")

    # setup AMP (optional)
    if cfg.amp and torch.cuda.is_available() and hasattr(torch.cuda, "amp") and hasattr(torch.cuda.amp, "autocast"):
        logging.info("AMP enabled!\n")
        amp_dtype = torch.float16 if cfg.amp_dtype == "float16" else torch.bfloat16
        autocast = lambda: torch.cuda.amp.autocast(dtype=amp_dtype)
    else:
        @contextlib.contextmanager
        def autocast():
            yield

    # transcribe audio
    with autocast():
        with torch.no_grad():
            transcriptions = asr_model.transcribe(
                filepaths,
                batch_size=cfg.batch_size,
                num_workers=cfg.num_workers,
                return_hypotheses=False,
            )

    if isinstance(transcriptions, tuple):
        transcriptions = transcriptions[0]

    output_filename = cfg.output_filename or f"{model_name}_transcriptions.json"
    with open(output_filename, "w", encoding="utf-8") as f:
        for path, text in zip(filepaths, transcriptions):
            f.write(json.dumps({"audio_filepath": path, "pred_text": str(text)}) + "\n")
    logging.info(f"Finished writing predictions to {output_filename}!")

    return cfg


if __name__ == "__main__":
    main()  # noqa pylint: disable=no-value-for-parameter
