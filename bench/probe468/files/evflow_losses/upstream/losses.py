"""Self-supervised losses of EV-FlowNet.

The network is trained only with the grayscale frames that bracket each event volume:
the later frame is warped towards the earlier one with the predicted flow (photometric loss),
and a smoothness prior regularises the flow field.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def charbonnier_loss(delta, alpha=0.45, epsilon=1e-3):
    """Robust Charbonnier loss, as defined in equation (4) of the paper."""
    loss = torch.mean(torch.pow((delta ** 2 + epsilon ** 2), alpha))
    return loss


def compute_smoothness_loss(flow):
    """Local smoothness loss, as defined in equation (5) of the paper.
    The neighborhood here is defined as the 8-connected region around each pixel.
    """
    flow_ucrop = flow[..., 1:]
    flow_dcrop = flow[..., :-1]
    flow_lcrop = flow[..., 1:, :]
    flow_rcrop = flow[..., :-1, :]

    flow_ulcrop = flow[..., 1:, 1:]
    flow_drcrop = flow[..., :-1, :-1]
    flow_dlcrop = flow[..., :-1, 1:]
    flow_urcrop = flow[..., 1:, :-1]

    smoothness_loss = charbonnier_loss(flow_lcrop - flow_rcrop) + \
        charbonnier_loss(flow_ucrop - flow_dcrop) + \
        charbonnier_loss(flow_ulcrop - flow_drcrop) + \
        charbonnier_loss(flow_dlcrop - flow_urcrop)
    smoothness_loss /= 4.

    return smoothness_loss


def warp_images_with_flow(images, flow):
    """
    Generates a prediction of an image given the optical flow, as in Spatial Transformer Networks.
    images: [B, C, H, W], flow: [B, 2, H, W] in pixels.
    """
    B, C, H, W = images.size()

    # mesh grid
    xx = torch.arange(0, W).view(1, -1).repeat(H, 1)
    yy = torch.arange(0, H).view(-1, 1).repeat(1, W)
    xx = xx.view(1, 1, H, W).repeat(B, 1, 1, 1)
    yy = yy.view(1, 1, H, W).repeat(B, 1, 1, 1)
    grid = torch.cat((xx, yy), 1).float()

    if images.is_cuda:
        grid = grid.cuda()
    vgrid = grid + flow

    # scale grid to [-1,1]
    vgrid[:, 0, :, :] = 2.0 * vgrid[:, 0, :, :].clone() / max(W - 1, 1) - 1.0
    vgrid[:, 1, :, :] = 2.0 * vgrid[:, 1, :, :].clone() / max(H - 1, 1) - 1.0

    vgrid = vgrid.permute(0, 2, 3, 1)
    output = F.grid_sample(images, vgrid, mode='bilinear', padding_mode='zeros', align_corners=True)
    return output


def compute_photometric_loss(prev_images, next_images, flow_dict):
    """
    Multi-scale photometric loss, as defined in equation (3) of the paper.
    """
    total_photometric_loss = 0.
    loss_weight_sum = 0.
    for i in range(len(flow_dict)):
        flow = flow_dict['flow{}'.format(i)]
        height, width = flow.shape[2:]

        prev_images_resize = F.interpolate(prev_images, size=(height, width), mode='bilinear',
                                           align_corners=False)
        next_images_resize = F.interpolate(next_images, size=(height, width), mode='bilinear',
                                           align_corners=False)

        next_images_warped = warp_images_with_flow(next_images_resize, flow)

        distance = next_images_warped - prev_images_resize
        photometric_loss = charbonnier_loss(distance)
        total_photometric_loss += photometric_loss
        loss_weight_sum += 1.
    total_photometric_loss /= loss_weight_sum

    return total_photometric_loss


class TotalLoss(nn.Module):
    def __init__(self, smoothness_weight, weight_decay_weight=1e-4):
        super(TotalLoss, self).__init__()
        self._smoothness_weight = smoothness_weight
        self._weight_decay_weight = weight_decay_weight

    @staticmethod
    def photometric_only(flow, prev_image, next_image):
        warped = warp_images_with_flow(next_image, flow)
        return charbonnier_loss(warped - prev_image)

    def forward(self, flow_dict, prev_image, next_image, EVFlowNet_model):
        # weight decay loss (the TF code uses an explicit L2 term instead of the optimizer's weight decay)
        weight_decay_loss = 0
        for i in EVFlowNet_model.parameters():
            weight_decay_loss += torch.sum(i ** 2) / 2 * self._weight_decay_weight

        # smoothness loss
        smoothness_loss = 0
        for i in range(len(flow_dict)):
            smoothness_loss += compute_smoothness_loss(flow_dict["flow{}".format(i)])
        smoothness_loss *= self._smoothness_weight / 4.

        # Photometric loss.
        photometric_loss = compute_photometric_loss(prev_image,
                                                    next_image,
                                                    flow_dict)

        # Warped next image for debug
        return weight_decay_loss + photometric_loss + smoothness_loss
