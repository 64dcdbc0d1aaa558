#!/usr/bin/env python3
# -*- coding: utf-8 -*-

# Copyright 2024 Wen-Chin Huang
#  MIT License (https://opensource.org/licenses/MIT)

"""Inference with trained speech quality assessment model."""

import argparse
import logging
import os
import time

import numpy as np
import sheet
import sheet.datasets
import sheet.models
import torch
import yaml
from sheet.evaluation.metrics import calculate
from sheet.utils import read_csv, write_csv
from tqdm import tqdm


def main():
    """Run inference process."""
    parser = argparse.ArgumentParser(
        description=("Inference with trained SSQA model (See detail in bin/inference.py).")
    )
    parser.add_argument("--csv-path", required=True, type=str, help=("csv file path."))
    parser.add_argument("--checkpoint", type=str, required=True, help="checkpoint file to be loaded.")
    parser.add_argument(
        "--config",
        default=None,
        type=str,
        help=(
            "yaml format configuration file. if not explicitly provided, "
            "it will be searched in the checkpoint directory. (default=None)"
        ),
    )
    parser.add_argument("--outdir", type=str, required=True, help="directory to save results.")
    parser.add_argument("--use-mean-listener", type=int, default=1, help="use mean listener for inference.")
    parser.add_argument("--verbose", type=int, default=1, help="logging level. higher is more logging. (default=1)")
    args = parser.parse_args()

    # set logger
    if args.verbose > 1:
        logging.basicConfig(level=logging.DEBUG, format="%(asctime)s (%(module)s:%(lineno)d) %(levelname)s: %(message)s")
    elif args.verbose > 0:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s (%(module)s:%(lineno)d) %(levelname)s: %(message)s")
    else:
        logging.basicConfig(level=logging.WARN, format="%(asctime)s (%(module)s:%(lineno)d) %(levelname)s: %(message)s")
        logging.warning("Skip DEBUG/INFO messages")

    # check directory existence
    if not os.path.exists(args.outdir):
        os.makedirs(args.outdir)

    # load config
    if args.config is None:
        dirname = os.path.dirname(args.checkpoint)
        args.config = os.path.join(dirname, "config.yml")
    with open(args.config) as f:
        config = yaml.load(f, Loader=yaml.Loader)
    config.update(vars(args))
    for key, value in config.items():
        logging.info(f"{key} = {value}")

    # get dataset
    dataset = sheet.datasets.NonIntrusiveDataset(
        csv_path=args.csv_path,
        target_sample_rate=config["sampling_rate"],
        model_input=config["model_input"],
        wav_only=True,
        allow_cache=False,
    )
    logging.info(f"The number of inference files = {len(dataset)}.")

    # setup device
    if torch.cuda.is_available():
        device = torch.device("cuda")
    else:
        device = torch.device("cpu")
    logging.info(f"Running inference on {device}.")

    # setup model
    model_class = getattr(sheet.models, config["model_type"])
    model = model_class(
        config["model_input"],
        num_listeners=config.get("num_listeners", None),
        num_domains=config.get("num_domains", None),
        **config["model_params"],
    )
    model.load_state_dict(torch.load(args.checkpoint, map_location="cpu")["model"])
    model = model.eval().to(device)
    logging.info(f"Loaded model parameters from {args.checkpoint}.")

    # start inference
    eval_results = []
    total_inference_time = 0.0
    total_audio_seconds = 0.0
    with torch.no_grad(), tqdm(dataset, desc="[inference]") as pbar:
        for batch in pbar:
            # set up model input
            model_input = batch[config["model_input"]].unsqueeze(0).to(device)
            model_lengths = model_input.new_tensor([model_input.size(1)]).long()
            inputs = {
                config["model_input"]: model_input,
                config["model_input"] + "_lengths": model_lengths,
            }
            if "domain_idx" in batch:
                inputs["domain_idxs"] = torch.tensor([batch["domain_idx"]], dtype=torch.long).to(device)

            # model forward, timed for RTF reporting
            start_time = time.time()
            if args.use_mean_listener:
                outputs = model.mean_listener_inference(inputs)
            else:
                outputs = model.average_inference(inputs)
            if device.type == "cuda":
                torch.cuda.synchronize()
            total_inference_time += time.time() - start_time
            total_audio_seconds += model_input.size(1) / config["sampling_rate"]

            # store results
            pred_mean_scores = outputs["scores"].cpu().detach().numpy()[0]
            true_mean_scores = batch["avg_score"]
            eval_results.append(
                {
                    "sample_id": batch["sample_id"],
                    "system_id": batch["system_id"],
                    "answer": pred_mean_scores,
                    "avg_score": true_mean_scores,
                }
            )

    logging.info(
        "Finished inference of {} samples, RTF = {:.4f}".format(
            len(eval_results), total_inference_time / max(total_audio_seconds, 1e-8)
        )
    )

    # write results
    results_path = os.path.join(args.outdir, "results.csv")
    write_csv(eval_results, results_path)

    # calculate metrics
    true_mean_scores = np.array([r["avg_score"] for r in eval_results])
    predict_mean_scores = np.array([r["answer"] for r in eval_results])
    system_ids = [r["system_id"] for r in eval_results]
    results = calculate(true_mean_scores, predict_mean_scores, system_ids)
    logging.info(
        f"[UTT][ MSE = {results['utt_MSE']:.3f} | LCC = {results['utt_LCC']:.3f} | SRCC = {results['utt_SRCC']:.3f} ] "
        f"[SYS][ MSE = {results['sys_MSE']:.3f} | LCC = {results['sys_LCC']:.4f} | SRCC = {results['sys_SRCC']:.4f} ]"
    )


if __name__ == "__main__":
    main()
