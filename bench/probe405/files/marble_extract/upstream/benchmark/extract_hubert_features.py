"""Extract frozen representations from HuBERT-style music models (MERT, music2vec,
HuBERT-base) for the MARBLE probing tasks.

Features are saved per clip as .npy with shape [n_layers + 1, T, D] (frame level) or
[n_layers + 1, D] (clip level, mean-pooled over time), so that the probers can pick a
layer (or learn a weighted sum) without touching the backbone again.
"""
import argparse
import os
import glob

import numpy as np
import torch
import torchaudio
from tqdm import tqdm
from transformers import AutoModel, Wav2Vec2FeatureExtractor

from benchmark.utils.audio_utils import load_audio, find_audios
from benchmark.utils.config_utils import load_config, override_config


def select_args(config):
    args = argparse.Namespace()
    args.accelerator = config.dataset.pre_extract.accelerator
    args.output_dir = config.dataset.pre_extract.output_dir
    args.overwrite = config.dataset.pre_extract.overwrite
    args.audio_dir = config.dataset.pre_extract.audio_dir
    args.n_shard = config.args.n_shard
    args.shard_rank = config.args.shard_rank
    args.keep_folder_structure = config.dataset.pre_extract.keep_folder_structure
    args.pre_trained_folder = config.dataset.pre_extract.feature_extractor.pretrain.pre_trained_folder
    args.huggingface_model = config.dataset.pre_extract.feature_extractor.pretrain.get("huggingface_model", True)
    args.target_sr = config.dataset.pre_extract.feature_extractor.pretrain.target_sr
    args.force_half = config.dataset.pre_extract.feature_extractor.force_half
    args.processor_normalize = config.dataset.pre_extract.feature_extractor.pretrain.processor_normalize
    args.sliding_window_size_in_sec = config.dataset.pre_extract.sliding_window_size_in_sec
    args.sliding_window_overlap_in_percent = config.dataset.pre_extract.sliding_window_overlap_in_percent
    args.layer = config.dataset.pre_extract.feature_extractor.get("layer", None)
    args.reduction = config.dataset.pre_extract.reduction
    return args


def main(config):
    args = select_args(config)

    os.makedirs(args.output_dir, exist_ok=True)
    audio_files = find_audios(args.audio_dir)
    print(f"Found {len(audio_files)} audio files")

    if args.n_shard > 1:
        print(f"processing shard {args.shard_rank} of {args.n_shard}")
        audio_files.sort()
        audio_files = audio_files[args.shard_rank * len(audio_files) // args.n_shard:
                                  (args.shard_rank + 1) * len(audio_files) // args.n_shard]

    if args.accelerator == "gpu":
        device = torch.device("cuda")
    else:
        device = torch.device("cpu")

    print(f"loading model from {args.pre_trained_folder}")
    model = AutoModel.from_pretrained(args.pre_trained_folder, trust_remote_code=True)
    processor = Wav2Vec2FeatureExtractor.from_pretrained(args.pre_trained_folder, trust_remote_code=True)
    if args.force_half:
        model = model.half()
    model.to(device)
    model.eval()

    for audio_file in tqdm(audio_files):
        if args.keep_folder_structure:
            rel = os.path.relpath(audio_file, args.audio_dir)
            output_file = os.path.join(args.output_dir, os.path.splitext(rel)[0] + ".npy")
            os.makedirs(os.path.dirname(output_file), exist_ok=True)
        else:
            output_file = os.path.join(args.output_dir, os.path.basename(audio_file).rsplit(".", 1)[0] + ".npy")
        if os.path.exists(output_file) and not args.overwrite:
            continue

        try:
            waveform = load_audio(audio_file, target_sr=args.target_sr, is_mono=True, is_normalize=False)
        except Exception as e:
            print(f"skip audio {audio_file} because of {e}")
            continue
        waveform = waveform.squeeze().cpu().numpy()

        wav = processor(waveform, sampling_rate=args.target_sr, return_tensors="pt").input_values
        if args.force_half:
            wav = wav.half()

        with torch.no_grad():
            if args.sliding_window_size_in_sec:
                assert args.sliding_window_size_in_sec > 0, "sliding_window_size_in_sec must be positive"
                overlap_in_sec = args.sliding_window_size_in_sec * args.sliding_window_overlap_in_percent / 100
                wavs = []
                step = int(args.target_sr * (args.sliding_window_size_in_sec - overlap_in_sec))
                win = int(args.target_sr * args.sliding_window_size_in_sec)
                for i in range(0, wav.shape[-1], step):
                    seg = wav[:, i:i + win]
                    if seg.shape[-1] < args.target_sr * 1:  # drop segments shorter than 1 s
                        break
                    wavs.append(seg)
                features = []
                for seg in wavs:
                    out = model(seg.to(device), output_hidden_states=True)
                    features.append(torch.stack(out.hidden_states).squeeze(1))  # [L+1, T, D]
                if args.reduction == "mean":
                    features = torch.cat(features, dim=1).mean(dim=1)  # [L+1, D]
                else:
                    features = torch.cat(features, dim=1)
            else:
                out = model(wav.to(device), output_hidden_states=True)
                features = torch.stack(out.hidden_states).squeeze(1)
                if args.reduction == "mean":
                    features = features.mean(dim=1)

        if args.layer is not None:
            features = features[int(args.layer)]
        np.save(output_file, features.float().cpu().numpy())


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("-c", "--config", type=str, required=True)
    parser.add_argument("-o", "--override", type=str, default=None)
    parser.add_argument("--n_shard", type=int, default=1)
    parser.add_argument("--shard_rank", type=int, default=0)
    cli = parser.parse_args()
    config = load_config(cli.config, namespace=True)
    if cli.override is not None and cli.override.lower() != "none":
        override_config(cli.override, config)
    config.args = argparse.Namespace(n_shard=cli.n_shard, shard_rank=cli.shard_rank)
    main(config)
