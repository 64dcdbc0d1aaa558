"""Ground-truth cellular automata used as training targets for the logic CA.

All rules act on binary grids [B, 1, H, W] with periodic boundaries.
"""
import torch
import torch.nn.functional as F

MOORE = torch.tensor([[1.0, 1.0, 1.0], [1.0, 0.0, 1.0], [1.0, 1.0, 1.0]])


def neighbour_count(x):
    k = MOORE.to(device=x.device, dtype=x.dtype).view(1, 1, 3, 3)
    xp = F.pad(x, (1, 1, 1, 1), mode="circular")
    return F.conv2d(xp, k)


def life_like_step(x, birth=(3,), survive=(2, 3)):
    """Generic outer-totalistic rule, B3/S23 is Conway's Game of Life."""
    n = neighbour_count(x)
    born = torch.zeros_like(x, dtype=torch.bool)
    for b in birth:
        born |= n == b
    stay = torch.zeros_like(x, dtype=torch.bool)
    for s in survive:
        stay |= n == s
    alive = x > 0.5
    return ((~alive & born) | (alive & stay)).to(x.dtype)


def gol_step(x):
    return life_like_step(x, birth=(3,), survive=(2, 3))


def highlife_step(x):
    return life_like_step(x, birth=(3, 6), survive=(2, 3))


def seeds_step(x):
    return life_like_step(x, birth=(2,), survive=())


RULES = {"gol": gol_step, "highlife": highlife_step, "seeds": seeds_step}


def random_grids(n, h, w, density=0.5, device="cpu", generator=None):
    return (torch.rand((n, 1, h, w), device=device, generator=generator) < density).float()


def all_3x3_patterns(device="cpu"):
    """All 512 binary 3x3 neighbourhoods, each embedded in a 3x3 torus."""
    idx = torch.arange(512, device=device)
    bits = ((idx[:, None] >> torch.arange(9, device=device)[None]) & 1).float()
    return bits.view(512, 1, 3, 3)


def glider(h=16, w=16, device="cpu"):
    g = torch.zeros((1, 1, h, w), device=device)
    g[0, 0, 1, 2] = 1
    g[0, 0, 2, 3] = 1
    g[0, 0, 3, 1:4] = 1
    return g


def rollout(step_fn, x, n):
    frames = [x]
    for _ in range(n):
        x = step_fn(x)
        frames.append(x)
    return torch.stack(frames, dim=1)
