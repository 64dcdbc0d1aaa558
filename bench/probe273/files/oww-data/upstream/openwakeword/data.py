# Copyright 2022 David Scripka. All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

# imports
import itertools
import logging
import os
import random
import re
from functools import partial
from typing import List

import audiomentations
import numpy as np
import pronouncing
import torch
import torch_audiomentations
import torchaudio
from numpy.lib.format import open_memmap
from speechbrain.dataio.dataio import read_audio
from speechbrain.processing.signal_processing import reverberate
from tqdm import tqdm


# Load audio clips and structure into clips of the same length
def stack_clips(audio_data, clip_size=16000*2):
    """
    Takes an input list of 1D arrays (of different lengths), concatenates them together,
    and then extracts clips of a uniform size by dividing the combined array.

    Args:
        audio_data (List[ndarray]): A list of 1D numpy arrays to combine and stack
        clip_size (int): The desired total length of the uniform clip size (in samples)

    Returns:
        ndarray: A N by `clip_size` array with the audio data, converted to 16-bit PCM
    """
    # Combine all clips into single clip
    combined_data = np.hstack((audio_data))

    # Get chunks of the specified size
    new_examples = []
    for i in range(0, combined_data.shape[0], clip_size):
        chunk = combined_data[i:i+clip_size]
        if chunk.shape[0] != clip_size:
            chunk = np.hstack((chunk, np.zeros(clip_size - chunk.shape[0])))
        new_examples.append(chunk)

    return np.array(new_examples)


def trim_mmap(mmap_path):
    """
    Trims blank rows from the end of a mmaped numpy array by creates new mmap array without the blank rows.
    Note that a copy is created and disk usage will briefly double as the function runs.
    """
    # Identify the last full row in the mmaped file
    mmap_file1 = np.load(mmap_path, mmap_mode='r')
    i = -1
    while np.all(mmap_file1[i, :, :] == 0):
        i -= 1

    N_new = mmap_file1.shape[0] + i + 1

    # Create new mmap_file and copy over data in batches
    output_file2 = mmap_path.strip(".npy") + "2.npy"
    mmap_file2 = open_memmap(output_file2, mode='w+', dtype=np.float32,
                             shape=(N_new, mmap_file1.shape[1], mmap_file1.shape[2]))

    for i in tqdm(range(0, mmap_file1.shape[0], 1024), total=mmap_file1.shape[0]//1024):
        if i + 1024 > N_new:
            mmap_file2[i:N_new] = mmap_file1[i:N_new].copy()
            mmap_file2.flush()
        else:
            mmap_file2[i:i+1024] = mmap_file1[i:i+1024].copy()
            mmap_file2.flush()

    # Remove old mmaped file
    os.remove(mmap_path)

    # Rename new mmap file to match original
    os.rename(output_file2, mmap_path)


# Generate words that sound similar ("adversarial") to the input phrase using phoneme overlap
def generate_adversarial_texts(input_text: str, N: int, include_partial_phrase: float = 0,
                               include_input_words: float = 0):
    """
    Generate adversarial words and phrases based on phoneme overlap.
    Currently only works for english texts.
    """
    # Get phonemes for english vowels (CMUDICT labels)
    vowel_phones = ["AA", "AE", "AH", "AO", "AW", "AX", "AXR", "AY", "EH", "ER", "EY", "IH", "IX", "IY", "OW", "OY", "UH", "UW", "UX"]

    word_phones = []
    input_text_phones = [pronouncing.phones_for_word(i) for i in input_text.split()]

    # Download phonemizer model for OOV words, if needed
    if [] in input_text_phones:
        raise ValueError(f"The phrase '{input_text}' has words that are not in the CMU dictionary.")

    for phones in input_text_phones:
        word_phones.append(phones[0].split())

    adversarial_phrases = []
    for phones, word in zip(word_phones, input_text.split()):
        query_exps = []
        vowels = [i for i in phones if re.sub(r"\d", "", i) in vowel_phones]
        for v in vowels:
            query_exps.append(" ".join([j if j == v else "." for j in phones]))
        matches = set()
        for query in query_exps:
            matches.update(pronouncing.search(query + "$"))
        matches.discard(word.lower())
        adversarial_phrases.append(list(matches) if matches else [word])

    results = []
    for _ in range(N):
        phrase = [random.choice(options) for options in adversarial_phrases]
        if include_partial_phrase and random.random() < include_partial_phrase and len(phrase) > 1:
            phrase = phrase[:random.randint(1, len(phrase) - 1)]
        if include_input_words and random.random() < include_input_words:
            idx = random.randrange(len(phrase))
            phrase[idx] = input_text.split()[idx] if idx < len(input_text.split()) else phrase[idx]
        results.append(" ".join(phrase))
    return results


def augment_clips(
        clip_paths: List[str],
        total_length: int,
        sr: int = 16000,
        batch_size: int = 128,
        augmentation_probabilities: dict = {
            "SevenBandParametricEQ": 0.25,
            "TanhDistortion": 0.25,
            "PitchShift": 0.25,
            "BandStopFilter": 0.25,
            "AddColoredNoise": 0.25,
            "AddBackgroundNoise": 0.75,
            "Gain": 1.0,
            "RIR": 0.5
        },
        background_clip_paths: List[str] = [],
        RIR_paths: List[str] = []
        ):
    """
    Applies audio augmentations to the specified audio clips, returning a generator that applies
    the augmentations in batches to support very large quantities of input audio files.

    The augmentations (and probabilities) are chosen from experience based on training openWakeWord models, as well
    as for the efficiency of the augmentation. The individual probabilities of each augmentation may be adjusted
    with the "augmentation_probabilities" argument.

    Batched augmentations run on the GPU when one is available, which is several times faster than the CPU for
    PitchShift and AddBackgroundNoise.
    """
    # Define augmentations

    # First pass augmentations that can't be done as a batch
    augment1 = audiomentations.Compose([
        audiomentations.SevenBandParametricEQ(min_gain_db=-6, max_gain_db=6, p=augmentation_probabilities["SevenBandParametricEQ"]),
        audiomentations.TanhDistortion(
            min_distortion=0.0001,
            max_distortion=0.10,
            p=augmentation_probabilities["TanhDistortion"]
        ),
    ])

    # Augmentations that can be done as a batch
    if background_clip_paths != []:
        augment2 = torch_audiomentations.Compose([
            torch_audiomentations.PitchShift(
                min_transpose_semitones=-3,
                max_transpose_semitones=3,
                p=augmentation_probabilities["PitchShift"],
                sample_rate=16000,
                mode="per_batch"
            ),
            torch_audiomentations.BandStopFilter(p=augmentation_probabilities["BandStopFilter"], mode="per_batch"),
            torch_audiomentations.AddColoredNoise(
                min_snr_in_db=10, max_snr_in_db=30,
                min_f_decay=-1, max_f_decay=2, p=augmentation_probabilities["AddColoredNoise"],
                mode="per_batch"
            ),
            torch_audiomentations.AddBackgroundNoise(
                p=augmentation_probabilities["AddBackgroundNoise"],
                background_paths=background_clip_paths,
                min_snr_in_db=-10,
                max_snr_in_db=15,
                mode="per_batch"
            ),
            torch_audiomentations.Gain(max_gain_in_db=0, p=augmentation_probabilities["Gain"]),
        ])
    else:
        augment2 = torch_audiomentations.Compose([
            torch_audiomentations.PitchShift(
                min_transpose_semitones=-3,
                max_transpose_semitones=3,
                p=augmentation_probabilities["PitchShift"],
                sample_rate=16000,
                mode="per_batch"
            ),
            torch_audiomentations.BandStopFilter(p=augmentation_probabilities["BandStopFilter"], mode="per_batch"),
            torch_audiomentations.AddColoredNoise(
                min_snr_in_db=10, max_snr_in_db=30,
                min_f_decay=-1, max_f_decay=2, p=augmentation_probabilities["AddColoredNoise"],
                mode="per_batch"
            ),
            torch_audiomentations.Gain(max_gain_in_db=0, p=augmentation_probabilities["Gain"]),
        ])

    # Iterate through all clips and augment them
    for i in range(0, len(clip_paths), batch_size):
        batch = clip_paths[i:i+batch_size]
        augmented_clips = []
        for clip in batch:
            clip_data, clip_sr = torchaudio.load(clip)
            clip_data = clip_data[0]
            if clip_data.shape[0] > total_length:
                clip_data = clip_data[0:total_length]

            if clip_sr != sr:
                raise ValueError("Error! Clip does not have the correct sample rate!")

            clip_data = create_fixed_size_clip(clip_data, total_length, clip_sr)

            # Do first pass augmentations
            augmented_clips.append(torch.from_numpy(augment1(samples=clip_data, sample_rate=sr)))

        # Do second pass augmentations
        device = 'cuda' if torch.cuda.is_available() else 'cpu'
        stacked = torch.vstack(augmented_clips).unsqueeze(dim=1)
        try:
            augmented_batch = augment2(samples=stacked.to(device), sample_rate=sr).squeeze(axis=1)
        except torch.cuda.OutOfMemoryError:
            # very long background clips can exhaust small GPUs inside PitchShift; redo this batch on the CPU
            torch.cuda.empty_cache()
            augmented_batch = augment2(samples=stacked, sample_rate=sr).squeeze(axis=1)

        # Do reverberation
        if augmentation_probabilities["RIR"] >= np.random.random() and RIR_paths != []:
            rir_waveform, sr = torchaudio.load(random.choice(RIR_paths))
            augmented_batch = reverberate(augmented_batch.cpu(), rir_waveform, rescale_amp="avg")

        # yield batch of 16-bit PCM audio data
        yield (augmented_batch.cpu().numpy()*32767).astype(np.int16)


def create_fixed_size_clip(x, n_samples, sr=16000, start=None, end_jitter=.200):
    """
    Create a fixed-length clip of the specified size by padding an input clip with zeros
    Optionally specify the start/end position of the input clip, or let it be chosen randomly.
    """
    dat = np.zeros(n_samples)

    # Construct fixed-length clip
    if start is None:
        start = np.random.randint(0, n_samples - x.shape[0] - int(end_jitter*sr)) if n_samples - x.shape[0] - int(end_jitter*sr) > 0 else 0
    dat[start:start + len(x)] = x.numpy() if isinstance(x, torch.Tensor) else x

    return dat.astype(np.float32)


def mmap_batch_generator(data_files: dict, n_per_class: dict, data_transform_funcs: dict = {},
                         label_transform_funcs: dict = {}):
    """
    A generator function designed to return data from mmapped numpy arrays of features
    in batches with a specified number of examples per class.
    """
    # Get array mmaps and store their shapes (but load files < 1 GB total size into memory)
    data = {label: np.load(fl, mmap_mode='r') for label, fl in data_files.items()}
    memmap_sizes = {label: v.shape[0] for label, v in data.items()}
    offsets = {label: 0 for label in data_files}

    while True:
        X, y = [], []
        for label, n in n_per_class.items():
            if offsets[label] + n >= memmap_sizes[label]:
                offsets[label] = 0
            x = data[label][offsets[label]:offsets[label] + n]
            offsets[label] += n
            if label in data_transform_funcs:
                x = data_transform_funcs[label](x)
            X.append(x)
            y_batch = [label] * x.shape[0]
            if label in label_transform_funcs:
                y_batch = label_transform_funcs[label](y_batch)
            y.extend(y_batch)
        X = np.vstack(X)
        y = np.array(y)
        idx = np.random.permutation(len(y))
        yield torch.from_numpy(X[idx]).float(), torch.from_numpy(y[idx]).float()
