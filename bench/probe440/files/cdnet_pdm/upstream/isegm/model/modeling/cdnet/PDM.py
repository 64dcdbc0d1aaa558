import torch
import torch.nn as nn
import torch.nn.functional as F


class DiffisionPropagation(nn.Module):
    """Pixel Diffusion Module.

    Iteratively propagates the click-conditioned probability to the 8-neighbourhood
    using affinities predicted from the features. Runs on a 1/4 resolution grid.
    """

    def __init__(self, iters=5, in_channels=256, affinity_channels=8, beta=0.5):
        super().__init__()
        self.iters = iters
        self.beta = beta
        self.affinity = nn.Sequential(
            nn.Conv2d(in_channels, 64, 3, padding=1),
            nn.BatchNorm2d(64),
            nn.ReLU(inplace=True),
            nn.Conv2d(64, affinity_channels, 3, padding=1),
        )

    @staticmethod
    def neighbours(x):
        # 8-neighbourhood via unfold; output B x 8 x H x W
        b, c, h, w = x.shape
        patches = F.unfold(F.pad(x, (1, 1, 1, 1), mode='replicate'), kernel_size=3)
        patches = patches.view(b, c, 9, h, w)
        return torch.cat([patches[:, :, :4], patches[:, :, 5:]], dim=2).squeeze(1)

    def forward(self, feature, coarse_logits, pos_map, neg_map):
        aff = self.affinity(feature)
        aff = F.softmax(aff, dim=1)

        prob = torch.sigmoid(coarse_logits)
        clicked = (pos_map + neg_map).clamp(0, 1)
        target = pos_map

        for _ in range(self.iters):
            nb = self.neighbours(prob)
            prop = (nb * aff).sum(dim=1, keepdim=True)
            prob = self.beta * prob + (1 - self.beta) * prop
            # clicked pixels are hard constraints
            prob = prob * (1 - clicked) + target * clicked

        prob = prob.clamp(1e-4, 1 - 1e-4)
        return torch.log(prob / (1 - prob))
