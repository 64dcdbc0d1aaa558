import numpy as np

import torch
import torch.nn as nn
import torch.nn.functional as F


def get_lr(optimizer):
    for param_group in optimizer.param_groups:
        return param_group['lr']


def torch_stack(tensor_list, dim):
    if len(tensor_list[0].shape) < dim:
        return torch.stack(tensor_list)
    return torch.stack(tensor_list, dim=dim)


def torch_cat(tensor_list, dim):
    if len(tensor_list[0].shape) <= dim:
        return torch.cat(tensor_list)
    return torch.cat(tensor_list, dim=dim)


def assert_shape(actual, expected, message=""):
    assert list(actual) == list(expected), \
        f"Expected shape: {expected} but passed shape: {actual}. {message}"


def build_grid(resolution):
    """return grid with shape [1, H, W, 4]."""
    ranges = [torch.linspace(0.0, 1.0, steps=res) for res in resolution]
    grid = torch.meshgrid(*ranges, indexing='ij')
    grid = torch.stack(grid, dim=-1)
    grid = torch.reshape(grid, [resolution[0], resolution[1], -1])
    grid = grid.unsqueeze(0)
    return torch.cat([grid, 1.0 - grid], dim=-1)


class SoftPositionEmbed(nn.Module):
    """Soft PE mapping normalized coords to feature maps."""

    def __init__(self, hidden_size, resolution):
        super().__init__()
        self.dense = nn.Linear(in_features=4, out_features=hidden_size)
        self.register_buffer('grid', build_grid(resolution))  # [1, H, W, 4]

    def forward(self, inputs):
        """inputs: [B, C, H, W]."""
        emb_proj = self.dense(self.grid).permute(0, 3, 1, 2).contiguous()
        return inputs + emb_proj


def conv_transpose_out_shape(in_size, stride, padding, kernel_size, out_padding,
                             dilation=1):
    return (in_size - 1) * stride - 2 * padding + dilation * (
        kernel_size - 1) + out_padding + 1


def spatial_broadcast(slots, resolution):
    """Broadcast slot features to a 2D grid and collapse slot dimension.

    Args:
        slots: [B, N, C]
    Returns:
        [B * N, C, H, W]
    """
    slots = slots.reshape(-1, slots.shape[-1])[:, :, None, None]
    return slots.repeat(1, 1, resolution[0], resolution[1])


def unstack_and_split(x, batch_size, num_channels=3):
    """Unstack batch dimension and split into channels and alpha mask."""
    unstacked = x.view(batch_size, -1, *x.shape[1:])
    channels, masks = torch.split(unstacked, [num_channels, 1], dim=2)
    return channels, masks


def get_normalizer(norm, channels, groups=16, dim='2d'):
    """Get normalization layer."""
    if norm == '':
        return nn.Identity()
    elif norm == 'bn':
        return eval(f'nn.BatchNorm{dim}')(channels)
    elif norm == 'gn':
        # 16 per group is preferred
        groups = channels // groups
        return nn.GroupNorm(groups, channels)
    elif norm == 'in':
        return eval(f'nn.InstanceNorm{dim}')(channels)
    elif norm == 'ln':
        return nn.LayerNorm(channels)
    else:
        raise ValueError(f'Normalizer {norm} not supported!')


def get_act_func(act):
    """Get activation function."""
    if act == '':
        return nn.Identity()
    if act == 'relu':
        return nn.ReLU()
    elif act == 'leakyrelu':
        return nn.LeakyReLU()
    elif act == 'tanh':
        return nn.Tanh()
    elif act == 'sigmoid':
        return nn.Sigmoid()
    elif act == 'swish':
        return nn.SiLU()
    elif act == 'elu':
        return nn.ELU()
    elif act == 'softplus':
        return nn.Softplus()
    elif act == 'mish':
        return nn.Mish()
    elif act == 'gelu':
        return nn.GELU()
    else:
        raise ValueError(f'Activation function {act} not supported!')


def fg_ari(gt_mask, pred_mask, num_ignored_objects=1):
    """Foreground ARI, gt_mask/pred_mask: [B, N] integer tensors on any device."""
    B = gt_mask.shape[0]
    gt_oh = F.one_hot(gt_mask).float()
    pred_oh = F.one_hot(pred_mask).float()
    if num_ignored_objects:
        gt_oh = gt_oh[..., num_ignored_objects:]
    nij = torch.einsum('bji,bjk->bki', pred_oh, gt_oh)
    a = nij.sum(1)
    b = nij.sum(2)
    rindex = (nij * (nij - 1)).sum((1, 2))
    aindex = (a * (a - 1)).sum(1)
    bindex = (b * (b - 1)).sum(1)
    n_points = gt_oh.sum((1, 2))
    expected = aindex * bindex / (n_points * (n_points - 1)).clamp(min=1)
    max_index = (aindex + bindex) / 2
    ari = (rindex - expected) / (max_index - expected)
    # only one object -> ari is nan, treat as perfect
    ari = torch.where(torch.isnan(ari), torch.ones_like(ari), ari)
    return ari.reshape(B).cpu().numpy().astype(np.float64)
