"""Run a trained KW-MLP checkpoint on a wav file or a folder of wavs.

Examples:
    python inference.py --conf sample_configs/base_config.yaml --ckpt runs/kw-mlp-0.1.0/best.pth --inp sample.wav
    python inference.py --conf ... --ckpt ... --inp data/clips/ --batch_size 64 --out preds.json
    python inference.py --conf ... --ckpt ... --benchmark --half
"""

from argparse import ArgumentParser
import glob
import json
import os
import time

import numpy as np
import torch
from torch.utils.data import DataLoader
from tqdm import tqdm

from train import get_config
from utils.dataset import GoogleSpeechDataset
from utils.misc import get_model


@torch.no_grad()
def get_preds(net, dataloader, device, half=False) -> list:
    """Performs inference and returns class indices for every clip."""

    net.eval()
    preds_list = []

    for data in tqdm(dataloader):
        data = data.to(device)
        if half:
            data = data.half()
        out = net(data).argmax(1).cpu().numpy().ravel().tolist()
        preds_list.extend(out)
    return preds_list


@torch.no_grad()
def benchmark(net, input_res, device, batch_size=1, warmup=20, iters=200, half=False) -> dict:
    """Measures per-batch latency of the forward pass on the accelerator."""

    net.eval()
    x = torch.randn(batch_size, 1, *input_res, device=device)
    if half:
        x = x.half()
    for _ in range(warmup):
        net(x)

    starter, ender = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    timings = np.zeros(iters)
    for i in range(iters):
        starter.record()
        net(x)
        ender.record()
        torch.cuda.synchronize()
        timings[i] = starter.elapsed_time(ender)
    return {
        "batch_size": batch_size,
        "mean_ms": float(timings.mean()),
        "p50_ms": float(np.percentile(timings, 50)),
        "p99_ms": float(np.percentile(timings, 99)),
    }


def main(args):
    ######################
    # create model
    ######################
    config = get_config(args.conf)
    model = get_model(config["hparams"]["model"])

    ######################
    # load weights
    ######################
    ckpt = torch.load(args.ckpt, map_location="cpu")
    model.load_state_dict(ckpt["model_state_dict"])

    ######################
    # pick device
    ######################
    if args.device == "auto":
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    else:
        device = torch.device(args.device)
    model = model.to(device)
    use_half = args.half and device.type == "cuda"
    if use_half:
        model = model.half()
    print(f"Running on {device} ({'fp16' if use_half else 'fp32'})")

    if args.benchmark:
        stats = benchmark(model, config["hparams"]["model"]["input_res"], device, args.batch_size, half=use_half)
        print(json.dumps(stats, indent=2))
        return

    ######################
    # setup data
    ######################
    if os.path.isdir(args.inp):
        data_list = glob.glob(os.path.join(args.inp, "*.wav"))
    elif os.path.isfile(args.inp):
        data_list = [args.inp]
    else:
        raise FileNotFoundError(args.inp)

    dataset = GoogleSpeechDataset(data_list=data_list, label_map=None, audio_settings=config["hparams"]["audio"],
                                  aug_settings=None, cache=0)
    dataloader = DataLoader(dataset, batch_size=args.batch_size, shuffle=False)

    ######################
    # run inference
    ######################
    preds = get_preds(model, dataloader, device, half=use_half)

    ######################
    # save predictions
    ######################
    if args.lmap:
        with open(args.lmap, "r") as f:
            label_map = json.load(f)
        preds = list(map(lambda a: label_map[str(a)], preds))

    pred_dict = dict(zip(data_list, preds))

    os.makedirs(args.out, exist_ok=True)
    out_path = os.path.join(args.out, "preds.json")

    with open(out_path, "w+") as f:
        json.dump(pred_dict, f)

    print(f"Saved preds to {out_path}")


if __name__ == "__main__":
    parser = ArgumentParser()
    parser.add_argument("--conf", type=str, required=True, help="Path to config file. Will be used only to construct model and process audio.")
    parser.add_argument("--ckpt", type=str, required=True, help="Path to checkpoint file.")
    parser.add_argument("--inp", type=str, default="", help="Path to input. Can be a path to a .wav file, or a path to a folder containing .wav files.")
    parser.add_argument("--out", type=str, default="./", help="Path to output folder. Predictions will be stored in {out}/preds.json.")
    parser.add_argument("--lmap", type=str, default=None, help="Path to label_map.json. If not provided, will save predictions as class indices instead of class names.")
    parser.add_argument("--device", type=str, default="auto", help="One of auto, cpu, or cuda.")
    parser.add_argument("--batch_size", type=int, default=1, help="Batch size for batch inference.")
    parser.add_argument("--half", action="store_true", help="Run the model in fp16 (GPU only).")
    parser.add_argument("--benchmark", action="store_true", help="Time the forward pass with random input and exit.")

    args = parser.parse_args()

    assert os.path.exists(args.ckpt), f"Could not find checkpoint {args.ckpt}"

    main(args)
