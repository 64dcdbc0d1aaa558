import torch
import torch.nn as nn
import torch.nn.functional as F
from spatial_correlation_sampler import SpatialCorrelationSampler


class CostVolume(nn.Module):
    """Local correlation between two feature maps, used by KYS to propagate the scene state.

    Output: (B, (2*max_displacement+1)^2, H, W)."""
    def __init__(self, kernel_size, max_displacement, stride=1, abs_coordinate_output=False):
        super().__init__()
        self.correlation_layer = SpatialCorrelationSampler(kernel_size, 2 * max_displacement + 1, stride,
                                                           int((kernel_size - 1) / 2))
        self.abs_coordinate_output = abs_coordinate_output

    def forward(self, feat1, feat2):
        assert feat1.dim() == 4 and feat2.dim() == 4, 'Expect 4 dimensional inputs'

        batch_size = feat1.shape[0]

        cost_volume = self.correlation_layer(feat1, feat2)

        if self.abs_coordinate_output:
            cost_volume = cost_volume.view(batch_size, -1, cost_volume.shape[-2], cost_volume.shape[-1])
            cost_volume = F.pad(cost_volume, (2, 2, 2, 2))
            cost_volume = cost_volume.unfold(2, 5, 1).unfold(3, 5, 1)
            cost_volume = cost_volume.permute(0, 2, 3, 4, 5, 1)
            cost_volume = cost_volume.reshape(batch_size, -1, cost_volume.shape[-1])

        return cost_volume.view(batch_size, -1, feat1.shape[-2], feat1.shape[-1])


def softmax_cost_volume(cost_volume, temperature=1.0):
    """Normalises a cost volume over the displacement dimension."""
    b, d, h, w = cost_volume.shape
    cv = cost_volume.view(b, d, h * w) / temperature
    cv = F.softmax(cv, dim=1)
    return cv.view(b, d, h, w)


def cost_volume_argmax(cost_volume, max_displacement):
    """Converts the peak of a (B, D, H, W) cost volume into a (B, 2, H, W) displacement field."""
    b, d, h, w = cost_volume.shape
    side = 2 * max_displacement + 1
    idx = cost_volume.argmax(dim=1)
    dy = torch.div(idx, side, rounding_mode='floor') - max_displacement
    dx = idx % side - max_displacement
    return torch.stack((dx, dy), dim=1).float()
