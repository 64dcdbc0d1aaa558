#!/usr/bin/env python
"""Run ML/MM molecular dynamics with OpenMM, driving a TorchMD-Net (or TorchANI) potential through openmm-torch.

    python examples/run_openmm_ml.py --pdb alanine-dipeptide-explicit.pdb --model tensornet_spice.ckpt --steps 100000

The ML region (the solute) is handled by the neural network; the solvent stays on the classical force field.
"""

import argparse
import sys
import time

import numpy as np
import openmm
import openmm.app as app
import openmm.unit as unit
import torch
from openmmtorch import TorchForce

from torchmdnet.models.model import load_model


class TorchMDNetForce(torch.nn.Module):
    """Wraps a TorchMD-Net model so that openmm-torch can call it with positions in nm."""

    def __init__(self, checkpoint: str, atomic_numbers, ml_atoms, total_charge: float = 0.0):
        super().__init__()
        self.model = load_model(checkpoint, derivative=False, static_shapes=True, check_errors=False)
        self.register_buffer("z", torch.tensor(atomic_numbers, dtype=torch.long))
        self.register_buffer("ml_atoms", torch.tensor(ml_atoms, dtype=torch.long))
        self.register_buffer("batch", torch.zeros(len(ml_atoms), dtype=torch.long))
        self.register_buffer("q", torch.tensor([total_charge]))
        # kcal/mol -> kJ/mol
        self.energy_scale = 4.184
        # nm -> Angstrom
        self.length_scale = 10.0

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        pos = positions[self.ml_atoms].to(torch.float32) * self.length_scale
        energy, _ = self.model(self.z, pos, self.batch, q=self.q)
        return energy.sum() * self.energy_scale


def build_ani_force(topology, ml_atoms):
    """Alternative ML potential: TorchANI-2x accelerated with NNPOps."""
    import torchani
    from NNPOps import OptimizedTorchANI

    device = torch.device("cuda")
    species = torch.tensor(
        [[atom.element.atomic_number for i, atom in enumerate(topology.atoms()) if i in set(ml_atoms)]],
        device=device,
    )
    ani = torchani.models.ANI2x(periodic_table_index=True).to(device)
    return OptimizedTorchANI(ani, species).to(device)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pdb", required=True)
    parser.add_argument("--model", required=True, help="TorchMD-Net checkpoint, or 'ani2x'")
    parser.add_argument("--steps", type=int, default=10000)
    parser.add_argument("--timestep-fs", type=float, default=1.0)
    parser.add_argument("--temperature", type=float, default=300.0)
    parser.add_argument("--report-interval", type=int, default=1000)
    parser.add_argument("--solute-resname", default="ALA,ACE,NME")
    parser.add_argument("--device-index", default="0")
    parser.add_argument("--cuda-graphs", action="store_true", help="capture the ML force in a CUDA graph")
    parser.add_argument("--out", default="trajectory.dcd")
    return parser.parse_args()


def main():
    args = parse_args()
    pdb = app.PDBFile(args.pdb)
    forcefield = app.ForceField("amber14-all.xml", "amber14/tip3pfb.xml")
    system = forcefield.createSystem(
        pdb.topology,
        nonbondedMethod=app.PME,
        nonbondedCutoff=1.0 * unit.nanometer,
        constraints=app.HBonds,
    )

    solute = set(args.solute_resname.split(","))
    ml_atoms = [a.index for a in pdb.topology.atoms() if a.residue.name in solute]
    z = [a.element.atomic_number for a in pdb.topology.atoms() if a.index in set(ml_atoms)]
    print(f"ML region: {len(ml_atoms)} atoms", file=sys.stderr)

    # remove classical intramolecular terms inside the ML region (mechanical embedding)
    for force in system.getForces():
        if isinstance(force, openmm.HarmonicBondForce):
            for i in range(force.getNumBonds()):
                p1, p2, r0, k = force.getBondParameters(i)
                if p1 in ml_atoms and p2 in ml_atoms:
                    force.setBondParameters(i, p1, p2, r0, 0.0)

    if args.model == "ani2x":
        module = build_ani_force(pdb.topology, ml_atoms)
    else:
        module = TorchMDNetForce(args.model, z, ml_atoms)
    module = torch.jit.script(module)
    module.save("ml_force.pt")

    ml_force = TorchForce("ml_force.pt")
    ml_force.setUsesPeriodicBoundaryConditions(False)
    ml_force.setOutputsForces(False)
    if args.cuda_graphs:
        ml_force.setProperty("useCUDAGraphs", "true")
        ml_force.setProperty("CUDAGraphWarmupSteps", "12")
    system.addForce(ml_force)

    integrator = openmm.LangevinMiddleIntegrator(
        args.temperature * unit.kelvin,
        1.0 / unit.picosecond,
        args.timestep_fs * unit.femtoseconds,
    )
    platform = openmm.Platform.getPlatformByName("CUDA")
    properties = {"DeviceIndex": args.device_index, "Precision": "mixed"}
    simulation = app.Simulation(pdb.topology, system, integrator, platform, properties)
    simulation.context.setPositions(pdb.positions)
    simulation.minimizeEnergy(maxIterations=200)
    simulation.context.setVelocitiesToTemperature(args.temperature * unit.kelvin)

    simulation.reporters.append(app.DCDReporter(args.out, args.report_interval))
    simulation.reporters.append(
        app.StateDataReporter(
            sys.stdout,
            args.report_interval,
            step=True,
            potentialEnergy=True,
            temperature=True,
            speed=True,
            separator="\t",
        )
    )

    t0 = time.time()
    simulation.step(args.steps)
    elapsed = time.time() - t0
    ns_per_day = args.steps * args.timestep_fs * 1e-6 / (elapsed / 86400.0)
    print(f"Platform {platform.getName()}: {ns_per_day:.2f} ns/day", file=sys.stderr)
    state = simulation.context.getState(getEnergy=True)
    print(f"Final potential energy: {state.getPotentialEnergy()}", file=sys.stderr)
    np.save("final_positions.npy", simulation.context.getState(getPositions=True).getPositions(asNumpy=True))


if __name__ == "__main__":
    main()
