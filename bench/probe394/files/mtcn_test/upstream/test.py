import os
import glob
import torch
import auraloss
import torchaudio
import numpy as np
import pytorch_lightning as pl
from tqdm import tqdm
from argparse import ArgumentParser

from microtcn.tcn import TCNModel
from microtcn.lstm import LSTMModel
from microtcn.data import SignalTrainLA2ADataset
from microtcn.utils import center_crop, causal_crop

parser = ArgumentParser()
parser.add_argument('--root_dir', type=str, default='./data')
parser.add_argument('--model_dir', type=str, default='./lightning_logs/bulk')
parser.add_argument('--preload', action="store_true")
parser.add_argument('--eval_subset', type=str, default='test')
parser.add_argument('--eval_length', type=int, default=8388608)
parser.add_argument('--num_workers', type=int, default=8)
parser.add_argument('--save_dir', type=str, default=None)
args = parser.parse_args()

results = {}

# the losses we will test
l1 = torch.nn.L1Loss()
stft = auraloss.freq.STFTLoss()
esr = auraloss.time.ESRLoss()

test_dataset = SignalTrainLA2ADataset(args.root_dir,
                                      preload=args.preload,
                                      subset=args.eval_subset,
                                      length=args.eval_length)

test_dataloader = torch.utils.data.DataLoader(test_dataset,
                                              shuffle=False,
                                              batch_size=1,
                                              num_workers=args.num_workers)

models = sorted(glob.glob(os.path.join(args.model_dir, "*")))

for idx, model_dir in enumerate(models):
    results[os.path.basename(model_dir)] = {}

    checkpoint_path = glob.glob(os.path.join(model_dir,
                                             "lightning_logs",
                                             "version_0",
                                             "checkpoints",
                                             "*"))[0]

    model_id = os.path.basename(model_dir)
    model_type = model_id.split("-")[0]
    print(f" {idx+1}/{len(models)} : epoch: {os.path.basename(checkpoint_path)} {model_id}")

    if model_type == "lstm":
        model = LSTMModel.load_from_checkpoint(checkpoint_path, map_location="cuda:0")
    else:
        model = TCNModel.load_from_checkpoint(checkpoint_path, map_location="cuda:0")

    model.eval()

    # set the seed
    pl.seed_everything(42)

    for bidx, batch in enumerate(tqdm(test_dataloader, ncols=80)):
        input, target, params = batch

        input = input.to("cuda:0")
        target = target.to("cuda:0")
        params = params.to("cuda:0")

        with torch.no_grad():
            pred = model(input, params)

        if model.hparams.causal:
            input_crop = causal_crop(input, pred.shape[-1])
            target_crop = causal_crop(target, pred.shape[-1])
        else:
            input_crop = center_crop(input, pred.shape[-1])
            target_crop = center_crop(target, pred.shape[-1])

        for idx, (i, t, p, e) in enumerate(zip(input_crop, target_crop, pred, params)):
            l1_loss = l1(p, t).cpu().numpy()
            stft_loss = stft(p, t).cpu().numpy()
            esr_loss = esr(p, t).cpu().numpy()

            params_key = f"{e[0, 0]:0.2f}-{e[0, 1]:0.2f}"
            if params_key not in results[os.path.basename(model_dir)]:
                results[os.path.basename(model_dir)][params_key] = {"L1": [], "STFT": [], "ESR": []}

            results[os.path.basename(model_dir)][params_key]["L1"].append(l1_loss)
            results[os.path.basename(model_dir)][params_key]["STFT"].append(stft_loss)
            results[os.path.basename(model_dir)][params_key]["ESR"].append(esr_loss)

            if args.save_dir is not None:
                os.makedirs(args.save_dir, exist_ok=True)
                torchaudio.save(os.path.join(args.save_dir, f"{model_id}_{bidx}_{params_key}.wav"),
                                p.cpu(), 44100)

    # print the per-model mean
    for params_key, losses in results[os.path.basename(model_dir)].items():
        print(f"{params_key}  L1 {np.mean(losses['L1']):0.3e}  STFT {np.mean(losses['STFT']):0.3f}  ESR {np.mean(losses['ESR']):0.3f}")

np.save("test_results.npy", results)
