"""Hand-defined behavioural statistics of a Lenia world, used as IMGEP goal space.

All statistics are computed on the final state of a rollout. ``embed`` returns a
numpy vector (used for nearest-neighbour search), ``embed_torch`` a
differentiable tensor on the same device as the world (used by the inner
optimisation).
"""
import numpy as np
import torch
import torch.nn.functional as F
from scipy import ndimage


class LeniaStatistics:
    FEATURES = ("mass", "centroid_speed", "spread", "activation_entropy", "n_connected")

    def __init__(self, SX, SY, features=None):
        self.SX = SX
        self.SY = SY
        self.features = tuple(features) if features is not None else self.FEATURES
        self.prev_centroid = None
        y, x = np.mgrid[0:SX, 0:SY]
        self.grid_x = torch.as_tensor(x, dtype=torch.float32)
        self.grid_y = torch.as_tensor(y, dtype=torch.float32)
        self.goal_low = None
        self.goal_high = None

    # ------------------------------------------------------------------ numpy
    def embed(self, state):
        a = state.detach().float().cpu().numpy().reshape(self.SX, self.SY)
        mass = a.sum()
        out = []
        if "mass" in self.features:
            out.append(mass / (self.SX * self.SY))
        cy, cx = (ndimage.center_of_mass(a) if mass > 0 else (self.SX / 2.0, self.SY / 2.0))
        if "centroid_speed" in self.features:
            if self.prev_centroid is None:
                speed = 0.0
            else:
                dy = (cy - self.prev_centroid[0] + self.SX / 2) % self.SX - self.SX / 2
                dx = (cx - self.prev_centroid[1] + self.SY / 2) % self.SY - self.SY / 2
                speed = float(np.hypot(dx, dy))
            self.prev_centroid = (cy, cx)
            out.append(speed)
        if "spread" in self.features:
            yy, xx = np.mgrid[0 : self.SX, 0 : self.SY]
            var = ((yy - cy) ** 2 + (xx - cx) ** 2) * a
            out.append(float(np.sqrt(var.sum() / max(mass, 1e-8))) / self.SX)
        if "activation_entropy" in self.features:
            hist, _ = np.histogram(a[a > 1e-3], bins=20, range=(0, 1))
            p = hist / max(hist.sum(), 1)
            p = p[p > 0]
            out.append(float(-(p * np.log(p)).sum()) / np.log(20))
        if "n_connected" in self.features:
            labels, n = ndimage.label(a > 0.1)
            out.append(min(n, 20) / 20.0)
        return np.asarray(out, dtype=np.float32)

    # ------------------------------------------------------------------ torch
    def embed_torch(self, state):
        a = state.reshape(self.SX, self.SY).float()
        gx = self.grid_x.to(a.device)
        gy = self.grid_y.to(a.device)
        mass = a.sum()
        cx = (a * gx).sum() / (mass + 1e-8)
        cy = (a * gy).sum() / (mass + 1e-8)
        spread = torch.sqrt((((gx - cx) ** 2 + (gy - cy) ** 2) * a).sum() / (mass + 1e-8)) / self.SX
        # soft histogram for a differentiable entropy estimate
        centers = torch.linspace(0.025, 0.975, 20, device=a.device)
        w = torch.exp(-((a.reshape(-1, 1) - centers[None]) ** 2) / (2 * 0.025 ** 2))
        w = w * (a.reshape(-1, 1) > 1e-3).float()
        p = w.sum(0) / (w.sum() + 1e-8)
        entropy = -(p * torch.log(p + 1e-8)).sum() / np.log(20)
        feats = [mass / (self.SX * self.SY), torch.zeros((), device=a.device), spread, entropy,
                 torch.zeros((), device=a.device)]
        return torch.stack(feats[: len(self.features)])

    # ------------------------------------------------------------ goal space
    def sample_goal(self, rng, embeddings, extend=0.2):
        low = embeddings.min(axis=0)
        high = embeddings.max(axis=0)
        span = np.maximum(high - low, 1e-3)
        low = low - extend * span
        high = high + extend * span
        self.goal_low, self.goal_high = low, high
        return rng.uniform(low, high).astype(np.float32)


def pattern_is_soliton(observations, min_mass=10.0, tol=0.05):
    """A crude soliton test: roughly constant mass over the last half of the run."""
    masses = observations.reshape(observations.shape[0], -1).sum(-1)
    tail = masses[masses.shape[0] // 2 :]
    if tail.min() < min_mass:
        return False
    rel = (tail.max() - tail.min()) / tail.mean()
    return bool(rel < tol)


def downsample_for_display(state, size=64):
    x = state.reshape(1, 1, *state.shape[-2:]).float()
    return F.interpolate(x, size=(size, size), mode="area")[0, 0].cpu().numpy()
