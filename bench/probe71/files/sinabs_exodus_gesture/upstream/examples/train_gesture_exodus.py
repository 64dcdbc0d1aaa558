"""
Train a squeezed IAF convolutional SNN on DVS Gesture with sinabs, using the EXODUS backend for the
neuron layers during training, then deploy the sinabs version of the same network to a Speck dev kit.

    python examples/train_gesture_exodus.py --backend exodus --epochs 30 --amp
    python examples/train_gesture_exodus.py --backend sinabs --deploy speck2fdevkit:0
"""
import argparse
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

import tonic
import tonic.transforms as T

import sinabs
import sinabs.layers as sl
from sinabs.activation import PeriodicExponential, MembraneSubtract

try:
    from sinabs.exodus.conversion import exodus_to_sinabs, sinabs_to_exodus
    EXODUS_AVAILABLE = True
except ImportError:
    EXODUS_AVAILABLE = False


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", default="./data")
    parser.add_argument("--cache-dir", default="./cache/gesture")
    parser.add_argument("--n-time-bins", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--backend", choices=["sinabs", "exodus"], default="exodus")
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--amp", action="store_true")
    parser.add_argument("--deploy", default=None, help="e.g. speck2fdevkit:0")
    parser.add_argument("--out", default="./checkpoints/gesture")
    return parser.parse_args()


def build_snn(batch_size: int) -> nn.Sequential:
    def iaf():
        return sl.IAFSqueeze(batch_size=batch_size, spike_threshold=1.0, min_v_mem=-1.0,
                             surrogate_grad_fn=PeriodicExponential(), spike_fn=sinabs.activation.MultiSpike,
                             reset_fn=MembraneSubtract())

    return nn.Sequential(
        nn.Conv2d(2, 16, kernel_size=2, stride=2, bias=False), iaf(),
        nn.Conv2d(16, 32, kernel_size=3, padding=1, bias=False), iaf(),
        nn.AvgPool2d(2),
        nn.Conv2d(32, 64, kernel_size=3, padding=1, bias=False), iaf(),
        nn.AvgPool2d(2),
        nn.Conv2d(64, 128, kernel_size=3, padding=1, bias=False), iaf(),
        nn.AvgPool2d(2),
        nn.Flatten(),
        nn.Linear(128 * 4 * 4, 256, bias=False), iaf(),
        nn.Linear(256, 11, bias=False), iaf(),
    )


def get_loaders(args):
    sensor_size = tonic.datasets.DVSGesture.sensor_size
    transform = T.Compose([
        T.Downsample(spatial_factor=0.5),
        T.ToFrame(sensor_size=(64, 64, 2), n_time_bins=args.n_time_bins),
    ])
    train_set = tonic.datasets.DVSGesture(save_to=args.data_dir, train=True, transform=transform)
    test_set = tonic.datasets.DVSGesture(save_to=args.data_dir, train=False, transform=transform)
    train_set = tonic.DiskCachedDataset(train_set, cache_path=os.path.join(args.cache_dir, "train"))
    test_set = tonic.DiskCachedDataset(test_set, cache_path=os.path.join(args.cache_dir, "test"))
    kw = dict(batch_size=args.batch_size, num_workers=4, drop_last=True, pin_memory=True)
    return DataLoader(train_set, shuffle=True, **kw), DataLoader(test_set, shuffle=False, **kw)


def run_batch(model, frames, batch_size):
    # frames: [B, T, C, H, W] -> squeezed [B*T, C, H, W]; output [B, T, classes] summed over time
    B, Tb = frames.shape[:2]
    out = model(frames.flatten(0, 1).float())
    return out.unflatten(0, (B, Tb)).sum(1)


def main():
    args = get_args()
    if args.backend == "exodus" and not EXODUS_AVAILABLE:
        raise RuntimeError("--backend exodus needs sinabs-exodus (pip install sinabs-exodus, needs nvcc)")
    torch.backends.cudnn.benchmark = True
    device = torch.device(args.device)

    train_loader, test_loader = get_loaders(args)
    model = build_snn(args.batch_size)
    if args.backend == "exodus":
        model = sinabs_to_exodus(model)
    model = model.to(device)

    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)
    os.makedirs(args.out, exist_ok=True)
    best = 0.0

    for epoch in range(args.epochs):
        model.train()
        t0 = time.time()
        for frames, target in train_loader:
            frames = frames.to(device, non_blocking=True)
            target = target.to(device, non_blocking=True)
            sinabs.reset_states(model)
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=args.amp):
                logits = run_batch(model, frames, args.batch_size)
                loss = F.cross_entropy(logits, target)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            sinabs.zero_grad(model)

        model.eval()
        correct, total = 0, 0
        with torch.no_grad():
            for frames, target in test_loader:
                frames, target = frames.to(device), target.to(device)
                sinabs.reset_states(model)
                pred = run_batch(model, frames, args.batch_size).argmax(1)
                correct += (pred == target).sum().item()
                total += target.numel()
        torch.cuda.empty_cache()
        acc = correct / total
        print(f"epoch {epoch}: loss {loss.item():.4f} acc {acc:.4f} ({time.time() - t0:.0f}s)")
        if acc > best:
            best = acc
            torch.save(model.state_dict(), os.path.join(args.out, f"{args.backend}_best.pt"))

    if args.deploy:
        # The chip only understands the plain sinabs layers; convert back and quantise on the host.
        from sinabs.backend.dynapcnn import DynapcnnNetwork
        snn = exodus_to_sinabs(model) if args.backend == "exodus" else model
        snn = snn.cpu()
        hw_model = DynapcnnNetwork(snn, input_shape=(2, 64, 64), discretize=True, dvs_input=True)
        hw_model.to(device=args.deploy)
        print(f"deployed to {args.deploy}")


if __name__ == "__main__":
    main()
