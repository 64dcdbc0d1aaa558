#!/usr/bin/env python
"""
Run a (ring-polymer) molecular dynamics simulation driven by a trained
SchNetPack / PaiNN model.

    spkmd_run.py --model forcefield/best_model --structure ethanol.xyz \
        --replicas 8 --steps 50000 --temperature 300 --device cuda

Everything (system, integrator, thermostat, calculator) is moved onto the
same device with ``simulator.to(device)``; neighbour lists are rebuilt on the
GPU with the torch implementation unless --neighbor-list ase is given.
"""
import argparse
import logging
import os

import torch
from ase.io import read

import schnetpack as spk
import schnetpack.transform as trn
from schnetpack import properties
from schnetpack.md import System, UniformInit, Simulator
from schnetpack.md.calculators import SchNetPackCalculator
from schnetpack.md.integrators import VelocityVerlet, RingPolymer
from schnetpack.md.neighborlist_md import NeighborListMD
from schnetpack.md.simulation_hooks import (
    LangevinThermostat,
    PILELocalThermostat,
    FileLogger,
    MoleculeStream,
    PropertyStream,
    Checkpoint,
)

log = logging.getLogger(__name__)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="path to a deployed model (torch.save'd)")
    parser.add_argument("--structure", required=True, help="initial geometry readable by ASE")
    parser.add_argument("--replicas", type=int, default=1, help="number of (ring-polymer) replicas")
    parser.add_argument("--steps", type=int, default=20000)
    parser.add_argument("--time-step", type=float, default=0.5, help="fs")
    parser.add_argument("--temperature", type=float, default=300.0, help="K")
    parser.add_argument("--cutoff", type=float, default=5.0, help="Angstrom")
    parser.add_argument("--cutoff-shell", type=float, default=2.0, help="Verlet skin, Angstrom")
    parser.add_argument("--neighbor-list", default="torch", choices=["torch", "ase", "matscipy"])
    parser.add_argument("--precision", type=int, default=64, choices=[32, 64],
                        help="float precision of the simulation (64 for good energy conservation)")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--gpu-id", type=int, default=0)
    parser.add_argument("--log-file", default="simulation.hdf5")
    parser.add_argument("--checkpoint", default="simulation.chk")
    parser.add_argument("--restart", action="store_true")
    return parser.parse_args()


def build_neighbor_list(args):
    nl_impl = {
        "torch": trn.TorchNeighborList,
        "ase": trn.ASENeighborList,  # CPU only, fine for small molecules
        "matscipy": trn.MatScipyNeighborList,  # CPU only
    }[args.neighbor_list]
    return NeighborListMD(args.cutoff, args.cutoff_shell, nl_impl)


def build_system(args, device, precision):
    molecule = read(args.structure)
    system = System()
    system.load_molecules(molecule, args.replicas, position_unit_input="Angstrom")
    initializer = UniformInit(
        args.temperature,
        remove_center_of_mass=True,
        remove_translation=True,
        remove_rotation=True,
    )
    initializer.initialize_system(system)
    return system


def build_hooks(args):
    if args.replicas > 1:
        thermostat = PILELocalThermostat(args.temperature, time_constant=100.0)
    else:
        thermostat = LangevinThermostat(args.temperature, time_constant=100.0)

    data_streams = [
        MoleculeStream(store_velocities=True),
        PropertyStream(target_properties=[properties.energy]),
    ]
    file_logger = FileLogger(
        args.log_file,
        buffer_size=100,
        data_streams=data_streams,
        every_n_steps=1,
        precision=32,
    )
    checkpoint = Checkpoint(args.checkpoint, every_n_steps=100)
    return [thermostat, file_logger, checkpoint]


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    if args.device.startswith("cuda"):
        torch.cuda.set_device(args.gpu_id)
        device = torch.device(f"cuda:{args.gpu_id}")
    else:
        device = torch.device(args.device)
    precision = torch.float64 if args.precision == 64 else torch.float32
    log.info(f"running on {device} with {precision}")

    system = build_system(args, device, precision)

    if args.replicas > 1:
        integrator = RingPolymer(args.replicas, args.time_step, args.temperature)
    else:
        integrator = VelocityVerlet(args.time_step)

    calculator = SchNetPackCalculator(
        args.model,
        "forces",
        "kcal/mol",
        "Angstrom",
        build_neighbor_list(args),
        energy_key="energy",
        required_properties=[],
        script_model=False,
    )

    simulator = Simulator(system, integrator, calculator, simulator_hooks=build_hooks(args))
    simulator = simulator.to(precision)
    simulator = simulator.to(device)

    if args.restart and os.path.exists(args.checkpoint):
        state = torch.load(args.checkpoint, map_location=device)
        simulator.restart_simulation(state, soft=False)
        log.info(f"restarted from {args.checkpoint} at step {simulator.step}")

    with torch.cuda.amp.autocast(enabled=False):
        simulator.simulate(args.steps)

    if device.type == "cuda":
        log.info(f"peak memory: {torch.cuda.max_memory_allocated(device) / 2**30:.2f} GiB")
    log.info("done")


if __name__ == "__main__":
    main()
