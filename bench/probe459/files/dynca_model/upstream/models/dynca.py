import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class DyNCA(nn.Module):
    """Dynamic Neural Cellular Automata for real-time texture synthesis.

    Compared with the self-organising texture NCA, DyNCA
      * perceives on a multi-scale pyramid of the cell state (``c_in``),
      * optionally concatenates a 2-D positional encoding (``pos_emb``),
      * uses a bigger update MLP and runs far fewer steps per output frame.

    Everything here is written against ``x.device`` so the same module runs on the
    GPU for training and on the CPU for the web demo export.
    """

    def __init__(
        self,
        c_in,
        c_out,
        fc_dim=96,
        padding_mode="replicate",
        seed_mode="zeros",
        pos_emb="CPE",
        perception_scales=(0,),
        device=torch.device("cpu"),
    ):
        super(DyNCA, self).__init__()
        self.c_in = c_in
        self.c_out = c_out
        self.perception_scales = list(perception_scales)
        self.fc_dim = fc_dim
        self.padding_mode = padding_mode
        self.seed_mode = seed_mode
        self.random_seed = 42
        self.pos_emb = pos_emb
        self.device = device
        self.expand = 4

        self.c_cond = 0
        if self.pos_emb == "CPE":
            self.pos_emb_2d = CPE2D()
            self.c_cond += 2
        else:
            self.pos_emb_2d = None

        self.w1 = nn.Conv2d(c_in * self.expand + self.c_cond, fc_dim, 1, device=device)
        self.w2 = nn.Conv2d(fc_dim, c_out, 1, bias=False, device=device)
        torch.nn.init.xavier_normal_(self.w1.weight, gain=0.2)
        torch.nn.init.zeros_(self.w2.weight)

        self.sobel_filter_x = torch.FloatTensor([[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]]).to(device)
        self.sobel_filter_y = self.sobel_filter_x.T
        self.identity_filter = torch.FloatTensor([[0, 0, 0], [0, 1, 0], [0, 0, 0]]).to(device)
        self.laplacian_filter = torch.FloatTensor([[1.0, 2.0, 1.0], [2.0, -12, 2.0], [1.0, 2.0, 1.0]]).to(device)

    def perchannel_conv(self, x, filters):
        """filters: [filter_n, h, w]"""
        b, ch, h, w = x.shape
        y = x.reshape(b * ch, 1, h, w)
        y = F.pad(y, [1, 1, 1, 1], self.padding_mode)
        y = F.conv2d(y, filters[:, None])
        return y.reshape(b, -1, h, w)

    def perceive_torch(self, x, scale=0):
        assert scale in [0, 1, 2, 3, 4, 5]
        if scale != 0:
            _, _, h, w = x.shape
            h_new = int(h // (2 ** scale))
            w_new = int(w // (2 ** scale))
            x = F.interpolate(x, size=(h_new, w_new), mode="bilinear", align_corners=False)

        def _perceive_with_torch(z, weight):
            conv_weights = weight.reshape(1, 1, 3, 3).repeat(self.c_in, 1, 1, 1)
            z = F.pad(z, [1, 1, 1, 1], self.padding_mode)
            return F.conv2d(z, conv_weights, groups=self.c_in)

        y1 = _perceive_with_torch(x, self.sobel_filter_x)
        y2 = _perceive_with_torch(x, self.sobel_filter_y)
        y3 = _perceive_with_torch(x, self.laplacian_filter)

        tensor_list = [x]
        tensor_list += [y1, y2, y3]

        y = torch.cat(tensor_list, dim=1)

        if scale != 0:
            y = F.interpolate(y, size=(h, w), mode="bilinear", align_corners=False)
        return y

    def perceive_multiscale(self, x, pos_emb_mat=None):
        perceptions = []
        y = 0
        for scale in self.perception_scales:
            z = self.perceive_torch(x, scale=scale)
            perceptions.append(z)

        y = sum(perceptions)
        y = y / len(self.perception_scales)

        if pos_emb_mat is not None:
            y = torch.cat([y, pos_emb_mat], dim=1)

        return y

    def forward(self, x, update_rate=0.5, return_perception=False):
        if self.pos_emb_2d:
            y_percept = self.perceive_multiscale(x, pos_emb_mat=self.pos_emb_2d(x))
        else:
            y_percept = self.perceive_multiscale(x)
        y = self.w2(torch.relu(self.w1(y_percept)))
        b, c, h, w = y.shape

        udpate_mask = (torch.rand(b, 1, h, w, device=x.device) + update_rate).floor()
        x = x + y * udpate_mask
        if return_perception:
            return x, self.to_rgb(x), y_percept
        return x, self.to_rgb(x)

    def to_rgb(self, x):
        return x[:, :3, ...] * 2.0

    def seed(self, n, h=128, w=128):
        if self.seed_mode == "zeros":
            sd = torch.zeros(n, self.c_in, h, w, device=self.device)
        elif self.seed_mode == "center_on":
            sd = torch.zeros(n, self.c_in, h, w, device=self.device)
            sd[:, 3:, h // 2, w // 2] = 1.0
        elif self.seed_mode == "random":
            g = torch.Generator(device="cpu").manual_seed(self.random_seed)
            sd = (torch.rand(n, self.c_in, h, w, generator=g) - 0.5).to(self.device)
        else:
            raise ValueError("unknown seed mode %s" % self.seed_mode)
        return sd


class CPE2D(nn.Module):
    """Cartesian positional encoding: two channels holding x and y in [-1, 1]."""

    def __init__(self):
        super(CPE2D, self).__init__()
        self.cached_penc = None
        self.last_tensor_shape = None

    def forward(self, tensor):
        if len(tensor.shape) != 4:
            raise RuntimeError("The input tensor has to be 4d!")
        if self.cached_penc is not None and self.last_tensor_shape == tensor.shape:
            return self.cached_penc

        self.cached_penc = None
        batch_size, orig_ch, h, w = tensor.shape
        xs = torch.arange(h, device=tensor.device) / h
        ys = torch.arange(w, device=tensor.device) / w
        xs = 2.0 * (xs - 0.5 + 0.5 / h)
        ys = 2.0 * (ys - 0.5 + 0.5 / w)
        xs = xs[None, :, None]
        ys = ys[None, None, :]
        emb = torch.zeros((2, h, w), device=tensor.device).type(tensor.type())
        emb[:1] = xs
        emb[1:2] = ys

        self.cached_penc = emb.unsqueeze(0).repeat(batch_size, 1, 1, 1)
        self.last_tensor_shape = tensor.shape
        return self.cached_penc


def count_parameters(model):
    return int(np.sum([p.numel() for p in model.parameters() if p.requires_grad]))


class DyNCAVideo(DyNCA):
    """DyNCA variant trained against a target *video* (appearance + motion from
    frames) instead of a synthetic vector field. Adds a learnable per-channel
    bias to the update, and exposes ``rollout`` used by the video losses."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.update_bias = nn.Parameter(torch.zeros(1, self.c_out, 1, 1, device=self.device))

    def forward(self, x, update_rate=0.5, return_perception=False):
        out = super().forward(x, update_rate=update_rate, return_perception=return_perception)
        x_new = out[0] + self.update_bias
        if return_perception:
            return x_new, self.to_rgb(x_new), out[2]
        return x_new, self.to_rgb(x_new)

    def rollout(self, x, n_steps, record_every=1):
        frames = []
        for t in range(n_steps):
            x, img = self(x)
            if (t + 1) % record_every == 0:
                frames.append(img)
        return x, frames


def export_weights_for_webgl(model, path):
    """Quantise the two 1x1 conv layers to uint8 textures for the web demo."""
    import json

    def q(w):
        w = w.detach().float().cpu()
        scale = w.abs().max().item() + 1e-8
        return ((w / scale * 127.0).round() + 128).clamp(0, 255).byte().numpy().tolist(), scale

    w1, s1 = q(model.w1.weight.squeeze(-1).squeeze(-1))
    w2, s2 = q(model.w2.weight.squeeze(-1).squeeze(-1))
    b1 = model.w1.bias.detach().cpu().tolist()
    payload = {"c_in": model.c_in, "fc_dim": model.fc_dim, "w1": w1, "s1": s1, "b1": b1, "w2": w2, "s2": s2,
               "pos_emb": model.pos_emb, "padding_mode": model.padding_mode}
    with open(path, "w") as f:
        json.dump(payload, f)
