"""Fit a 2D image with an MLP on random Fourier features.

Reproduces the "none / basic / positional / gaussian" comparison of
Tancik et al., "Fourier Features Let Networks Learn High Frequency Functions in
Low Dimensional Domains" (NeurIPS 2020) with the layers from this package.

    python examples/image_regression.py --image fox.jpg --encoding gaussian --sigma 10
"""
import argparse
import os
import time

import imageio
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import rff


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('--image', type=str, default='data/fox.jpg')
    parser.add_argument('--resolution', type=int, default=512)
    parser.add_argument('--encoding', type=str, default='gaussian',
                        choices=['none', 'basic', 'positional', 'gaussian'])
    parser.add_argument('--sigma', type=float, default=10.0)
    parser.add_argument('--encoded_size', type=int, default=256)
    parser.add_argument('--pe_m', type=int, default=128)
    parser.add_argument('--hidden', type=int, default=256)
    parser.add_argument('--layers', type=int, default=4)
    parser.add_argument('--iters', type=int, default=2000)
    parser.add_argument('--lr', type=float, default=1e-3)
    parser.add_argument('--amp', action='store_true', help='train with mixed precision')
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--device', type=str, default='cuda:0')
    parser.add_argument('--out_dir', type=str, default='results')
    return parser.parse_args()


def load_image(path, resolution):
    img = imageio.imread(path)[..., :3] / 255.
    c = [img.shape[0] // 2, img.shape[1] // 2]
    r = min(c)
    img = img[c[0] - r:c[0] + r, c[1] - r:c[1] + r]
    img = torch.from_numpy(img).float().permute(2, 0, 1)[None]
    img = F.interpolate(img, size=(resolution, resolution), mode='bilinear', align_corners=False)
    return img[0].permute(1, 2, 0)  # (H, W, 3)


def make_encoder(args):
    if args.encoding == 'none':
        return nn.Identity(), 2
    if args.encoding == 'basic':
        return rff.layers.BasicEncoding(), 4
    if args.encoding == 'positional':
        return rff.layers.PositionalEncoding(sigma=args.sigma, m=args.pe_m), 4 * args.pe_m
    return rff.layers.GaussianEncoding(sigma=args.sigma, input_size=2, encoded_size=args.encoded_size), \
        2 * args.encoded_size


def make_mlp(in_features, hidden, layers):
    mods = [nn.Linear(in_features, hidden), nn.ReLU()]
    for _ in range(layers - 2):
        mods += [nn.Linear(hidden, hidden), nn.ReLU()]
    mods += [nn.Linear(hidden, 3), nn.Sigmoid()]
    return nn.Sequential(*mods)


def psnr(pred, target):
    return -10. * torch.log10(F.mse_loss(pred, target))


def main():
    args = get_args()
    torch.manual_seed(args.seed)
    torch.cuda.manual_seed_all(args.seed)
    np.random.seed(args.seed)
    os.makedirs(args.out_dir, exist_ok=True)

    device = torch.device(args.device)
    torch.backends.cudnn.benchmark = True

    img = load_image(args.image, args.resolution)
    coords = rff.dataloader.rectangular_coordinates((args.resolution, args.resolution))
    # train on every second pixel, test on the full grid (as in the paper)
    train_coords, train_img = coords[::2, ::2], img[::2, ::2]

    encoder, enc_dim = make_encoder(args)
    model = nn.Sequential(encoder, make_mlp(enc_dim, args.hidden, args.layers)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    X = train_coords.reshape(-1, 2).to(device)
    Y = train_img.reshape(-1, 3).to(device)
    X_test = coords.reshape(-1, 2).to(device)
    Y_test = img.reshape(-1, 3).to(device)

    log = []
    tic = time.time()
    for it in range(args.iters + 1):
        optimizer.zero_grad(set_to_none=True)
        with torch.cuda.amp.autocast(enabled=args.amp):
            pred = model(X)
            loss = F.mse_loss(pred.float(), Y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()

        if it % 100 == 0:
            with torch.no_grad():
                test_pred = model(X_test)
                test_psnr = psnr(test_pred.float(), Y_test).item()
            log.append((it, loss.item(), test_psnr))
            print(f'[{args.encoding}] iter {it:5d}  train loss {loss.item():.5f}  '
                  f'test psnr {test_psnr:.2f}  ({time.time() - tic:.1f}s)')

    with torch.no_grad():
        out = model(X_test).reshape(args.resolution, args.resolution, 3).float().clamp(0, 1)
    imageio.imwrite(os.path.join(args.out_dir, f'{args.encoding}.png'),
                    (out.cpu().numpy() * 255).astype(np.uint8))
    np.savetxt(os.path.join(args.out_dir, f'{args.encoding}_log.txt'), np.array(log))
    print(f'max memory allocated: {torch.cuda.max_memory_allocated(device) / 2 ** 20:.0f} MiB')


if __name__ == '__main__':
    main()
