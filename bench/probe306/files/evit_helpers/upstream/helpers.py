import math
import os
import time

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image


def adjust_keep_rate(iters, epoch, warmup_epochs, total_epochs,
                     ITERS_PER_EPOCH, base_keep_rate=0.5, max_keep_rate=1):
    if epoch < warmup_epochs:
        return 1
    if epoch >= total_epochs:
        return base_keep_rate
    if iters == -1:
        return base_keep_rate
    total_iters = ITERS_PER_EPOCH * (total_epochs - warmup_epochs)
    iters = iters - ITERS_PER_EPOCH * warmup_epochs
    keep_rate = base_keep_rate + (max_keep_rate - base_keep_rate) \
        * (math.cos(iters / total_iters * math.pi) + 1) * 0.5

    return keep_rate


def speed_test(model, ntest=100, batchsize=64, x=None, **kwargs):
    if x is None:
        img_size = model.img_size
        x = torch.rand(batchsize, 3, *img_size).cuda()
    else:
        batchsize = x.shape[0]
    model.eval()

    start = time.time()
    with torch.no_grad():
        for i in range(ntest):
            model(x, **kwargs)
    torch.cuda.synchronize()
    end = time.time()

    elapse = end - start
    speed = batchsize * ntest / elapse
    # speed = torch.tensor(speed, device=x.device)
    # torch.distributed.broadcast(speed, src=0, async_op=False)
    # speed = speed.item()
    return speed


def get_macs(model, x=None):
    import thop
    model.eval()
    if x is None:
        img_size = model.img_size
        x = torch.rand(1, 3, *img_size).cuda()
    macs, params = thop.profile(model, inputs=(x,), verbose=False)
    return macs


def test_speed_and_macs(model, keep_rates=(1.0, 0.9, 0.8, 0.7, 0.6, 0.5), batchsize=128):
    """Print throughput / GMACs for a list of keep rates (Table 2 in the paper)."""
    torch.cuda.empty_cache()
    img_size = model.img_size
    x = torch.rand(batchsize, 3, *img_size, device='cuda')
    # warm-up so cuDNN autotuning is not in the timing
    speed_test(model, ntest=20, x=x)
    for rate in keep_rates:
        speed = speed_test(model, ntest=100, x=x, keep_rate=rate)
        macs = get_macs(model, x=x[:1]) if rate == keep_rates[0] else float('nan')
        print(f'keep_rate {rate:.2f}: {speed:.1f} img/s, {macs / 1e9:.2f} GMACs')


def complement_idx(idx, dim):
    """
    Compute the complement: set(range(dim)) - set(idx).
    idx is a multi-dimensional tensor, find the complement for its trailing dimension,
    all other dimension is considered batched.
    Args:
        idx: input index, shape: [N, *, K]
        dim: the max index for complement
    """
    a = torch.arange(dim, device=idx.device)
    ndim = idx.ndim
    dims = idx.shape
    n_idx = dims[-1]
    dims = dims[:-1] + (-1, )
    for i in range(1, ndim):
        a = a.unsqueeze(0)
    a = a.expand(*dims)
    masked = torch.scatter(a, -1, idx, 0)
    compl, _ = torch.sort(masked, dim=-1, descending=False)
    compl = compl.permute(-1, *tuple(range(ndim - 1)))
    compl = compl[n_idx:].permute(*(tuple(range(1, ndim)) + (0,)))
    return compl


def get_real_idx(idxs, fuse_token):
    # nh = img_size // patch_size
    # npatch = nh ** 2

    # gather real idx
    for i in range(1, len(idxs)):
        tmp = idxs[i - 1]
        if fuse_token:
            B = tmp.size(0)
            tmp = torch.cat([tmp, torch.zeros(B, 1, dtype=tmp.dtype, device=tmp.device)], dim=1)
        idxs[i] = torch.gather(tmp, dim=1, index=idxs[i])
    return idxs


def save_img_batch(x, path, file_name='img{}', start_idx=0):
    for i, img in enumerate(x):
        img_path = os.path.join(path, file_name.format(start_idx + i))
        img = img.permute(1, 2, 0).clamp(0, 1).mul(255).byte().cpu().numpy()
        Image.fromarray(img).save(img_path)


def mask(x, idx, patch_size):
    """
    Args:
        x: input image, shape: [B, 3, H, W]
        idx: indices of masks, shape: [B, T], value in range [0, h*w)
    Return:
        out_img: masked image with only patches from idx postions
    """
    h = x.size(2) // patch_size
    x = F.unfold(x, kernel_size=patch_size, stride=patch_size)  # [B, 3*p*p, h*w]
    output = torch.zeros_like(x)
    idx1 = idx.unsqueeze(1).expand(-1, x.size(1), -1)
    extracted = torch.gather(x, dim=2, index=idx1)  # [B, 3*p*p, T]
    scattered = torch.scatter(output, dim=2, index=idx1, src=extracted)
    out_img = F.fold(scattered, output_size=(h * patch_size, h * patch_size),
                     kernel_size=patch_size, stride=patch_size)
    return out_img


def denormalize(x, mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225)):
    mean = torch.tensor(mean, device=x.device).view(1, 3, 1, 1)
    std = torch.tensor(std, device=x.device).view(1, 3, 1, 1)
    return x * std + mean


def count_fused_tokens(idxs, num_patches):
    """Number of inattentive tokens fused into the extra token at every reduction stage."""
    counts = []
    remaining = num_patches
    for idx in idxs:
        kept = idx.shape[1]
        counts.append(remaining - kept)
        remaining = kept
    return np.array(counts)
