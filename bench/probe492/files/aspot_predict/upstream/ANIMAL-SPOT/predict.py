#!/usr/bin/env python3

"""
Module: predict.py
Authors: Christian Bergler, Hendrik Schroeter
GNU General Public License v3.0
Institution: Friedrich-Alexander-University Erlangen-Nuremberg, Department of Computer Science, Pattern Recognition Lab
Last Access: 26.04.2022
"""

"""
Run a trained ANIMAL-SPOT model over long (hydrophone) recordings with a
sliding window and report the time stamps of detected target calls.
"""

import os
import argparse

import torch
import torch.nn as nn

from math import ceil
from utils.logging import Logger
from collections import OrderedDict

from models.residual_encoder import ResidualEncoder as Encoder
from models.classifier import Classifier
from data.audiodataset import StridedAudioDataset

parser = argparse.ArgumentParser()

parser.add_argument(
    "-d",
    "--debug",
    dest="debug",
    action="store_true",
    help="Print additional training and model information.",
)

parser.add_argument(
    "--model_path",
    type=str,
    default=None,
    help="Path to a model.",
)

parser.add_argument(
    "--log_dir",
    type=str,
    default=None,
    help="The directory to store the logs."
)

parser.add_argument(
    "--output_dir",
    type=str,
    default=None,
    help="The directory to store the prediction files."
)

parser.add_argument(
    "--sequence_len", type=float, default=2, help="Sequence length in [s]."
)

parser.add_argument(
    "--hop", type=float, default=1, help="Hop [s] of subsequent sequences."
)

parser.add_argument(
    "--threshold",
    type=float,
    default=0.5,
    help="Threshold for the probability for detecting a target call.",
)

parser.add_argument(
    "--batch_size", type=int, default=1, help="The number of images per batch."
)

parser.add_argument(
    "--num_workers", type=int, default=4, help="Number of workers used in data-loading"
)

parser.add_argument(
    "--no_cuda",
    dest="cuda",
    action="store_false",
    help="Do not use cuda to train model.",
)

parser.add_argument(
    "--visualize",
    dest="visualize",
    action="store_true",
    help="Additional visualization of the noisy vs. denoised spectrogram",
)

parser.add_argument(
    "--jit_load",
    dest="jit_load",
    action="store_true",
    help="Load model via torch jit (otherwise via torch load).",
)

parser.add_argument(
    "--min_max_norm",
    dest="min_max_norm",
    action="store_true",
    help="activates min-max normalization instead of default 0/1-dB-normalization.",
)

parser.add_argument(
    "--latent_extract",
    dest="latent_extract",
    action="store_true",
    help="Extract bottleneck features instead of class probabilities.",
)

parser.add_argument(
    "audio_files", type=str, nargs="+", help="Audio file to predict the call locations"
)

ARGS = parser.parse_args()

log = Logger("PREDICT", ARGS.debug, ARGS.log_dir)

"""
Main function to compute prediction (segmentation) by using a trained model together with the given input
"""
if __name__ == "__main__":

    if ARGS.jit_load:
        extra_files = {}
        extra_files['dataOpts'] = ''
        model = torch.jit.load(ARGS.model_path, _extra_files=extra_files)
        dataOpts = eval(extra_files['dataOpts'])
        log.debug("Model successfully load via torch jit: " + str(ARGS.model_path))
    else:
        # ANIMAL-SPOT.pk is written by main.py on the training GPU
        model_dict = torch.load(ARGS.model_path)
        encoder = Encoder(model_dict["encoderOpts"])
        encoder.load_state_dict(model_dict["encoderState"])
        classifier = Classifier(model_dict["classifierOpts"])
        classifier.load_state_dict(model_dict["classifierState"])
        model = nn.Sequential(
            OrderedDict([("encoder", encoder), ("classifier", classifier)])
        )
        dataOpts = model_dict["dataOpts"]
        log.debug("Model successfully load via torch load: " + str(ARGS.model_path))

    log.info(model)

    if torch.cuda.is_available() and ARGS.cuda:
        model = model.cuda()
    model.eval()

    sr = dataOpts['sr']
    fmin = dataOpts["fmin"]
    fmax = dataOpts["fmax"]
    n_fft = dataOpts["n_fft"]
    hop_length = dataOpts["hop_length"]
    n_freq_bins = dataOpts["n_freq_bins"]
    freq_cmpr = dataOpts["freq_compression"]
    DefaultSpecDatasetOps = dataOpts

    log.debug("dataOpts: " + str(dataOpts))

    sequence_len = int(ceil(ARGS.sequence_len * sr))
    hop = int(ceil(ARGS.hop * sr))

    log.info("Predicting {} files".format(len(ARGS.audio_files)))

    for file_name in ARGS.audio_files:
        log.info(file_name)
        dataset = StridedAudioDataset(
            file_name.strip(),
            sequence_len=sequence_len,
            hop=hop,
            sr=sr,
            fft_size=n_fft,
            fft_hop=hop_length,
            n_freq_bins=n_freq_bins,
            freq_compression=freq_cmpr,
            f_min=fmin,
            f_max=fmax,
            min_max_normalize=ARGS.min_max_norm
        )

        data_loader = torch.utils.data.DataLoader(
            dataset,
            batch_size=ARGS.batch_size,
            num_workers=ARGS.num_workers,
            pin_memory=True,
        )

        log.info("size of the file(samples)={}".format(dataset.n_frames))
        log.info("size of hop(samples)={}".format(hop))
        stop = int(max(floor_div(dataset.n_frames, hop), 1))
        log.info("stop time={}".format(stop))

        output_lines = []
        with torch.no_grad():
            for i, input in enumerate(data_loader):
                input = input.cuda() if next(model.parameters()).is_cuda else input

                out = model(input).cpu()

                for n in range(out.shape[0]):
                    t_start = (i * ARGS.batch_size + n) * hop
                    t_end = min(t_start + sequence_len - 1, dataset.n_frames - 1)
                    prob = torch.nn.functional.softmax(out, dim=1).numpy()[n, 1]
                    pred = int(prob >= ARGS.threshold)
                    line = "time={}-{}, pred={}, prob={}".format(
                        t_start / sr, t_end / sr, pred, prob
                    )
                    log.info(line)
                    output_lines.append(line)

        if ARGS.output_dir is not None:
            os.makedirs(ARGS.output_dir, exist_ok=True)
            out_name = os.path.splitext(os.path.basename(file_name.strip()))[0] + "_predict_output.log"
            with open(os.path.join(ARGS.output_dir, out_name), "w") as f:
                f.write("\n".join(output_lines) + "\n")

    log.debug("Finished proccessing")

    log.close()


def floor_div(a, b):
    return a // b
