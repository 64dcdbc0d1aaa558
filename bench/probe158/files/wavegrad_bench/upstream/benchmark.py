import argparse
import json

import numpy as np
import torch
from tqdm import tqdm

from model import WaveGrad
from data import AudioDataset, MelSpectrogramFixed
from utils import ConfigWrapper, show_message, str2bool


def compute_rtf(sample, generation_time, sample_rate=22050):
    """
    Computes RTF for a given sample.
    """
    total_length = sample.shape[-1]
    return float(generation_time * sample_rate / total_length)


def estimate_average_rtf_on_filelist(filelist_path, config, model, verbose=True):
    device = next(model.parameters()).device
    config.training_config.test_filelist_path = filelist_path
    dataset = AudioDataset(config, training=False)
    mel_fn = MelSpectrogramFixed(
        sample_rate=config.data_config.sample_rate,
        n_fft=config.data_config.n_fft,
        win_length=config.data_config.win_length,
        hop_length=config.data_config.hop_length,
        f_min=config.data_config.f_min,
        f_max=config.data_config.f_max,
        n_mels=config.data_config.n_mels,
        window_fn=torch.hann_window
    ).to(device)
    start_event = torch.cuda.Event(enable_timing=True)
    end_event = torch.cuda.Event(enable_timing=True)
    rtfs = []
    for i in (tqdm(range(len(dataset))) if verbose else range(len(dataset))):
        datapoint = dataset[i].to(device)
        mel = mel_fn(datapoint)[None]
        start_event.record()
        sample = model.forward(mel, store_intermediate_states=False)
        end_event.record()
        torch.cuda.synchronize()
        generation_time = start_event.elapsed_time(end_event) / 1000.0
        rtf = compute_rtf(
            sample, generation_time, sample_rate=config.data_config.sample_rate
        )
        rtfs.append(rtf)
    average_rtf = np.mean(rtfs)
    std_rtf = np.std(rtfs)

    show_message(f'DEVICE: {device}. average_rtf={average_rtf}, std={std_rtf}', verbose=verbose)

    rtf_stats = {
        'rtfs': rtfs,
        'average': average_rtf,
        'std': std_rtf
    }
    return rtf_stats


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('-c', '--config', required=True, type=str, help='configuration file')
    parser.add_argument('-ch', '--checkpoint_path', required=True, type=str, help='checkpoint path')
    parser.add_argument('-ns', '--noise_schedule_path', required=True, type=str,
                        help='noise schedule, should be just a torch.Tensor array of shape [n_iter]')
    parser.add_argument('-m', '--mel_filelist', required=True, type=str,
                        help='mel spectorgram filelist, files of which should be just a torch.Tensor array of shape [n_mels, T]')
    parser.add_argument('-v', '--verbose', required=False, type=str2bool,
                        nargs='?', const=True, default=True, help='verbosity level')
    args = parser.parse_args()

    torch.backends.cudnn.benchmark = True

    # Initialize config
    with open(args.config) as f:
        config = ConfigWrapper(**json.load(f))

    # Initialize the model
    model = WaveGrad(config)
    model.load_state_dict(torch.load(args.checkpoint_path)['model'], strict=False)
    model = model.cuda()

    # Set noise schedule
    noise_schedule = torch.load(args.noise_schedule_path)
    n_iter = noise_schedule.shape[-1]
    init_fn = lambda **kwargs: noise_schedule
    init_kwargs = {'steps': n_iter}
    model.set_new_noise_schedule(init_fn, init_kwargs)

    rtf_stats = estimate_average_rtf_on_filelist(args.mel_filelist, config, model, verbose=args.verbose)
    show_message(f'n_iter={n_iter}: average RTF {rtf_stats["average"]:.4f} (std {rtf_stats["std"]:.4f})',
                 verbose=args.verbose)
