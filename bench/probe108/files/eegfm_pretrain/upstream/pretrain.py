"""
Masked-patch pretraining of a criss-cross EEG transformer on TUEG (CBraMod-style),
written nanoGPT-style: one file, config via globals overridable from the command line.

single GPU:
$ python pretrain.py --batch_size=64 --compile=False

DDP on 1 node with 8 GPUs:
$ torchrun --standalone --nproc_per_node=8 pretrain.py
"""
import inspect
import math
import os
import sys
import time
from contextlib import nullcontext

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed import destroy_process_group, init_process_group
from torch.nn.parallel import DistributedDataParallel as DDP

# -----------------------------------------------------------------------------
# default config values
out_dir = 'out-eegfm'
data_dir = 'data/tueg_patches'   # uint8-quantised (N, C, P, 200) memmaps written by prepare_tueg.py
eval_interval = 1000
log_interval = 20
eval_iters = 100
batch_size = 64
n_chans, n_patches, patch_len = 19, 30, 200
mask_ratio = 0.5
n_layer, n_head, n_embd, dropout = 12, 8, 200, 0.1
learning_rate, max_iters, weight_decay = 5e-4, 200000, 5e-2
beta1, beta2, grad_clip = 0.9, 0.95, 1.0
warmup_iters, lr_decay_iters, min_lr = 2000, 200000, 5e-5
backend = 'nccl'  # 'nccl', 'gloo', etc.
device = 'cuda'  # examples: 'cpu', 'cuda', 'cuda:0', 'cuda:1' etc., or try 'mps' on macbooks
dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'
compile = True  # use PyTorch 2.0 to compile the model to be faster
# -----------------------------------------------------------------------------
for arg in sys.argv[1:]:  # poor man's configurator: --key=value
    key, val = arg[2:].split('=', 1)
    assert key in globals(), f"unknown config key {key}"
    globals()[key] = type(globals()[key])(eval(val)) if not isinstance(globals()[key], str) else val
config = {k: v for k, v in globals().items() if not k.startswith('_') and isinstance(v, (int, float, bool, str))}

ddp = int(os.environ.get('RANK', -1)) != -1  # is this a ddp run?
if ddp:
    init_process_group(backend=backend)
    ddp_rank = int(os.environ['RANK'])
    ddp_local_rank = int(os.environ['LOCAL_RANK'])
    ddp_world_size = int(os.environ['WORLD_SIZE'])
    device = f'cuda:{ddp_local_rank}'
    torch.cuda.set_device(device)
    master_process = ddp_rank == 0  # this process will do logging, checkpointing etc.
    seed_offset = ddp_rank  # each process gets a different seed
else:
    master_process, seed_offset, ddp_world_size = True, 0, 1

if master_process:
    os.makedirs(out_dir, exist_ok=True)
torch.manual_seed(1337 + seed_offset)
torch.backends.cuda.matmul.allow_tf32 = True  # allow tf32 on matmul
torch.backends.cudnn.allow_tf32 = True  # allow tf32 on cudnn
device_type = 'cuda' if 'cuda' in device else 'cpu'  # for later use in torch.autocast
ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]
ctx = nullcontext() if device_type == 'cpu' else torch.amp.autocast(device_type=device_type, dtype=ptdtype)


# ----------------------------------------------------------------------------- model
class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class CrissCrossBlock(nn.Module):
    """Spatial attention across channels + temporal attention across patches, in parallel halves."""

    def __init__(self, d, h, p):
        super().__init__()
        self.norm1, self.norm2 = RMSNorm(d), RMSNorm(d)
        self.qkv_s = nn.Linear(d // 2, 3 * d // 2, bias=False)
        self.qkv_t = nn.Linear(d // 2, 3 * d // 2, bias=False)
        self.proj = nn.Linear(d, d, bias=False)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d), nn.Dropout(p))
        self.h, self.p = h // 2, p

    def _attn(self, x, qkv):
        q, k, v = qkv(x).chunk(3, dim=-1)
        q, k, v = (t.unflatten(-1, (self.h, -1)).transpose(-2, -3) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.p if self.training else 0.0)
        return y.transpose(-2, -3).flatten(-2)

    def forward(self, x):  # x: (B, C, P, D)
        xs, xt = self.norm1(x).chunk(2, dim=-1)
        ys = self._attn(xs.transpose(1, 2), self.qkv_s).transpose(1, 2)  # attend over channels
        yt = self._attn(xt, self.qkv_t)  # attend over patches
        x = x + self.proj(torch.cat([ys, yt], dim=-1))
        return x + self.mlp(self.norm2(x))


class EEGFM(nn.Module):
    def __init__(self):
        super().__init__()
        self.patch_embed = nn.Sequential(nn.Conv1d(1, 25, 49, stride=25, padding=24), nn.GroupNorm(5, 25), nn.GELU())
        self.embed_proj = nn.Linear(25 * 8, n_embd)
        self.spec_proj = nn.Linear(patch_len // 2 + 1, n_embd)
        self.mask_token = nn.Parameter(torch.zeros(n_embd))
        self.blocks = nn.ModuleList([CrissCrossBlock(n_embd, n_head, dropout) for _ in range(n_layer)])
        self.norm = RMSNorm(n_embd)
        self.head = nn.Linear(n_embd, patch_len)

    def forward(self, x, mask):  # x: (B, C, P, T), mask: (B, C, P) bool
        B, C, P, T = x.shape
        e = self.patch_embed(x.reshape(B * C * P, 1, T)).flatten(1)
        e = self.embed_proj(e).view(B, C, P, -1)
        e = e + self.spec_proj(torch.fft.rfft(x, dim=-1).abs())
        e = torch.where(mask[..., None], self.mask_token.to(e.dtype), e)
        for blk in self.blocks:
            e = blk(e)
        rec = self.head(self.norm(e))
        return F.mse_loss(rec[mask].float(), x[mask].float())

    def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
        params = [p for p in self.parameters() if p.requires_grad]
        decay = [p for p in params if p.dim() >= 2]
        nodecay = [p for p in params if p.dim() < 2]
        groups = [{'params': decay, 'weight_decay': weight_decay}, {'params': nodecay, 'weight_decay': 0.0}]
        fused_available = 'fused' in inspect.signature(torch.optim.AdamW).parameters
        use_fused = fused_available and device_type == 'cuda'
        extra_args = dict(fused=True) if use_fused else dict()
        print(f"using fused AdamW: {use_fused}")
        return torch.optim.AdamW(groups, lr=learning_rate, betas=betas, **extra_args)


# ----------------------------------------------------------------------------- data
def get_batch(split):
    data = np.memmap(os.path.join(data_dir, f'{split}.bin'), dtype=np.uint8, mode='r').reshape(
        -1, n_chans, n_patches, patch_len)
    ix = torch.randint(len(data), (batch_size,))
    x = torch.from_numpy(np.stack([data[i] for i in ix.tolist()]).astype(np.float32) / 127.5 - 1.0)
    mask = torch.rand(batch_size, n_chans, n_patches) < mask_ratio
    if device_type == 'cuda':
        # pin arrays x, mask, which allows us to move them to GPU asynchronously (non_blocking=True)
        x, mask = x.pin_memory().to(device, non_blocking=True), mask.pin_memory().to(device, non_blocking=True)
    else:
        x, mask = x.to(device), mask.to(device)
    return x, mask


def get_lr(it):
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    if it > lr_decay_iters:
        return min_lr
    ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (learning_rate - min_lr)


@torch.no_grad()
def estimate_loss():
    out = {}
    model.eval()
    for split in ['train', 'val']:
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            x, mask = get_batch(split)
            with ctx:
                losses[k] = model(x, mask).item()
        out[split] = losses.mean()
    model.train()
    return out


# ----------------------------------------------------------------------------- training
model = EEGFM().to(device)
scaler = torch.cuda.amp.GradScaler(enabled=(dtype == 'float16'))
optimizer = model.configure_optimizers(weight_decay, learning_rate, (beta1, beta2), device_type)
if compile:
    print("compiling the model... (takes a ~minute)")
    unoptimized_model = model
    model = torch.compile(model, mode="max-autotune")
if ddp:
    model = DDP(model, device_ids=[ddp_local_rank])
raw_model = model.module if ddp else model

x, mask = get_batch('train')
t0, iter_num, best_val_loss = time.time(), 0, 1e9
while iter_num <= max_iters:
    lr = get_lr(iter_num)
    for param_group in optimizer.param_groups:
        param_group['lr'] = lr

    if iter_num % eval_interval == 0 and master_process:
        losses = estimate_loss()
        print(f"step {iter_num}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
        if losses['val'] < best_val_loss and iter_num > 0:
            best_val_loss = losses['val']
            torch.save({'model': raw_model.state_dict(), 'optimizer': optimizer.state_dict(),
                        'iter_num': iter_num, 'best_val_loss': best_val_loss, 'config': config},
                       os.path.join(out_dir, 'ckpt.pt'))

    with ctx:
        loss = model(x, mask)
    x, mask = get_batch('train')  # prefetch next batch while the GPU is busy
    scaler.scale(loss).backward()
    if grad_clip != 0.0:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)

    if iter_num % log_interval == 0 and master_process:
        dt = time.time() - t0
        t0 = time.time()
        print(f"iter {iter_num}: loss {loss.item():.4f}, time {dt * 1000 / log_interval:.2f}ms/it, lr {lr:.2e}")
    iter_num += 1

if ddp:
    destroy_process_group()
