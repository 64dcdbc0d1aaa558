"""Recurrent cost-volume regularization (R-MVSNet / D2HC-RMVSNet style).

The cost volume is never materialised: depth planes are warped one at a time and fed
through a stack of convolutional GRUs, so memory is O(H*W) instead of O(D*H*W).
Written for (and only ever run on) CUDA GPUs.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable

from .module import ConvBnReLU, homo_warping, depth_regression


class ConvGRUCell(nn.Module):
    """GRU cell with 2D convolutions instead of fully connected layers."""

    def __init__(self, input_channel, output_channel, kernel_size=3):
        super(ConvGRUCell, self).__init__()
        padding = kernel_size // 2
        self.output_channel = output_channel
        self.gate_conv = nn.Conv2d(input_channel + output_channel, output_channel * 2, kernel_size,
                                   padding=padding)
        self.reset_gate_norm = nn.GroupNorm(1, output_channel, 1e-5, True)
        self.update_gate_norm = nn.GroupNorm(1, output_channel, 1e-5, True)
        self.output_conv = nn.Conv2d(input_channel + output_channel, output_channel, kernel_size,
                                     padding=padding)
        self.output_norm = nn.GroupNorm(1, output_channel, 1e-5, True)
        self.activation = nn.Tanh()

    def gates(self, x, h):
        c = torch.cat((x, h), dim=1)
        f = self.gate_conv(c)
        C = f.shape[1]
        r, u = torch.split(f, C // 2, 1)
        rn = self.reset_gate_norm(r)
        un = self.update_gate_norm(u)
        rns = torch.sigmoid(rn)
        uns = torch.sigmoid(un)
        return rns, uns

    def output(self, x, h, r, u):
        f = torch.cat((x, r * h), dim=1)
        o = self.output_conv(f)
        on = self.output_norm(o)
        return on

    def forward(self, x, h=None):
        N, C, H, W = x.shape
        HC = self.output_channel
        if h is None:
            h = torch.zeros((N, HC, H, W), dtype=torch.float, device=x.device)
        r, u = self.gates(x, h)
        o = self.output(x, h, r, u)
        y = self.activation(o)
        return u * h + (1 - u) * y


class RecurrentRegularization(nn.Module):
    def __init__(self, in_channels=32, gru_channels=(16, 4, 2)):
        super(RecurrentRegularization, self).__init__()
        self.gru_channels = gru_channels
        self.conv_gru1 = ConvGRUCell(in_channels, gru_channels[0], 3)
        self.conv_gru2 = ConvGRUCell(gru_channels[0], gru_channels[1], 3)
        self.conv_gru3 = ConvGRUCell(gru_channels[1], gru_channels[2], 3)
        self.conv2d = nn.Conv2d(gru_channels[2], 1, 3, 1, 1)

    def init_hidden(self, batch_size, hidden, shape):
        return Variable(torch.zeros(batch_size, hidden, shape[0], shape[1])).cuda()

    def forward(self, cost_slices):
        """cost_slices: iterable of [B, C, H, W] tensors, one per depth hypothesis."""
        costs = []
        state1 = state2 = state3 = None
        for cost in cost_slices:
            if state1 is None:
                B, _, H, W = cost.shape
                state1 = self.init_hidden(B, self.gru_channels[0], (H, W))
                state2 = self.init_hidden(B, self.gru_channels[1], (H, W))
                state3 = self.init_hidden(B, self.gru_channels[2], (H, W))
            state1 = self.conv_gru1(-cost, state1)
            state2 = self.conv_gru2(state1, state2)
            state3 = self.conv_gru3(state2, state3)
            costs.append(self.conv2d(state3))
        return torch.cat(costs, dim=1)  # [B, D, H, W]


class FeatureNet(nn.Module):
    def __init__(self):
        super(FeatureNet, self).__init__()
        self.conv0 = ConvBnReLU(3, 16, 3, 1, 1)
        self.conv1 = ConvBnReLU(16, 16, 3, 1, 1)
        self.conv2 = ConvBnReLU(16, 32, 5, 2, 2)
        self.conv3 = ConvBnReLU(32, 32, 3, 1, 1)
        self.conv4 = ConvBnReLU(32, 64, 5, 2, 2)
        self.conv5 = ConvBnReLU(64, 64, 3, 1, 1)
        self.feature = nn.Conv2d(64, 32, 3, 1, 1)

    def forward(self, x):
        x = self.conv1(self.conv0(x))
        x = self.conv3(self.conv2(x))
        x = self.feature(self.conv5(self.conv4(x)))
        return x


class DrMVSNet(nn.Module):
    def __init__(self, refine=False, inverse_depth=True, return_prob_volume=False):
        super(DrMVSNet, self).__init__()
        self.refine = refine
        self.inverse_depth = inverse_depth
        self.return_prob_volume = return_prob_volume
        self.feature = FeatureNet()
        self.cost_regularization = RecurrentRegularization(in_channels=32)

    def variance_slices(self, ref_feature, src_features, ref_proj, src_projs, depth_values):
        num_depth = depth_values.shape[1]
        num_views = len(src_features) + 1
        for d in range(num_depth):
            depth_d = depth_values[:, d:d + 1]
            ref_volume = ref_feature
            volume_sum = ref_volume
            volume_sq_sum = ref_volume ** 2
            for src_fea, src_proj in zip(src_features, src_projs):
                warped = homo_warping(src_fea, src_proj, ref_proj, depth_d).squeeze(2)
                volume_sum = volume_sum + warped
                volume_sq_sum = volume_sq_sum + warped ** 2
            yield volume_sq_sum / num_views - (volume_sum / num_views) ** 2

    def forward(self, imgs, proj_matrices, depth_values):
        imgs = torch.unbind(imgs, 1)
        proj_matrices = torch.unbind(proj_matrices, 1)
        assert len(imgs) == len(proj_matrices), "Different number of images and projection matrices"
        num_depth = depth_values.shape[1]

        # step 1. feature extraction
        features = [self.feature(img) for img in imgs]
        ref_feature, src_features = features[0], features[1:]
        ref_proj, src_projs = proj_matrices[0], proj_matrices[1:]

        # step 2 + 3. differentiable homography and recurrent regularization along depth
        cost_reg = self.cost_regularization(
            self.variance_slices(ref_feature, src_features, ref_proj, src_projs, depth_values))
        prob_volume = F.softmax(cost_reg, dim=1)

        if self.training:
            # the loss is a cross entropy over the probability volume
            return {"prob_volume": prob_volume, "depth_values": depth_values}

        # winner-take-all at inference: soft-argmin is biased with inverse depth sampling
        with torch.no_grad():
            depth_index = torch.argmax(prob_volume, dim=1, keepdim=True).type(torch.cuda.LongTensor)
            depth_values_t = depth_values.type(torch.cuda.FloatTensor)
            depth = torch.gather(depth_values_t.view(depth_values.shape[0], num_depth, 1, 1).expand_as(prob_volume),
                                 1, depth_index).squeeze(1)
            photometric_confidence = torch.gather(prob_volume, 1, depth_index).squeeze(1)

        outputs = {"depth": depth, "photometric_confidence": photometric_confidence}
        if self.return_prob_volume:
            outputs["prob_volume"] = prob_volume
        return outputs


def inverse_depth_hypotheses(depth_min, depth_max, num_depth, batch_size):
    """Sample `num_depth` hypotheses uniformly in inverse depth (better for large scenes)."""
    inv_min = 1.0 / depth_max
    inv_max = 1.0 / depth_min
    steps = torch.linspace(0, 1, num_depth).type(torch.cuda.FloatTensor)
    inv_depth = inv_max - (inv_max - inv_min) * steps
    return (1.0 / inv_depth).unsqueeze(0).repeat(batch_size, 1)


def mvsnet_cls_loss(prob_volume, depth_gt, mask, depth_values, return_prob_map=False):
    """Cross entropy between the probability volume and the one-hot ground-truth depth index."""
    mask_true = mask
    valid_pixel_num = torch.sum(mask_true, dim=[1, 2]) + 1e-6

    shape = depth_gt.shape
    depth_num = depth_values.shape[-1]
    depth_value_mat = depth_values.view(shape[0], depth_num, 1, 1).repeat(1, 1, shape[1], shape[2])

    gt_index_image = torch.argmin(torch.abs(depth_value_mat - depth_gt.unsqueeze(1)), dim=1)
    gt_index_image = torch.mul(mask_true, gt_index_image.type(torch.float))
    gt_index_image = torch.round(gt_index_image).type(torch.long).unsqueeze(1)  # B, 1, H, W

    gt_index_volume = torch.zeros(shape[0], depth_num, shape[1], shape[2]).type(mask_true.type()).scatter_(
        1, gt_index_image, 1)
    cross_entropy_image = -torch.sum(gt_index_volume * torch.log(prob_volume + 1e-6), dim=1).squeeze(1)
    masked_cross_entropy_image = torch.mul(mask_true, cross_entropy_image)
    masked_cross_entropy = torch.sum(masked_cross_entropy_image, dim=[1, 2])
    masked_cross_entropy = torch.mean(masked_cross_entropy / valid_pixel_num)

    if return_prob_map:
        # winner-take-all depth and its probability for visualisation
        wta_index_map = torch.argmax(prob_volume, dim=1, keepdim=True).type(torch.long)
        wta_depth_map = torch.gather(depth_value_mat, 1, wta_index_map).squeeze(1)
        photometric_confidence = torch.max(prob_volume, dim=1)[0]
        return masked_cross_entropy, wta_depth_map, photometric_confidence
    return masked_cross_entropy
