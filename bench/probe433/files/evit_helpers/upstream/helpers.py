import math
import time

import torch
import torch.nn.functional as F
from fvcore.nn import FlopCountAnalysis


def adjust_keep_rate(iters, epoch, warmup_epochs, total_epochs,
                     ITERS_PER_EPOCH, base_keep_rate=0.5, max_keep_rate=1):
    if epoch < warmup_epochs:
        return 1
    if epoch >= total_epochs:
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
    model = model.cuda().eval()

    start = time.time()
    with torch.no_grad():
        for i in range(ntest):
            model(x, **kwargs)
    torch.cuda.synchronize()
    end = time.time()

    elapse = end - start
    speed = batchsize * ntest / elapse

    return speed


def speed_test_events(model, ntest=100, batchsize=64, **kwargs):
    """Same as speed_test but timed with CUDA events (excludes host-side launch jitter)."""
    img_size = model.img_size
    x = torch.rand(batchsize, 3, *img_size, device='cuda')
    model.eval()
    starter = torch.cuda.Event(enable_timing=True)
    ender = torch.cuda.Event(enable_timing=True)
    with torch.no_grad():
        for _ in range(10):
            model(x, **kwargs)
        starter.record()
        for _ in range(ntest):
            model(x, **kwargs)
        ender.record()
    torch.cuda.synchronize()  # events are recorded asynchronously
    elapse_ms = starter.elapsed_time(ender)
    return batchsize * ntest / (elapse_ms / 1000.0)


def get_macs(model, x=None):
    model.eval()
    if x is None:
        img_size = model.img_size
        x = torch.rand(1, 3, *img_size).cuda()
    macs = FlopCountAnalysis(model, x).total()
    return macs


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


outputs = {}


def get_activation(name):
    def hook(model, input, output):
        outputs[name] = output.detach()

    return hook


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
    import torchvision.utils as vutils
    for i, img in enumerate(x):
        vutils.save_image(img, path + '/' + file_name.format(start_idx + i) + '.png')


def mask(x, idx, patch_size):
    """
    Args:
        x: input image, shape: [B, 3, H, W]
        idx: indices of masks, shape: [B, T], value in range [0, h*w)
    Return:
        out_img: masked image with only patches from idx postions
    """
    h = x.size(2) // patch_size
    x = F.unfold(x, kernel_size=patch_size, stride=patch_size)  # [B, 3*patch_size*patch_size, h*w]
    output = torch.zeros_like(x)
    idx1 = idx.unsqueeze(1).expand(-1, x.size(1), -1)
    extracted = torch.gather(x, dim=2, index=idx1)  # [b, 3*patch_size*patch_size, T]
    scattered = torch.scatter(output, dim=2, index=idx1, src=extracted)
    out_img = F.fold(scattered, output_size=(h * patch_size, h * patch_size),
                     kernel_size=patch_size, stride=patch_size)
    return out_img
