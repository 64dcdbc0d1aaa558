#!/usr/bin/env python3
"""
Computes embeddings on a set of tasks (HEAR 2021 evaluation kit style).

Each submission is a pip-installable module exposing
    load_model(model_file_path: str = "") -> torch.nn.Module
    get_scene_embeddings(audio: Tensor, model) -> Tensor
    get_timestamp_embeddings(audio: Tensor, model) -> Tuple[Tensor, Tensor]
"""

import json
import os.path
import pickle
import random
import shutil
from importlib import import_module
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np
import soundfile as sf
import tensorflow as tf
import torch
from intervaltree import IntervalTree
from torch.utils.data import DataLoader, Dataset
from tqdm.auto import tqdm

# This could instead be something from the participants
TORCH = "torch"
TENSORFLOW = "tf"

# Sometimes we have 8GB of audio in a split; batch size is halved on OOM until it fits
DEFAULT_BATCH_SIZE = 128
MIN_BATCH_SIZE = 1


class Embedding:
    """
    A wrapper class to help with loading embedding models and computing embeddings
    using the HEAR 2021 API for both torch and tensorflow models.

    Args:
        module_name: the import name for the embedding module
        model_path: location to load the model from
    """

    def __init__(
        self,
        module_name: str,
        model_path: str = None,
        model_options: Optional[Dict[str, Any]] = None,
    ):
        print(f"Importing {module_name}")
        self.module = import_module(module_name)

        if model_options is None:
            model_options = {}

        # Load the model using the model weights path if they were provided
        if model_path is not None:
            print(f"Loading model using: {model_path}")
            self.model = self.module.load_model(model_path, **model_options)  # type: ignore
        else:
            self.model = self.module.load_model(**model_options)  # type: ignore

        # Check to see what type of model this is: torch or tensorflow
        if isinstance(self.model, torch.nn.Module):
            self.type = TORCH
            self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            self.model.to(self.device)
        elif isinstance(self.model, tf.Module):
            self.type = TENSORFLOW
            # Tensorflow memory growth must be set before models are created
            gpus = tf.config.list_physical_devices("GPU")
            for gpu in gpus:
                tf.config.experimental.set_memory_growth(gpu, True)
        else:
            raise TypeError(f"Unsupported model type received: {type(self.model)}")

    @property
    def name(self):
        # TODO: would be nice to include version in this string, a versioned string.
        #   Potentially can set a version from the command line too to help with testing
        #   the same model but with difference versions of the weights.
        return self.module.__name__

    @property
    def sample_rate(self):
        return self.model.sample_rate

    def as_tensor(self, x: Union[np.ndarray, torch.Tensor]):
        if self.type == TORCH:
            # Load array as tensor onto device
            if isinstance(x, np.ndarray):
                x = torch.tensor(x, device=self.device)
            elif isinstance(x, torch.Tensor):
                x = x.to(self.device)
            else:
                raise TypeError(
                    "Input must be one of np.ndarray or torch.Tensor for"
                    f"torch audio embedding models. "
                    f"Received: {type(x)}"
                )

        elif self.type == TENSORFLOW:
            # Load array as tensor onto device
            if not isinstance(x, np.ndarray):
                x = x.numpy()
            x = tf.convert_to_tensor(x)
        else:
            raise AssertionError("Unknown type")

        return x

    def get_embedding_as_numpy(
        self, audio: Union[np.ndarray, torch.Tensor]
    ) -> Tuple[np.ndarray, np.ndarray]:
        if self.type == TORCH:
            with torch.no_grad():
                # Put the model into eval mode, and not computing gradients while in inference.
                # Iterate over all batches and accumulate the embeddings for each frame.
                self.model.eval()
                audio = self.as_tensor(audio)
                embeddings, timestamps = self.module.get_timestamp_embeddings(
                    audio, self.model
                )
                embeddings = embeddings.detach().cpu().numpy()
                timestamps = timestamps.detach().cpu().numpy()
                return embeddings, timestamps

        elif self.type == TENSORFLOW:
            audio = self.as_tensor(audio)
            embeddings, timestamps = self.module.get_timestamp_embeddings(audio, self.model)
            return embeddings.numpy(), timestamps.numpy()

        else:
            raise NotImplementedError("Unknown type")

    def get_scene_embedding_as_numpy(
        self, audio: Union[np.ndarray, torch.Tensor]
    ) -> np.ndarray:
        if self.type == TORCH:
            with torch.no_grad():
                audio = self.as_tensor(audio)
                embeddings = self.module.get_scene_embeddings(audio, self.model)
                return embeddings.detach().cpu().numpy()
        elif self.type == TENSORFLOW:
            audio = self.as_tensor(audio)
            embeddings = self.module.get_scene_embeddings(audio, self.model)
            return embeddings.numpy()
        else:
            raise NotImplementedError("Unknown type")


class AudioFileDataset(Dataset):
    """
    Read in a JSON file and return audio and audio filenames
    """

    def __init__(self, data: Dict, audio_dir: Path, sample_rate: int):
        self.filenames = list(data.keys())
        self.audio_dir = audio_dir
        assert self.audio_dir.is_dir(), f"{audio_dir} is not a directory"
        self.sample_rate = sample_rate

    def __len__(self):
        return len(self.filenames)

    def __getitem__(self, idx):
        # Load in audio here in the Dataset. When the batch size is larger than
        # 1 then the torch dataloader can take advantage of multiprocessing.
        audio_path = self.audio_dir.joinpath(self.filenames[idx])
        audio, sr = sf.read(str(audio_path), dtype=np.float32)
        assert sr == self.sample_rate
        return audio, self.filenames[idx]


def get_dataloader_for_embedding(
    data: Dict, audio_dir: Path, embedding: Embedding, batch_size: int = 64
):
    if embedding.type == TORCH or embedding.type == TENSORFLOW:
        return DataLoader(
            AudioFileDataset(data, audio_dir, embedding.sample_rate),
            batch_size=batch_size,
            shuffle=False,
            pin_memory=True,
            num_workers=4,
        )
    else:
        raise AssertionError("Unknown embedding type")


def _embed_split(embedding, split_data, audio_dir, outdir, split_name, batch_size, scene):
    dataloader = get_dataloader_for_embedding(split_data, audio_dir, embedding, batch_size)
    outdir.mkdir(parents=True, exist_ok=True)
    for audios, filenames in tqdm(dataloader, desc=split_name):
        if scene:
            embeddings = embedding.get_scene_embedding_as_numpy(audios)
            for i, filename in enumerate(filenames):
                np.save(outdir.joinpath(f"{filename}.embedding.npy"), embeddings[i])
        else:
            embeddings, timestamps = embedding.get_embedding_as_numpy(audios)
            for i, filename in enumerate(filenames):
                np.save(outdir.joinpath(f"{filename}.embedding.npy"), embeddings[i])
                np.save(outdir.joinpath(f"{filename}.timestamps.npy"), timestamps[i])


def task_embeddings(
    embedding: Embedding,
    task_path: Path,
    embed_task_dir: Path,
):
    prng = random.Random()
    prng.seed(0)

    metadata_path = task_path.joinpath("task_metadata.json")
    metadata = json.load(metadata_path.open())
    label_vocab_path = task_path.joinpath("labelvocabulary.csv")

    # wandb.init(project="heareval", tags=["embedding", task_name])

    # Copy these two files to the embeddings directory,
    # so we have everything we need in embeddings for doing downstream
    # prediction and evaluation.
    if not os.path.exists(embed_task_dir):
        os.makedirs(embed_task_dir)
    shutil.copy(metadata_path, embed_task_dir)
    shutil.copy(label_vocab_path, embed_task_dir)

    scene = metadata["embedding_type"] == "scene"
    for split in metadata["splits"]:
        print(f"Getting embeddings for split: {split}")

        split_path = task_path.joinpath(f"{split}.json")
        assert split_path.is_file()

        # Copy over the ground truth labels as they may be needed for evaluation
        shutil.copy(split_path, embed_task_dir)

        # Root directory for audio files for this split
        audio_dir = task_path.joinpath(str(embedding.sample_rate), split)
        split_data = json.load(split_path.open())

        batch_size = DEFAULT_BATCH_SIZE
        while True:
            try:
                _embed_split(embedding, split_data, audio_dir, embed_task_dir.joinpath(split),
                             split, batch_size, scene)
                break
            except RuntimeError as e:
                if "CUDA out of memory" not in str(e) or batch_size <= MIN_BATCH_SIZE:
                    raise
                batch_size //= 2
                torch.cuda.empty_cache()
                print(f"OOM on split {split}; retrying with batch_size={batch_size}")
