"""CsiNet (PyTorch re-implementation) -- training / evaluation entry point.

Reproduces "Deep Learning for Massive MIMO CSI Feedback" (Wen, Shih, Jin, 2018)
on the COST2100 indoor (5.3 GHz) and outdoor (300 MHz) datasets.

Originally written against Keras; this port keeps the same data layout
(2 x 32 x 32 real/imag planes, truncated angular-delay domain) and the same
NMSE / rho metrics so numbers can be compared with the paper tables.

Usage:
    python main.py --envir indoor --encoded_dim 512 --epochs 1000 --gpu 0
"""
import argparse
import math
import os
import time

import numpy as np
import scipy.io as sio
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

from models.csinet import CsiNet

parser = argparse.ArgumentParser(description="CsiNet PyTorch")
parser.add_argument("--envir", type=str, default="indoor", choices=["indoor", "outdoor"])
parser.add_argument("--encoded_dim", type=int, default=512,
                    help="codeword length: 512 (CR=1/4), 128 (1/16), 64 (1/32), 32 (1/64)")
parser.add_argument("--epochs", type=int, default=1000)
parser.add_argument("--batch_size", type=int, default=200)
parser.add_argument("--lr", type=float, default=1e-3)
parser.add_argument("--residual_num", type=int, default=2)
parser.add_argument("--data_dir", type=str, default="./data")
parser.add_argument("--save_dir", type=str, default="./saved_model")
parser.add_argument("--gpu", type=str, default="0", help="which GPU(s) to use, e.g. '0' or '0,1'")
parser.add_argument("--evaluate", action="store_true", help="only run the test set")
parser.add_argument("--seed", type=int, default=42)
parser.add_argument("--print_freq", type=int, default=50)
args = parser.parse_args()

os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu

# data layout constants (COST2100 after 2-D DFT and truncation)
img_height = 32
img_width = 32
img_channels = 2
img_total = img_height * img_width * img_channels

torch.manual_seed(args.seed)
np.random.seed(args.seed)

use_cuda = torch.cuda.is_available()
device = torch.device("cuda" if use_cuda else "cpu")
if use_cuda:
    torch.backends.cudnn.benchmark = True
    print("=> using GPU(s):", args.gpu, torch.cuda.get_device_name(0))
else:
    print("=> CUDA not found, training on CPU will be VERY slow")


def load_split(name):
    """Load one of the COST2100 .mat splits and reshape to N x 2 x 32 x 32."""
    path = os.path.join(args.data_dir, "DATA_H%s%s.mat" % (name, args.envir[:2]))
    mat = sio.loadmat(path)
    x = mat["HT"].astype("float32")
    x = np.reshape(x, (len(x), img_channels, img_height, img_width))
    return x


def load_test_freq():
    """Frequency-domain test channels used for rho (cosine similarity)."""
    path = os.path.join(args.data_dir, "DATA_HtestF%s_all.mat" % args.envir[:2])
    mat = sio.loadmat(path)
    x_f = mat["HF_all"]
    x_f = np.reshape(x_f, (len(x_f), img_height, 125))
    return x_f


def nmse_and_rho(x_hat, x_test, x_test_f):
    """Compute NMSE (dB) and rho exactly like the original Keras evaluation script."""
    x_test_real = np.reshape(x_test[:, 0, :, :], (len(x_test), -1))
    x_test_imag = np.reshape(x_test[:, 1, :, :], (len(x_test), -1))
    x_test_c = x_test_real - 0.5 + 1j * (x_test_imag - 0.5)
    x_hat_real = np.reshape(x_hat[:, 0, :, :], (len(x_hat), -1))
    x_hat_imag = np.reshape(x_hat[:, 1, :, :], (len(x_hat), -1))
    x_hat_c = x_hat_real - 0.5 + 1j * (x_hat_imag - 0.5)

    x_hat_f = np.reshape(x_hat_c, (len(x_hat_c), img_height, img_width))
    x_hat_f = np.fft.fft(np.concatenate((x_hat_f, np.zeros((len(x_hat_c), img_height, 257 - img_width))),
                                        axis=2), axis=2)
    x_hat_f = x_hat_f[:, :, 0:125]

    n1 = np.sqrt(np.sum(np.conj(x_test_f) * x_test_f, axis=1)).astype("float64")
    n2 = np.sqrt(np.sum(np.conj(x_hat_f) * x_hat_f, axis=1)).astype("float64")
    aa = abs(np.sum(np.conj(x_test_f) * x_hat_f, axis=1))
    rho = np.mean(aa / (n1 * n2), axis=1)

    power = np.sum(abs(x_test_c) ** 2, axis=1)
    mse = np.sum(abs(x_test_c - x_hat_c) ** 2, axis=1)
    nmse = 10 * math.log10(np.mean(mse / power))
    return nmse, np.mean(rho)


def adjust_learning_rate(optimizer, epoch):
    """Step decay used in several CsiNet follow-ups (CsiNet+, CRNet)."""
    lr = args.lr
    if epoch >= 300:
        lr *= 0.1
    if epoch >= 600:
        lr *= 0.1
    for group in optimizer.param_groups:
        group["lr"] = lr
    return lr


def train_one_epoch(model, loader, criterion, optimizer, epoch):
    model.train()
    running = 0.0
    t0 = time.time()
    for i, (x,) in enumerate(loader):
        x = x.cuda(non_blocking=True)
        out = model(x)
        loss = criterion(out, x)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running += loss.item()
        if (i + 1) % args.print_freq == 0:
            print("Epoch [%d][%d/%d]  loss %.3e  (%.1fs)" % (
                epoch, i + 1, len(loader), running / (i + 1), time.time() - t0))
    return running / len(loader)


@torch.no_grad()
def validate(model, loader, criterion):
    model.eval()
    total = 0.0
    for (x,) in loader:
        x = x.to(device)
        out = model(x)
        total += criterion(out, x).item() * x.size(0)
    return total / len(loader.dataset)


@torch.no_grad()
def test(model, x_test, x_test_f):
    model.eval()
    x = torch.from_numpy(x_test).cuda()
    torch.cuda.synchronize()
    tic = time.time()
    x_hat = model(x)
    torch.cuda.synchronize()  # wait for the forward kernels before stopping the clock
    toc = time.time()
    print("=> inference time per sample: %.4f ms" % ((toc - tic) / len(x_test) * 1e3))
    x_hat = x_hat.cpu().numpy()
    nmse, rho = nmse_and_rho(x_hat, x_test, x_test_f)
    print("=> NMSE is %.4f dB, rho is %.4f" % (nmse, rho))
    return nmse, rho


def main():
    x_train = load_split("train")
    x_val = load_split("val")
    x_test = load_split("test")
    x_test_f = load_test_freq()
    print("=> train %s  val %s  test %s" % (x_train.shape, x_val.shape, x_test.shape))

    train_loader = DataLoader(TensorDataset(torch.from_numpy(x_train)), batch_size=args.batch_size,
                              shuffle=True, num_workers=4, pin_memory=True, drop_last=False)
    val_loader = DataLoader(TensorDataset(torch.from_numpy(x_val)), batch_size=args.batch_size,
                            shuffle=False, num_workers=4, pin_memory=use_cuda)

    model = CsiNet(encoded_dim=args.encoded_dim, residual_num=args.residual_num)
    if len(args.gpu.split(",")) > 1:
        model = nn.DataParallel(model)
    model = model.cuda()

    n_params = sum(p.numel() for p in model.parameters())
    print("=> CsiNet  CR=1/%d  params=%.2fK" % (img_total // args.encoded_dim, n_params / 1e3))

    criterion = nn.MSELoss().cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    os.makedirs(args.save_dir, exist_ok=True)
    ckpt = os.path.join(args.save_dir, "csinet_%s_dim%d.pth" % (args.envir, args.encoded_dim))

    if args.evaluate:
        state = torch.load(ckpt, map_location="cuda:0")
        model.load_state_dict(state["state_dict"])
        test(model, x_test, x_test_f)
        return

    best_loss = float("inf")
    for epoch in range(args.epochs):
        lr = adjust_learning_rate(optimizer, epoch)
        train_loss = train_one_epoch(model, train_loader, criterion, optimizer, epoch)
        val_loss = validate(model, val_loader, criterion)
        print("=> epoch %d  lr %.1e  train %.3e  val %.3e  mem %.0fMB" % (
            epoch, lr, train_loss, val_loss, torch.cuda.max_memory_allocated() / 2 ** 20))
        if val_loss < best_loss:
            best_loss = val_loss
            torch.save({"epoch": epoch, "state_dict": model.state_dict(), "best_loss": best_loss}, ckpt)
            print("=> best model saved to %s" % ckpt)

    state = torch.load(ckpt)
    model.load_state_dict(state["state_dict"])
    test(model, x_test, x_test_f)


if __name__ == "__main__":
    main()
