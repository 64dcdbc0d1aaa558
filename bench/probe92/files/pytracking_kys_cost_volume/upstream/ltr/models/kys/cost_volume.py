import torch
import torch.nn as nn
import torch.nn.functional as F
from spatial_correlation_sampler import SpatialCorrelationSampler


class CostVolume(nn.Module):
    """Local correlation between the previous-frame and current-frame feature maps (KYS).

    For every location of feat1, the dot product with all locations of feat2 inside a
    (2*max_displacement+1)^2 window is computed. The output has one channel per displacement.
    """

    def __init__(self, kernel_size, max_displacement, stride=1, abs_coordinate_output=False):
        super().__init__()
        self.correlation_layer = SpatialCorrelationSampler(kernel_size, 2*max_displacement + 1, stride,
                                                           int((kernel_size-1)/2))
        self.abs_coordinate_output = abs_coordinate_output
        self.max_displacement = max_displacement

    def forward(self, feat1, feat2):
        assert feat1.dim() == 4 and feat2.dim() == 4, 'Expect 4 dimensional inputs'

        batch_size = feat1.shape[0]

        cost_volume = self.correlation_layer(feat1, feat2)

        if self.abs_coordinate_output:
            cost_volume = cost_volume.view(batch_size, -1, cost_volume.shape[-2], cost_volume.shape[-1])
            cost_volume = F.pad(cost_volume, (2, 2, 2, 2))
            cost_volume = cost_volume.view(batch_size, -1, cost_volume.shape[-2], cost_volume.shape[-1])
            cost_volume = cost_volume.unfold(2, feat1.shape[-2] + 4, 1).unfold(3, feat1.shape[-1] + 4, 1)
            cost_volume = cost_volume.reshape(batch_size, -1, feat1.shape[-2], feat1.shape[-1])

        return cost_volume.view(batch_size, -1, feat1.shape[-2], feat1.shape[-1])


class CostVolumeProcessing(nn.Module):
    """Normalises the raw correlation volume into a per-location distribution over displacements."""

    def __init__(self, max_displacement, softmax_temp=1.0, learn_temp=False):
        super().__init__()
        self.max_displacement = max_displacement
        self.num_displacements = (2 * max_displacement + 1) ** 2
        if learn_temp:
            self.log_temp = nn.Parameter(torch.tensor(float(softmax_temp)).log())
        else:
            self.register_buffer('log_temp', torch.tensor(float(softmax_temp)).log())

    def forward(self, cost_volume):
        b, d, h, w = cost_volume.shape
        assert d == self.num_displacements, 'Unexpected number of displacements: {}'.format(d)
        temp = self.log_temp.exp()
        prob = F.softmax(cost_volume / temp, dim=1)
        return prob.view(b, d, h, w)


def propagate_state(prob, state, max_displacement):
    """Move the per-location state vectors of the previous frame to the current frame
    according to the displacement distribution `prob` (b, (2m+1)^2, h, w)."""
    b, c, h, w = state.shape
    k = 2 * max_displacement + 1
    state_unf = F.unfold(state, kernel_size=k, padding=max_displacement)  # b, c*k*k, h*w
    state_unf = state_unf.view(b, c, k * k, h, w)
    return (state_unf * prob.unsqueeze(1)).sum(dim=2)
