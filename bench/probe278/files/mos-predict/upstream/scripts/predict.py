#!/usr/bin/env python3
# @file      predict.py
# @author    Benedikt Mersch     [mersch@igg.uni-bonn.de]
# Copyright (c) 2022 Benedikt Mersch, all rights reserved

import click
import yaml
import os
import time
import numpy as np
import torch
from pytorch_lightning import Trainer

import mos4d.datasets.datasets as datasets
import mos4d.models.models as models


@click.command()
### Add your options here
@click.option(
    "--weights",
    "-w",
    type=str,
    help="path to checkpoint file (.ckpt) to do inference.",
    required=True,
)
@click.option(
    "--sequence",
    "-seq",
    type=int,
    help="Run inference on a specific sequence. Otherwise, test split from config is used.",
    default=None,
    multiple=True,
)
@click.option(
    "--dt",
    "-dt",
    type=float,
    help="Desired temporal resolution of predictions.",
    default=None,
)
@click.option("--poses", "-poses", type=str, default=None, help="Specify which poses to use.")
@click.option(
    "--transform",
    "-transform",
    type=bool,
    default=None,
    help="Transform point clouds to common viewpoint.",
)
@click.option(
    "--benchmark",
    is_flag=True,
    default=False,
    help="Only time the network on the first 100 samples.",
)
def main(weights, sequence, dt, poses, transform, benchmark):
    cfg = torch.load(weights)["hyper_parameters"]

    if poses:
        cfg["DATA"]["POSES"] = poses

    if transform != None:
        cfg["DATA"]["TRANSFORM"] = transform
        if not transform:
            cfg["DATA"]["POSES"] = "no_poses"

    if sequence:
        cfg["DATA"]["SPLIT"]["TEST"] = list(sequence)

    if dt:
        cfg["MODEL"]["DELTA_T_PREDICTION"] = dt

    cfg["TRAIN"]["BATCH_SIZE"] = 1

    # Load data and model
    cfg["DATA"]["SPLIT"]["TRAIN"] = cfg["DATA"]["SPLIT"]["TEST"]
    cfg["DATA"]["SPLIT"]["VAL"] = cfg["DATA"]["SPLIT"]["TEST"]
    data = datasets.KittiSequentialModule(cfg)
    data.setup()

    ckpt = torch.load(weights)
    model = models.MOSNet(cfg)
    model.load_state_dict(ckpt["state_dict"])
    model = model.cuda()
    model.eval()
    model.freeze()

    if benchmark:
        times = []
        loader = data.test_dataloader()
        with torch.no_grad():
            for i, (meta, past_point_clouds, _) in enumerate(loader):
                if i == 100:
                    break
                past_point_clouds = [pc.cuda(non_blocking=True) for pc in past_point_clouds]
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                model(past_point_clouds)
                end.record()
                torch.cuda.synchronize()
                times.append(start.elapsed_time(end))
        print(
            "MOS inference: {:.1f} ms / sample (median {:.1f} ms)".format(
                np.mean(times[10:]), np.median(times[10:])
            )
        )
        return

    # Setup trainer
    trainer = Trainer(accelerator="gpu", devices=1, logger=False)

    # Infer!
    trainer.predict(model, data.test_dataloader())


if __name__ == "__main__":
    main()
