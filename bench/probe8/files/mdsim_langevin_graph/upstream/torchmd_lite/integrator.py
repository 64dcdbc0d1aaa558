"""Integrators for running molecular dynamics with a neural-network potential.

The potential is any module mapping (atomic numbers, positions, batch) -> energy, or, for
"direct" models, -> (energy, forces). Conservative forces are obtained with autograd; direct
models are captured once in a CUDA graph and replayed every step, which removes most of the
Python and launch overhead for small systems (a few hundred atoms).
"""
import math
import time
from dataclasses import dataclass
from typing import Callable, Optional, Tuple

import numpy as np
import torch
from torch import Tensor

BOLTZMANN = 0.0019872041  # kcal / (mol K)
TIMEUNIT = 48.88821 * 1e-3  # internal time unit in fs -> AKMA
FS = 1.0 / TIMEUNIT


@dataclass
class MDConfig:
    timestep_fs: float = 1.0
    temperature: float = 300.0
    friction: float = 0.1
    n_steps: int = 10000
    log_every: int = 100
    save_every: int = 1000
    precision: str = "double"
    cuda_graph: bool = True
    seed: int = 1
    remove_com: bool = True


@dataclass
class SystemState:
    z: Tensor
    pos: Tensor
    vel: Tensor
    masses: Tensor
    box: Optional[Tensor] = None
    forces: Optional[Tensor] = None
    energy: Optional[Tensor] = None


def default_device() -> torch.device:
    if torch.cuda.is_available():
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def wrap_positions(pos: Tensor, box: Optional[Tensor]) -> Tensor:
    if box is None:
        return pos
    # orthorhombic box only: box is (3,) of edge lengths
    return pos - torch.floor(pos / box) * box


def maxwell_boltzmann(masses: Tensor, temperature: float, generator: torch.Generator) -> Tensor:
    sigma = torch.sqrt(BOLTZMANN * temperature / masses).unsqueeze(-1)
    noise = torch.randn(masses.shape[0], 3, generator=generator, dtype=masses.dtype)
    return (sigma.cpu() * noise).to(masses.device)


def remove_center_of_mass_motion(vel: Tensor, masses: Tensor) -> Tensor:
    m = masses.unsqueeze(-1)
    p_com = (vel * m).sum(0, keepdim=True) / m.sum()
    return vel - p_com


def kinetic_energy(vel: Tensor, masses: Tensor) -> Tensor:
    return 0.5 * (masses.unsqueeze(-1) * vel * vel).sum()


def instantaneous_temperature(ekin: Tensor, n_atoms: int) -> float:
    dof = 3 * n_atoms - 3
    return float(2.0 * ekin / (dof * BOLTZMANN))


class ConservativeForceField(torch.nn.Module):
    """Energy model -> (energy, forces) through autograd."""

    def __init__(self, model: torch.nn.Module, z: Tensor, batch: Tensor):
        super().__init__()
        self.model = model
        self.register_buffer("z", z)
        self.register_buffer("batch", batch)

    def forward(self, pos: Tensor) -> Tuple[Tensor, Tensor]:
        pos = pos.detach().requires_grad_(True)
        energy = self.model(self.z, pos, self.batch)
        (grad,) = torch.autograd.grad(energy.sum(), pos)
        return energy.detach(), -grad


class DirectForceField(torch.nn.Module):
    """Model with a force head: no backward pass, safe to capture in a graph."""

    def __init__(self, model: torch.nn.Module, z: Tensor, batch: Tensor):
        super().__init__()
        self.model = model
        self.register_buffer("z", z)
        self.register_buffer("batch", batch)

    @torch.no_grad()
    def forward(self, pos: Tensor) -> Tuple[Tensor, Tensor]:
        energy, forces = self.model(self.z, pos, self.batch)
        return energy, forces


class GraphedForceField:
    """Capture one force evaluation and replay it with new positions copied in place."""

    def __init__(self, ff: Callable[[Tensor], Tuple[Tensor, Tensor]], example_pos: Tensor, warmup: int = 3):
        self.ff = ff
        self.static_pos = example_pos.detach().clone()
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(warmup):
                self.static_energy, self.static_forces = ff(self.static_pos)
        torch.cuda.current_stream().wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.static_energy, self.static_forces = ff(self.static_pos)

    def __call__(self, pos: Tensor) -> Tuple[Tensor, Tensor]:
        self.static_pos.copy_(pos)
        self.graph.replay()
        return self.static_energy.clone(), self.static_forces.clone()


class LangevinIntegrator:
    """BAOAB Langevin splitting (Leimkuhler & Matthews)."""

    def __init__(self, model: torch.nn.Module, state: SystemState, cfg: MDConfig,
                 direct_forces: bool = False, device: Optional[torch.device] = None):
        self.cfg = cfg
        self.device = device or default_device()
        self.dtype = torch.float64 if cfg.precision == "double" else torch.float32
        self.state = self._to_device(state)
        self.dt = cfg.timestep_fs * FS
        self.gamma = cfg.friction
        self.kT = BOLTZMANN * cfg.temperature
        self.generator = torch.Generator(device="cpu").manual_seed(cfg.seed)
        batch = torch.zeros_like(self.state.z)
        model = model.to(self.device, self.dtype).eval()
        if direct_forces:
            ff = DirectForceField(model, self.state.z, batch)
            if cfg.cuda_graph:
                self.force_fn = GraphedForceField(ff, self.state.pos)
            else:
                self.force_fn = ff
        else:
            self.force_fn = ConservativeForceField(model, self.state.z, batch)
        self._pin_log = self.device.type == "cuda"
        self.trajectory = []
        self.log = []

    def _to_device(self, s: SystemState) -> SystemState:
        return SystemState(
            z=s.z.to(self.device),
            pos=s.pos.to(self.device, self.dtype),
            vel=s.vel.to(self.device, self.dtype),
            masses=s.masses.to(self.device, self.dtype),
            box=None if s.box is None else s.box.to(self.device, self.dtype),
        )

    def initialize(self):
        s = self.state
        if s.vel.abs().sum() == 0:
            s.vel = maxwell_boltzmann(s.masses, self.cfg.temperature, self.generator)
        if self.cfg.remove_com:
            s.vel = remove_center_of_mass_motion(s.vel, s.masses)
        s.energy, s.forces = self.force_fn(s.pos)

    def _ou_step(self, vel: Tensor, masses: Tensor) -> Tensor:
        c1 = math.exp(-self.gamma * self.dt)
        c2 = math.sqrt(1.0 - c1 * c1)
        sigma = torch.sqrt(self.kT / masses).unsqueeze(-1)
        noise = torch.randn(vel.shape, generator=self.generator, dtype=vel.dtype).to(vel.device, non_blocking=True)
        return c1 * vel + c2 * sigma * noise

    def step(self):
        s = self.state
        inv_m = (1.0 / s.masses).unsqueeze(-1)
        s.vel = s.vel + 0.5 * self.dt * s.forces * inv_m                 # B
        s.pos = wrap_positions(s.pos + 0.5 * self.dt * s.vel, s.box)      # A
        s.vel = self._ou_step(s.vel, s.masses)                            # O
        s.pos = wrap_positions(s.pos + 0.5 * self.dt * s.vel, s.box)      # A
        s.energy, s.forces = self.force_fn(s.pos)
        s.vel = s.vel + 0.5 * self.dt * s.forces * inv_m                 # B

    def _snapshot(self) -> np.ndarray:
        pos = self.state.pos.detach()
        if self._pin_log:
            buf = torch.empty(pos.shape, dtype=pos.dtype, pin_memory=True)
            buf.copy_(pos, non_blocking=True)
            return buf
        return pos.cpu()

    def run(self, n_steps: Optional[int] = None):
        n_steps = n_steps or self.cfg.n_steps
        self.initialize()
        n_atoms = self.state.pos.shape[0]
        t0 = time.perf_counter()
        for it in range(1, n_steps + 1):
            self.step()
            if it % self.cfg.save_every == 0:
                self.trajectory.append(self._snapshot())
            if it % self.cfg.log_every == 0:
                torch.cuda.synchronize()
                ekin = kinetic_energy(self.state.vel, self.state.masses)
                epot = self.state.energy.sum()
                elapsed = time.perf_counter() - t0
                ns_per_day = (it * self.cfg.timestep_fs * 1e-6) / (elapsed / 86400.0)
                row = {
                    "step": it,
                    "epot": float(epot),
                    "ekin": float(ekin),
                    "etot": float(epot + ekin),
                    "T": instantaneous_temperature(ekin, n_atoms),
                    "ns_day": ns_per_day,
                }
                self.log.append(row)
                print("{step:>8d} Epot={epot:12.4f} Ekin={ekin:10.4f} T={T:7.2f}K {ns_day:8.2f} ns/day".format(**row))
        return self.log


def write_xyz(path: str, z: Tensor, frames, comment: str = ""):
    symbols = {1: "H", 6: "C", 7: "N", 8: "O", 16: "S"}
    with open(path, "w") as fh:
        for frame in frames:
            frame = np.asarray(frame)
            fh.write(f"{len(z)}\n{comment}\n")
            for zi, xyz in zip(z.tolist(), frame):
                fh.write(f"{symbols.get(zi, 'X')} {xyz[0]:.5f} {xyz[1]:.5f} {xyz[2]:.5f}\n")


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--system", required=True, help=".npz with z, pos, masses")
    parser.add_argument("--steps", type=int, default=10000)
    parser.add_argument("--direct", action="store_true")
    parser.add_argument("--out", default="traj.xyz")
    args = parser.parse_args()

    data = np.load(args.system)
    state = SystemState(
        z=torch.from_numpy(data["z"]).long(),
        pos=torch.from_numpy(data["pos"]),
        vel=torch.zeros(len(data["z"]), 3, dtype=torch.float64),
        masses=torch.from_numpy(data["masses"]),
    )
    net = torch.load(args.model, map_location="cuda")
    integ = LangevinIntegrator(net, state, MDConfig(n_steps=args.steps), direct_forces=args.direct)
    integ.run()
    write_xyz(args.out, state.z, integ.trajectory, comment="langevin")
