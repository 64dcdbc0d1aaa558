import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class CAModel(nn.Module):
    """Growing Neural Cellular Automata (Mordvintsev et al., Distill 2020).

    The state of every cell is a vector of ``channel_n`` numbers. The first four
    channels are RGBA, alpha > 0.1 marks a cell as "alive". Every step each cell
    perceives its 3x3 neighbourhood through fixed Sobel filters, feeds the
    perception vector through a tiny per-cell MLP (two 1x1 convolutions) and
    adds the result to its state, but only with probability ``fire_rate``
    (stochastic, asynchronous update).
    """

    def __init__(self, channel_n, fire_rate, device, hidden_size=128):
        super(CAModel, self).__init__()

        self.device = device
        self.channel_n = channel_n

        self.fc0 = nn.Linear(channel_n * 3, hidden_size)
        self.fc1 = nn.Linear(hidden_size, channel_n, bias=False)
        with torch.no_grad():
            # "do nothing" initial behaviour: the residual update starts at zero
            self.fc1.weight.zero_()

        self.fire_rate = fire_rate
        self.to(self.device)

    def alive(self, x):
        return F.max_pool2d(x[:, 3:4, :, :], kernel_size=3, stride=1, padding=1) > 0.1

    def perceive(self, x, angle):

        def _perceive_with(x, weight):
            conv_weights = torch.from_numpy(weight.astype(np.float32)).to(self.device)
            conv_weights = conv_weights.view(1, 1, 3, 3).repeat(self.channel_n, 1, 1, 1)
            return F.conv2d(x, conv_weights, padding=1, groups=self.channel_n)

        dx = np.outer([1, 2, 1], [-1, 0, 1]) / 8.0  # Sobel filter
        dy = dx.T
        c = np.cos(angle * np.pi / 180)
        s = np.sin(angle * np.pi / 180)
        w1 = c * dx - s * dy
        w2 = s * dx + c * dy

        y1 = _perceive_with(x, w1)
        y2 = _perceive_with(x, w2)
        y = torch.cat((x, y1, y2), 1)
        return y

    def update(self, x, fire_rate, angle):
        x = x.transpose(1, 3)
        pre_life_mask = self.alive(x)

        dx = self.perceive(x, angle)
        dx = dx.transpose(1, 3)
        dx = self.fc0(dx)
        dx = F.relu(dx)
        dx = self.fc1(dx)

        if fire_rate is None:
            fire_rate = self.fire_rate
        stochastic = torch.rand([dx.size(0), dx.size(1), dx.size(2), 1]) > fire_rate
        stochastic = stochastic.float().to(self.device)
        dx = dx * stochastic

        x = x + dx.transpose(1, 3)

        post_life_mask = self.alive(x)
        life_mask = (pre_life_mask & post_life_mask).float()
        x = x * life_mask
        return x.transpose(1, 3)

    def forward(self, x, steps=1, fire_rate=None, angle=0.0):
        for step in range(steps):
            x = self.update(x, fire_rate, angle)
        return x


class PerceptionCA(CAModel):
    """Variant used for the "isotropic" experiments: adds a Laplacian channel and
    makes the update rule independent of the grid orientation by only using
    rotation-invariant filters (identity, Laplacian, Sobel magnitude)."""

    def __init__(self, channel_n, fire_rate, device, hidden_size=128):
        super().__init__(channel_n, fire_rate, device, hidden_size)
        self.fc0 = nn.Linear(channel_n * 3, hidden_size).to(device)
        lap = np.array([[1.0, 2.0, 1.0], [2.0, -12.0, 2.0], [1.0, 2.0, 1.0]]) / 16.0
        self.register_buffer(
            "lap_kernel",
            torch.tensor(lap, dtype=torch.float32).view(1, 1, 3, 3).repeat(channel_n, 1, 1, 1),
        )
        sobel = np.outer([1, 2, 1], [-1, 0, 1]) / 8.0
        self.register_buffer(
            "sobel_x",
            torch.tensor(sobel, dtype=torch.float32).view(1, 1, 3, 3).repeat(channel_n, 1, 1, 1),
        )
        self.register_buffer(
            "sobel_y",
            torch.tensor(sobel.T, dtype=torch.float32).view(1, 1, 3, 3).repeat(channel_n, 1, 1, 1),
        )
        self.to(device)

    def perceive(self, x, angle):
        # circular padding: the original notebook wraps the world around a torus
        xp = F.pad(x, (1, 1, 1, 1), mode="circular")
        lap = F.conv2d(xp, self.lap_kernel, groups=self.channel_n)
        gx = F.conv2d(xp, self.sobel_x, groups=self.channel_n)
        gy = F.conv2d(xp, self.sobel_y, groups=self.channel_n)
        grad_norm = torch.sqrt(gx * gx + gy * gy + 1e-8)
        return torch.cat((x, lap, grad_norm), 1)
