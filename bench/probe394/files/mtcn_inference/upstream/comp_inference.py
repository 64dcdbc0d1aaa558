import os
import sys
import glob
import time
import torch
import torchaudio
import numpy as np
from argparse import ArgumentParser

from microtcn.tcn import TCNModel
from microtcn.lstm import LSTMModel
from microtcn.utils import center_crop, causal_crop

parser = ArgumentParser()
parser.add_argument('--model_dir', type=str, default='./pretrained/')
parser.add_argument('--sample_rate', type=int, default=44100)
parser.add_argument('--N', type=int, default=1000, help="Number of timing iterations")
parser.add_argument('--block_sizes', type=int, nargs="+", default=[128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536])
parser.add_argument('--gpu', action="store_true", help="Run the timings on the GPU")
parser.add_argument('--save', action="store_true")
args = parser.parse_args()

torch.set_grad_enabled(False)


def sync():
    if args.gpu: torch.cuda.synchronize()


def run(model, block_size, rf, causal=False):
    # pad the input to account for the receptive field
    if causal:
        input = (torch.rand(1, 1, block_size + (rf - 1)) * 2) - 1
    else:
        input = (torch.rand(1, 1, block_size + (rf - 1) // 2 * 2) * 2) - 1

    params = torch.rand(1, 1, 2)

    if args.gpu:
        input = input.cuda()
        params = params.cuda()

    timings = []
    for n in range(args.N):
        sync()
        tic = time.perf_counter()
        output = model(input, params)
        sync()
        toc = time.perf_counter()
        timings.append(toc - tic)

    return np.mean(timings), output


def load_model(model_dir, model_id):
    checkpoint_path = glob.glob(os.path.join(model_dir,
                                             model_id,
                                             "lightning_logs",
                                             "version_0",
                                             "checkpoints",
                                             "*"))[0]
    hparams_file = os.path.join(model_dir, model_id, "hparams.yaml")
    batch_size = int(os.path.basename(checkpoint_path).split("-")[0].split("=")[-1])
    model_type = os.path.basename(model_id).split("-")[1]

    if model_type == "LSTM":
        model = LSTMModel.load_from_checkpoint(
            checkpoint_path=checkpoint_path,
            map_location="cpu"
        )
    else:
        model = TCNModel.load_from_checkpoint(
            checkpoint_path=checkpoint_path,
            map_location="cpu"
        )

    return model, model_type


if __name__ == '__main__':

    models = sorted(glob.glob(os.path.join(args.model_dir, "*")))
    results = {}

    for model_dir in models:
        model_id = os.path.basename(model_dir)
        model, model_type = load_model(args.model_dir, model_id)
        model.eval()

        if args.gpu:
            model.cuda()

        if model_type == "LSTM":
            rf = 1
            causal = True
        else:
            rf = model.compute_receptive_field()
            causal = model.hparams.causal

        print(f"{model_id} rf: {rf} causal: {causal}")
        results[model_id] = {}

        for block_size in args.block_sizes:
            # warm-up (cuDNN autotuning, allocator)
            run(model, block_size, rf, causal=causal)
            rtime, output = run(model, block_size, rf, causal=causal)
            rtf = (block_size / args.sample_rate) / rtime
            print(f"{block_size: 6d} samples  {rtime*1e3:0.3f} ms  {rtf:0.1f}x real-time")
            results[model_id][block_size] = {"time": rtime, "rtf": rtf}

    if args.save:
        device = "gpu" if args.gpu else "cpu"
        np.save(f"speed_{device}.npy", results)
