#!/usr/bin/env python
"""Run ML/MM molecular dynamics of a small molecule in water with a TorchANI potential for the solute.

The ML potential is exported to TorchScript and attached to the OpenMM System through
openmmtorch.TorchForce; the water and solute-solvent terms stay classical (amber14/tip3p).

Example:
    python run_ani_openmm_torch.py --pdb ala2_solvated.pdb --steps 50000 --platform CUDA
"""
import argparse
import sys
import time

import torch
import torchani
from openmm import LangevinMiddleIntegrator, Platform, unit
from openmm.app import PDBFile, ForceField, PME, HBonds, Simulation, StateDataReporter, DCDReporter
from openmmtorch import TorchForce


class ANIForce(torch.nn.Module):
    """Energy of the ML region only; OpenMM passes all positions in nm."""

    def __init__(self, species, atom_indices, model_name="ANI2x"):
        super().__init__()
        self.model = getattr(torchani.models, model_name)(periodic_table_index=True)
        self.register_buffer("atom_indices", torch.tensor(atom_indices, dtype=torch.int64))
        self.register_buffer("species", torch.tensor(species, dtype=torch.int64).unsqueeze(0))
        # ANI works in Angstrom and Hartree; OpenMM in nm and kJ/mol
        self.length_scale = 10.0
        self.energy_scale = 2625.4996394799

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        positions = positions.to(torch.float32)
        ml_pos = positions[self.atom_indices].unsqueeze(0) * self.length_scale
        _, energy = self.model((self.species, ml_pos))
        return energy[0] * self.energy_scale


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pdb", required=True)
    p.add_argument("--ml-residue", default="ALA", help="residue name(s) treated with ANI, comma separated")
    p.add_argument("--steps", type=int, default=10000)
    p.add_argument("--report-every", type=int, default=1000)
    p.add_argument("--platform", default="CUDA", choices=["Reference", "CPU", "CUDA", "OpenCL"])
    p.add_argument("--device-index", default="0", help="GPU index passed to the platform")
    p.add_argument("--precision", default="mixed", choices=["single", "mixed", "double"])
    p.add_argument("--model-file", default="ani_force.pt")
    p.add_argument("--cuda-graphs", action="store_true", help="let TorchForce capture the model in a CUDA graph")
    return p.parse_args()


def main():
    args = parse_args()
    pdb = PDBFile(args.pdb)
    ml_residues = set(args.ml_residue.split(","))
    atoms = [a for a in pdb.topology.atoms() if a.residue.name in ml_residues]
    atom_indices = [a.index for a in atoms]
    species = [a.element.atomic_number for a in atoms]
    print(f"{len(atom_indices)} atoms in the ML region", file=sys.stderr)

    # Export the ML potential; TorchForce loads it again in C++ (libtorch, CUDA if the platform is CUDA)
    module = torch.jit.script(ANIForce(species, atom_indices))
    module.save(args.model_file)

    forcefield = ForceField("amber14-all.xml", "amber14/tip3p.xml")
    system = forcefield.createSystem(pdb.topology, nonbondedMethod=PME, nonbondedCutoff=1.0 * unit.nanometer, constraints=HBonds)

    torch_force = TorchForce(args.model_file)
    torch_force.setUsesPeriodicBoundaryConditions(False)
    if args.cuda_graphs:
        torch_force.setProperty("useCUDAGraphs", "true")
        torch_force.setProperty("CUDAGraphWarmupSteps", "10")
    system.addForce(torch_force)

    integrator = LangevinMiddleIntegrator(300 * unit.kelvin, 1.0 / unit.picosecond, 0.002 * unit.picoseconds)
    platform = Platform.getPlatformByName(args.platform)
    properties = {}
    if args.platform == "CUDA":
        properties = {"Precision": args.precision, "DeviceIndex": args.device_index}
        # make TorchForce and OpenMM share the same CUDA context and stream
        properties["UseBlockingSync"] = "false"
    elif args.platform == "OpenCL":
        properties = {"Precision": args.precision}

    simulation = Simulation(pdb.topology, system, integrator, platform, properties)
    simulation.context.setPositions(pdb.positions)
    simulation.minimizeEnergy(maxIterations=200)
    simulation.context.setVelocitiesToTemperature(300 * unit.kelvin)

    simulation.reporters.append(DCDReporter("trajectory.dcd", args.report_every))
    simulation.reporters.append(
        StateDataReporter(sys.stdout, args.report_every, step=True, potentialEnergy=True, temperature=True, speed=True)
    )

    t0 = time.time()
    simulation.step(args.steps)
    elapsed = time.time() - t0
    ns = args.steps * 0.002 / 1000
    print(f"{ns / (elapsed / 86400):.2f} ns/day on {platform.getName()}", file=sys.stderr)
    if torch.cuda.is_available():
        print(f"torch peak memory: {torch.cuda.max_memory_allocated() / 2**20:.1f} MiB", file=sys.stderr)


if __name__ == "__main__":
    main()
