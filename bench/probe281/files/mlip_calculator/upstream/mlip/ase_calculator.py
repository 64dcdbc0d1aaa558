"""ASE calculator for potentials trained with mlip/train.py.

Usage::

    from mlip.ase_calculator import GraphPotentialCalculator
    atoms.calc = GraphPotentialCalculator("runs/round3/best.pt")
    atoms.get_potential_energy()

The calculator keeps the model on the GPU and rebuilds the periodic neighbour
list on every call (positions/cell change during relaxations). For many small
structures use :func:`batch_single_points`, which batches them into one graph.
"""
from __future__ import annotations

import logging
import time
from typing import Iterable, Sequence

import numpy as np
import torch
from ase import Atoms
from ase.calculators.calculator import Calculator, all_changes
from ase.stress import full_3x3_to_voigt_6_stress
from torch_geometric.data import Batch, Data

from gnome_pipeline.neighbors import edge_vectors, neighbor_list
from mlip.ema import ExponentialMovingAverage
from mlip.models import build_model

logger = logging.getLogger(__name__)


def atoms_to_graph(atoms: Atoms, cutoff: float, dtype: torch.dtype = torch.float32) -> Data:
    pos = torch.as_tensor(atoms.get_positions(), dtype=dtype)
    cell = torch.as_tensor(np.asarray(atoms.get_cell()), dtype=dtype)
    numbers = torch.as_tensor(atoms.get_atomic_numbers(), dtype=torch.long)
    pbc = torch.as_tensor(atoms.get_pbc(), dtype=torch.bool)
    return Data(
        pos=pos,
        cell=cell[None],
        atomic_numbers=numbers,
        pbc=pbc[None],
        natoms=torch.tensor([len(atoms)]),
        cutoff=cutoff,
    )


def _load(checkpoint: str, device: torch.device, use_ema: bool = True):
    ckpt = torch.load(checkpoint, map_location=device)
    args = ckpt["args"]
    model = build_model(args["model"], cutoff=float(args["cutoff"]), avg_num_neighbors=None)
    model.load_state_dict(ckpt["model"])
    if use_ema and "ema" in ckpt:
        ema = ExponentialMovingAverage(model.parameters(), decay=0.0)
        ema.load_state_dict(ckpt["ema"])
        ema.copy_to(model.parameters())
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model.to(device), float(args["cutoff"])


class GraphPotentialCalculator(Calculator):
    implemented_properties = ["energy", "free_energy", "forces", "stress"]

    def __init__(
        self,
        checkpoint: str,
        device: str | None = None,
        dtype: torch.dtype = torch.float32,
        compute_stress: bool = True,
        use_ema: bool = True,
        timing: bool = False,
        **kwargs,
    ):
        Calculator.__init__(self, **kwargs)
        if device is None:
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = torch.device(device)
        self.dtype = dtype
        self.model, self.cutoff = _load(checkpoint, self.device, use_ema=use_ema)
        self.model.to(dtype)
        self.compute_stress = compute_stress
        self.timing = timing
        self._t_model = 0.0
        self._n_calls = 0

        # TF32 changes forces at the 1e-3 eV/A level, which is enough to stall
        # FIRE near convergence; keep full fp32 matmuls for inference
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False

    def _sync(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def calculate(self, atoms=None, properties=None, system_changes=all_changes):
        properties = properties or ["energy"]
        Calculator.calculate(self, atoms, properties, system_changes)

        data = atoms_to_graph(self.atoms, self.cutoff, self.dtype)
        batch = Batch.from_data_list([data]).to(self.device)
        batch.pos.requires_grad_(True)

        strain = None
        if self.compute_stress:
            # virial via the strain derivative: apply a symmetric displacement
            strain = torch.zeros(3, 3, dtype=self.dtype, device=self.device, requires_grad=True)
            sym = 0.5 * (strain + strain.T)
            batch.pos = batch.pos + batch.pos @ sym
            batch.cell = batch.cell + batch.cell @ sym

        edge_index, shifts, _ = neighbor_list(batch.pos, batch.cell, self.cutoff, batch=batch.batch)
        batch.edge_index = edge_index
        batch.edge_vec = edge_vectors(batch.pos, batch.cell, edge_index, shifts, batch.batch)

        if self.timing:
            self._sync()
            t0 = time.perf_counter()
        with torch.enable_grad():
            energy = self.model(batch)["energy"].sum()
            inputs = [batch.pos] + ([strain] if strain is not None else [])
            grads = torch.autograd.grad(energy, inputs)
        if self.timing:
            self._sync()
            self._t_model += time.perf_counter() - t0
            self._n_calls += 1

        forces = -grads[0]
        self.results["energy"] = float(energy.detach().cpu())
        self.results["free_energy"] = self.results["energy"]
        self.results["forces"] = forces.detach().cpu().numpy().astype(np.float64)
        if strain is not None:
            volume = abs(float(np.linalg.det(self.atoms.get_cell())))
            stress = grads[1].detach().cpu().numpy().astype(np.float64) / volume
            self.results["stress"] = full_3x3_to_voigt_6_stress(stress)

    @property
    def mean_model_time_ms(self) -> float:
        return 1e3 * self._t_model / max(self._n_calls, 1)


@torch.no_grad()
def _energies_from_batch(model, batch) -> torch.Tensor:
    return model(batch)["energy"]


def batch_single_points(
    calc: GraphPotentialCalculator,
    atoms_list: Sequence[Atoms],
    batch_size: int = 64,
) -> np.ndarray:
    """Energies (eV) of many structures, batched. Forces are not computed."""
    energies: list[np.ndarray] = []
    for start in range(0, len(atoms_list), batch_size):
        chunk = atoms_list[start : start + batch_size]
        graphs = [atoms_to_graph(a, calc.cutoff, calc.dtype) for a in chunk]
        batch = Batch.from_data_list(graphs).to(calc.device, non_blocking=True)
        edge_index, shifts, _ = neighbor_list(batch.pos, batch.cell, calc.cutoff, batch=batch.batch)
        batch.edge_index = edge_index
        batch.edge_vec = edge_vectors(batch.pos, batch.cell, edge_index, shifts, batch.batch)
        energies.append(_energies_from_batch(calc.model, batch).float().cpu().numpy())
    return np.concatenate(energies) if energies else np.zeros(0)


def iter_relaxed(
    atoms_iter: Iterable[Atoms], calc: GraphPotentialCalculator, fmax: float = 0.05, steps: int = 300
):
    """Yield (atoms, converged) for each structure, relaxing positions and cell with FIRE."""
    from ase.filters import FrechetCellFilter
    from ase.optimize import FIRE

    for atoms in atoms_iter:
        atoms = atoms.copy()
        atoms.calc = calc
        opt = FIRE(FrechetCellFilter(atoms), logfile=None)
        converged = opt.run(fmax=fmax, steps=steps)
        yield atoms, bool(converged)
