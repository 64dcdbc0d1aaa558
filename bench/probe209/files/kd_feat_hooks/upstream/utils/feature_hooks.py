"""Forward-hook based feature extraction shared by the feature-distillation losses
(FitNet / AT / CKA analysis notebooks).

Hooks write into a plain dict keyed by layer name; nothing here moves tensors between
devices except ``to_device`` and the CKA helpers, which run on whatever device the
features already live on.
"""
from collections import OrderedDict
from contextlib import contextmanager

import torch
import torch.nn as nn
import torch.nn.functional as F

DEFAULT_DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def to_device(batch, device=DEFAULT_DEVICE, non_blocking=True):
    """recursively move tensors (in lists / tuples / dicts) to ``device``"""
    if torch.is_tensor(batch):
        return batch.to(device, non_blocking=non_blocking)
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device(b, device, non_blocking) for b in batch)
    if isinstance(batch, dict):
        return {k: to_device(v, device, non_blocking) for k, v in batch.items()}
    return batch


class FeatureExtractor(nn.Module):
    """Wrap a model and record the outputs of the named sub-modules on every forward.

    >>> fx = FeatureExtractor(resnet, ["layer1", "layer2", "layer3"]).cuda()
    >>> logits, feats = fx(images)
    """

    def __init__(self, model, layers, detach=False, profile=False):
        super().__init__()
        self.model = model
        self.layers = list(layers)
        self.detach = detach
        self.profile = profile
        self._features = OrderedDict()
        self._handles = []
        modules = dict(self.model.named_modules())
        for name in self.layers:
            if name not in modules:
                raise KeyError("layer {} not found in {}".format(name, type(model).__name__))
            self._handles.append(modules[name].register_forward_hook(self._make_hook(name)))

    def _make_hook(self, name):
        def hook(module, inputs, output):
            if isinstance(output, (tuple, list)):
                output = output[0]
            self._features[name] = output.detach() if self.detach else output

        return hook

    def forward(self, *args, **kwargs):
        self._features = OrderedDict()
        if self.profile:
            torch.cuda.nvtx.range_push("forward:{}".format(type(self.model).__name__))
        out = self.model(*args, **kwargs)
        if self.profile:
            torch.cuda.nvtx.range_pop()
        return out, [self._features[name] for name in self.layers]

    def remove(self):
        for h in self._handles:
            h.remove()
        self._handles = []


@contextmanager
def hooked(model, layers, detach=True):
    fx = FeatureExtractor(model, layers, detach=detach)
    try:
        yield fx
    finally:
        fx.remove()


def attention_map(feat, p=2):
    """AT (Zagoruyko & Komodakis): spatial attention from a feature map"""
    return F.normalize(feat.pow(p).mean(1).view(feat.size(0), -1))


def at_loss(f_s, f_t, p=2):
    if f_s.shape[2] != f_t.shape[2]:
        f_s = F.adaptive_avg_pool2d(f_s, f_t.shape[2:])
    return (attention_map(f_s, p) - attention_map(f_t, p)).pow(2).mean()


def _centering(k):
    n = k.shape[0]
    unit = torch.ones(n, n, device=k.device, dtype=k.dtype)
    identity = torch.eye(n, device=k.device, dtype=k.dtype)
    h = identity - unit / n
    return h @ k @ h


def linear_cka(x, y):
    """linear CKA between two (N, D) feature matrices (Kornblith et al. 2019)"""
    x = x.flatten(1).double()
    y = y.flatten(1).double()
    hsic = (_centering(x @ x.t()) * _centering(y @ y.t())).sum()
    var1 = torch.sqrt((_centering(x @ x.t()) ** 2).sum())
    var2 = torch.sqrt((_centering(y @ y.t()) ** 2).sum())
    return (hsic / (var1 * var2)).item()


@torch.no_grad()
def cka_matrix(teacher, student, t_layers, s_layers, loader, max_batches=10, device=DEFAULT_DEVICE):
    """CKA similarity between every (teacher layer, student layer) pair on a few batches"""
    teacher.eval()
    student.eval()
    t_feats = {name: [] for name in t_layers}
    s_feats = {name: [] for name in s_layers}
    with hooked(teacher, t_layers) as tfx, hooked(student, s_layers) as sfx:
        for i, (images, _) in enumerate(loader):
            if i >= max_batches:
                break
            images = to_device(images, device)
            _, tf = tfx(images)
            _, sf = sfx(images)
            for name, f in zip(t_layers, tf):
                t_feats[name].append(f.flatten(1).cpu())
            for name, f in zip(s_layers, sf):
                s_feats[name].append(f.flatten(1).cpu())
    # free the activations kept alive by the hooks before the (CPU) CKA pass
    torch.cuda.empty_cache()

    out = torch.zeros(len(t_layers), len(s_layers))
    for i, tn in enumerate(t_layers):
        tx = torch.cat(t_feats[tn])
        for j, sn in enumerate(s_layers):
            sx = torch.cat(s_feats[sn])
            out[i, j] = linear_cka(tx, sx)
    return out


def feature_stats(features):
    """mean / std / sparsity per recorded layer, for the tensorboard histograms"""
    stats = OrderedDict()
    for name, f in features.items():
        f = f.detach().float()
        stats[name] = {
            "mean": f.mean().item(),
            "std": f.std().item(),
            "zero_frac": (f == 0).float().mean().item(),
            "is_cuda": bool(f.is_cuda),
        }
    return stats
