"""Training / testing script for LLM4CP and the channel-prediction baselines.

Baselines: RNN, LSTM, GRU, vanilla Transformer, CNN, and the classical PAD
(Prony-based angular-delay) predictor.  Datasets are QuaDRiGa-generated
3GPP UMa MISO-OFDM channels (TDD: predict the next 4 uplink slots; FDD:
predict the downlink band from the uplink band).

    python train.py --model gpt --is_U2D 0 --epochs 500 --batch 1024 --gpu 0
    python train.py --model lstm --is_U2D 1 --test_only --ckpt weights/lstm_fdd.pth
"""
import argparse
import os
import time

import numpy as np
import scipy.io as sio
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

from models.GPT4CP import Model as GPT4CP
from models.baselines import RNN, LSTM, GRU, TransformerPredictor, CNNPredictor
from utils.pad import PAD3
from utils.metrics import NMSELoss, SE_Loss

parser = argparse.ArgumentParser()
parser.add_argument("--model", default="gpt", choices=["gpt", "rnn", "lstm", "gru", "transformer", "cnn", "pad"])
parser.add_argument("--is_U2D", type=int, default=0, help="0: TDD time-domain prediction, 1: FDD uplink-to-downlink")
parser.add_argument("--data_dir", default="./data/QuaDRiGa_UMa")
parser.add_argument("--epochs", type=int, default=500)
parser.add_argument("--batch", type=int, default=1024)
parser.add_argument("--lr", type=float, default=1e-4)
parser.add_argument("--prev_len", type=int, default=16)
parser.add_argument("--pred_len", type=int, default=4)
parser.add_argument("--K", type=int, default=48, help="number of pilot subcarriers")
parser.add_argument("--gpt_layers", type=int, default=6)
parser.add_argument("--gpu", type=str, default="0")
parser.add_argument("--seed", type=int, default=2024)
parser.add_argument("--test_only", action="store_true")
parser.add_argument("--ckpt", default="")
parser.add_argument("--save_dir", default="./weights")
parser.add_argument("--snr_list", type=str, default="0,5,10,15,20,25")
args = parser.parse_args()

gpu_list = args.gpu
os.environ["CUDA_VISIBLE_DEVICES"] = gpu_list
torch.manual_seed(args.seed)
np.random.seed(args.seed)


def noise(H, SNR):
    """Add complex Gaussian noise at a given SNR (dB) to real/imag-stacked CSI."""
    sigma = 10 ** (-SNR / 10)
    add_noise = np.sqrt(sigma / 2) * (np.random.randn(*H.shape) + 1j * np.random.randn(*H.shape))
    add_noise = add_noise * np.sqrt(np.mean(np.abs(H) ** 2))
    return H + add_noise


def LoadBatch(H):
    """[B, T, mul] complex -> [B, T, mul*2] float32 tensor (real then imag)."""
    B, T, mul = H.shape
    H_real = np.zeros([B, T, mul, 2])
    H_real[:, :, :, 0] = H.real
    H_real[:, :, :, 1] = H.imag
    H_real = H_real.reshape([B, T, mul * 2])
    return torch.tensor(H_real, dtype=torch.float32)


def real2complex(x):
    x = x.reshape(*x.shape[:-1], -1, 2)
    return x[..., 0] + 1j * x[..., 1]


class CSIDataset(Dataset):
    def __init__(self, file_path, is_train=1, ir=1, SNR=15, is_U2D=0, is_few=0, prev_len=16, pred_len=4):
        super().__init__()
        self.pred_len = pred_len
        self.prev_len = prev_len
        self.seq_len = pred_len + prev_len
        self.is_U2D = is_U2D
        self.SNR = SNR
        mat = sio.loadmat(file_path)
        if is_U2D:
            H_up = mat["H_U_his_train" if is_train else "H_U_his_test"]
            H_down = mat["H_D_pre_train" if is_train else "H_D_pre_test"]
            self.H_his = H_up.reshape(-1, *H_up.shape[-2:])
            self.H_pre = H_down.reshape(-1, *H_down.shape[-2:])
        else:
            H = mat["H_U_his_train" if is_train else "H_U_his_test"]
            H = H.reshape(-1, *H.shape[-2:])
            self.H_his = H[:, :prev_len]
            self.H_pre = H[:, prev_len:prev_len + pred_len]
        if is_few:
            n = int(0.1 * len(self.H_his))
            self.H_his, self.H_pre = self.H_his[:n], self.H_pre[:n]
        self.ir = ir

    def __len__(self):
        return len(self.H_his)

    def __getitem__(self, idx):
        his = noise(self.H_his[idx:idx + 1], self.SNR)
        pre = self.H_pre[idx:idx + 1]
        return LoadBatch(his)[0], LoadBatch(pre)[0]


def build_model(name):
    if name == "gpt":
        return GPT4CP(gpu_id=0, pred_len=args.pred_len, prev_len=args.prev_len, K=args.K,
                      gpt_layers=args.gpt_layers, UQh=1, UQv=1, BQh=2, BQv=2)
    enc_in = args.K * 4 * 2
    if name == "rnn":
        return RNN(enc_in, enc_in, 256, 4, args.pred_len)
    if name == "lstm":
        return LSTM(enc_in, enc_in, 256, 4, args.pred_len)
    if name == "gru":
        return GRU(enc_in, enc_in, 256, 4, args.pred_len)
    if name == "transformer":
        return TransformerPredictor(enc_in, d_model=128, n_heads=8, n_layers=4, pred_len=args.pred_len)
    if name == "cnn":
        return CNNPredictor(args.prev_len, args.pred_len, enc_in)
    raise ValueError(name)


def train(model, device):
    train_set = CSIDataset(os.path.join(args.data_dir, "H_U_his_train.mat"), is_train=1,
                           is_U2D=args.is_U2D, prev_len=args.prev_len, pred_len=args.pred_len)
    val_set = CSIDataset(os.path.join(args.data_dir, "H_U_his_val.mat"), is_train=0,
                         is_U2D=args.is_U2D, prev_len=args.prev_len, pred_len=args.pred_len)
    train_loader = DataLoader(train_set, batch_size=args.batch, shuffle=True, num_workers=16,
                              drop_last=False, pin_memory=True)
    val_loader = DataLoader(val_set, batch_size=args.batch, shuffle=False, num_workers=16)

    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(params, lr=args.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs, eta_min=1e-6)
    criterion = NMSELoss()
    best_loss = 100
    save_path = os.path.join(args.save_dir, "%s_%s.pth" % (args.model, "fdd" if args.is_U2D else "tdd"))
    os.makedirs(args.save_dir, exist_ok=True)

    for epoch in range(args.epochs):
        epoch_train_loss, epoch_val_loss = [], []
        model.train()
        t0 = time.time()
        for it, (his, pre) in enumerate(train_loader, 1):
            his, pre = his.to(device), pre.to(device)
            pred = model(his, None, None, None)
            loss = criterion(pred, pre)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            epoch_train_loss.append(loss.item())
        scheduler.step()

        model.eval()
        with torch.no_grad():
            for his, pre in val_loader:
                his, pre = his.to(device), pre.to(device)
                pred = model(his, None, None, None)
                epoch_val_loss.append(criterion(pred, pre).item())
        v = float(np.nanmean(epoch_val_loss))
        print("Epoch %d/%d | train %.5f | val %.5f | %.1fs | lr %.2e" % (
            epoch + 1, args.epochs, float(np.nanmean(epoch_train_loss)), v, time.time() - t0,
            optimizer.param_groups[0]["lr"]))
        if v < best_loss:
            best_loss = v
            state = model.module.state_dict() if isinstance(model, nn.DataParallel) else model.state_dict()
            torch.save({"state_dict": state, "epoch": epoch, "val": v}, save_path)
            print("  -> saved %s" % save_path)
        torch.cuda.empty_cache()
    return save_path


@torch.no_grad()
def test(model, device):
    snrs = [int(s) for s in args.snr_list.split(",")]
    criterion = NMSELoss()
    se_loss = SE_Loss(snr=10, device=device)
    results = {}
    for snr in snrs:
        test_set = CSIDataset(os.path.join(args.data_dir, "H_U_his_test.mat"), is_train=0, SNR=snr,
                              is_U2D=args.is_U2D, prev_len=args.prev_len, pred_len=args.pred_len)
        loader = DataLoader(test_set, batch_size=args.batch, shuffle=False, num_workers=8)
        nmse, se, n = 0.0, 0.0, 0
        tic = time.time()
        for his, pre in loader:
            if args.model == "pad":
                pred = PAD3(his.numpy(), p=4, pred_len=args.pred_len)
                pred = torch.from_numpy(pred).float()
                his, pre = his.to(device), pre.to(device)
                pred = pred.to(device)
            else:
                his, pre = his.to(device), pre.to(device)
                pred = model(his, None, None, None)
            b = his.shape[0]
            nmse += criterion(pred, pre).item() * b
            se += se_loss(pred, pre).item() * b
            n += b
        torch.cuda.synchronize()
        dt = (time.time() - tic) / n
        results[snr] = (10 * np.log10(nmse / n), se / n, dt * 1e3)
        print("SNR %2d dB | NMSE %.3f dB | SE %.3f bps/Hz | %.4f ms/sample" % (snr, *results[snr]))
    return results


def main():
    device = torch.device("cuda:0")
    print("Using %d GPU(s): %s" % (torch.cuda.device_count(), gpu_list))
    model = None
    if args.model != "pad":
        model = build_model(args.model).to(device)
        if torch.cuda.device_count() > 1:
            model = nn.DataParallel(model)
        n_total = sum(p.numel() for p in model.parameters())
        n_train = sum(p.numel() for p in model.parameters() if p.requires_grad)
        print("params: total %.2fM, trainable %.2fM" % (n_total / 1e6, n_train / 1e6))

    if not args.test_only and model is not None:
        args.ckpt = train(model, device)
    if model is not None and args.ckpt:
        ckpt = torch.load(args.ckpt, map_location=lambda storage, loc: storage.cuda(0))
        target = model.module if isinstance(model, nn.DataParallel) else model
        target.load_state_dict(ckpt["state_dict"])
        model.eval()
    test(model, device)


if __name__ == "__main__":
    main()
