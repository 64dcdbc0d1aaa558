"""Second-order unlearning baselines.

* ``fisher``  - Fisher forgetting (Golatkar et al., 2020): add noise scaled by the inverse diagonal
  Fisher of the retain set.
* ``wfisher`` - WoodFisher-style influence unlearning (Jia et al., 2023): one Newton step along the
  forget-set gradient, with the inverse Hessian approximated by the empirical Fisher of per-sample
  gradients (computed with torch.func; needs torch >= 2.0).
"""
import copy

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap
from tqdm import tqdm


# ---------------------------------------------------------------------------
# Fisher forgetting
# ---------------------------------------------------------------------------
def hessian(dataset, model, num_classes):
    model.eval()
    train_loader = torch.utils.data.DataLoader(dataset, batch_size=1, shuffle=False)
    loss_fn = nn.CrossEntropyLoss()

    for p in model.parameters():
        p.grad_acc = 0
        p.grad2_acc = 0

    for data, orig_target in tqdm(train_loader, desc="diag Fisher"):
        data, orig_target = data.cuda(), orig_target.cuda()
        output = model(data)
        prob = F.softmax(output, dim=-1).data

        for y in range(num_classes):
            target = torch.empty_like(orig_target).fill_(y)
            loss = loss_fn(output, target)
            model.zero_grad()
            loss.backward(retain_graph=True)
            for p in model.parameters():
                if p.requires_grad:
                    p.grad_acc += (orig_target == target).float() * p.grad.data
                    p.grad2_acc += prob[:, y] * p.grad.data.pow(2)

    for p in model.parameters():
        p.grad_acc /= len(train_loader)
        p.grad2_acc /= len(train_loader)


def get_mean_var(p, num_classes, is_base_dist=False, alpha=3e-6, class_to_forget=None):
    var = copy.deepcopy(1.0 / (p.grad2_acc + 1e-8))
    var = var.clamp(max=1e3)
    if p.size(0) == num_classes:
        var = var.clamp(max=1e2)
    var = alpha * var

    if p.ndim > 1:
        var = var.mean(dim=1, keepdim=True).expand_as(p).clone()
    if not is_base_dist:
        mu = copy.deepcopy(p.data0.clone())
    else:
        mu = copy.deepcopy(p.data0.clone())
    if p.size(0) == num_classes and class_to_forget is not None:
        mu[class_to_forget] = 0
        var[class_to_forget] = 0.0001
    if p.size(0) == num_classes:
        # Last layer
        var *= 10
    elif p.ndim == 1:
        # BatchNorm
        var *= 10
    return mu, var


def fisher(data_loaders, model, criterion, args, mask=None):
    retain_loader = data_loaders["retain"]
    for p in model.parameters():
        p.data0 = copy.deepcopy(p.data.clone())
    hessian(retain_loader.dataset, model, args.num_classes)
    for i, p in enumerate(model.parameters()):
        mu, var = get_mean_var(p, args.num_classes, False, alpha=args.alpha,
                               class_to_forget=args.class_to_replace)
        p.data = mu + var.sqrt() * torch.empty_like(p.data0).normal_()
    torch.cuda.empty_cache()
    return model


# ---------------------------------------------------------------------------
# WoodFisher / influence unlearning
# ---------------------------------------------------------------------------
def per_sample_grads(model, x, y):
    params = {k: v.detach() for k, v in model.named_parameters() if v.requires_grad}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def loss_fn(params, buffers, sample, target):
        out = functional_call(model, (params, buffers), (sample.unsqueeze(0),))
        return F.cross_entropy(out, target.unsqueeze(0))

    ps_grad = vmap(grad(loss_fn), in_dims=(None, None, 0, 0))
    grads = ps_grad(params, buffers, x, y)
    return torch.cat([g.flatten(start_dim=1) for g in grads.values()], dim=1)


def sam_grad(model, loss):
    params = [p for p in model.parameters() if p.requires_grad]
    sample_grad = torch.autograd.grad(loss, params)
    return torch.cat([g.reshape(-1) for g in sample_grad])


def apply_perturb(model, v):
    curr = 0
    with torch.no_grad():
        for param in model.parameters():
            if not param.requires_grad:
                continue
            length = param.view(-1).shape[0]
            param.view(-1).data += v[curr: curr + length].data
            curr += length


def woodfisher(model, train_dl, criterion, v, max_samples=1000):
    """Iteratively apply the WoodFisher inverse-Fisher update to vector v."""
    model.eval()
    k_vec = torch.clone(v)
    N = 0
    o_vec = None
    for idx, (data, label) in enumerate(tqdm(train_dl, desc="woodfisher")):
        model.zero_grad()
        data, label = data.cuda(), label.cuda()
        g = per_sample_grads(model, data, label)
        for sample_grad in g:
            if N >= max_samples:
                break
            with torch.no_grad():
                if o_vec is None:
                    o_vec = torch.clone(sample_grad)
                else:
                    tmp = torch.dot(o_vec, sample_grad)
                    k_vec -= (torch.dot(k_vec, sample_grad) / (N + tmp)) * o_vec
                    o_vec -= (tmp / (N + tmp)) * o_vec
            N += 1
        if N >= max_samples:
            break
    return k_vec


def Wfisher(data_loaders, model, criterion, args, mask=None):
    retain_loader = data_loaders["retain"]
    forget_loader = data_loaders["forget"]
    retain_grad_loader = torch.utils.data.DataLoader(
        retain_loader.dataset, batch_size=args.batch_size, shuffle=False
    )
    retain_loader = torch.utils.data.DataLoader(
        retain_loader.dataset, batch_size=64, shuffle=False
    )
    forget_loader = torch.utils.data.DataLoader(
        forget_loader.dataset, batch_size=args.batch_size, shuffle=False
    )
    params = [p for p in model.parameters() if p.requires_grad]
    n_params = sum(p.numel() for p in params)
    forget_grad = torch.zeros(n_params).cuda()
    retain_grad = torch.zeros_like(forget_grad)

    total = 0
    model.eval()
    for i, (data, label) in enumerate(tqdm(forget_loader, desc="forget grad")):
        model.zero_grad()
        real_num = data.shape[0]
        data = data.cuda()
        label = label.cuda()
        output = model(data)
        loss = criterion(output, label)
        f_grad = sam_grad(model, loss) * real_num
        forget_grad += f_grad
        total += real_num

    total_2 = 0
    for i, (data, label) in enumerate(tqdm(retain_grad_loader, desc="retain grad")):
        model.zero_grad()
        real_num = data.shape[0]
        data, label = data.cuda(non_blocking=True), label.cuda(non_blocking=True)
        output = model(data)
        loss = criterion(output, label)
        r_grad = sam_grad(model, loss) * real_num
        retain_grad += r_grad
        total_2 += real_num

    retain_grad *= total / ((total + total_2) * total_2)
    forget_grad /= total + total_2

    perturb = woodfisher(model, retain_loader, criterion, v=forget_grad - retain_grad)
    if mask is not None:
        flat_mask = torch.cat([mask[n].flatten() for n, p in model.named_parameters() if p.requires_grad]).to(perturb.device)
        perturb = perturb * flat_mask
    apply_perturb(model, args.alpha * perturb)
    return model
