"""
Ring-polymer MD of ethanol with a trained SchNetPack (PaiNN) model.

Follows the structure of the SchNetPack MD tutorial: build a System with
replicas, attach a SchNetPackCalculator, pick an integrator and thermostat,
and run the Simulator on the GPU. 16 beads at 300 K, 0.5 fs steps.
"""
import argparse
import logging
import os

import torch
from ase.io import read

import schnetpack as spk
import schnetpack.md as md
import schnetpack.md.simulation_hooks as hooks
from schnetpack.md.calculators import SchNetPackCalculator
from schnetpack.md.data import HDF5Loader
from schnetpack.md.integrators import RingPolymer
from schnetpack.md.neighborlist_md import NeighborListMD
from schnetpack.transform import ASENeighborList

logging.basicConfig(level=logging.INFO)
log = logging.getLogger("rpmd")


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="forcetut/best_inference_model")
    p.add_argument("--molecule", default="ethanol.xyz")
    p.add_argument("--n_replicas", type=int, default=16)
    p.add_argument("--n_steps", type=int, default=20000)
    p.add_argument("--time_step", type=float, default=0.5, help="fs")
    p.add_argument("--temperature", type=float, default=300.0)
    p.add_argument("--cutoff", type=float, default=5.0)
    p.add_argument("--cutoff_shell", type=float, default=2.0)
    p.add_argument("--outdir", default="rpmd_ethanol")
    p.add_argument("--gpu", type=int, default=0, help="CUDA device index")
    p.add_argument("--precision", type=int, choices=[32, 64], default=64)
    p.add_argument("--restart", default=None)
    return p.parse_args()


def main():
    args = get_args()
    os.makedirs(args.outdir, exist_ok=True)

    md_device = f"cuda:{args.gpu}" if torch.cuda.is_available() else "cpu"
    md_precision = torch.float64 if args.precision == 64 else torch.float32
    log.info(f"Simulation device: {md_device}, precision: {md_precision}")

    # molecule and system
    molecule = read(args.molecule)
    md_system = md.System()
    md_system.load_molecules(
        molecule,
        args.n_replicas,
        position_unit_input="Angstrom",
    )

    # initial momenta
    md_initializer = md.UniformInit(
        args.temperature,
        remove_center_of_mass=True,
        remove_translation=True,
        remove_rotation=True,
    )
    md_initializer.initialize_system(md_system)

    # ring polymer integrator (time step in fs)
    md_integrator = RingPolymer(
        args.time_step,
        args.n_replicas,
        args.temperature,
    )

    # neighbor list recomputed only when atoms leave the buffer shell
    md_neighborlist = NeighborListMD(
        args.cutoff,
        args.cutoff_shell,
        ASENeighborList,
    )

    md_calculator = SchNetPackCalculator(
        args.model,  # path to stored model
        "forces",  # force key
        "kcal/mol",  # energy units
        "Angstrom",  # length units
        md_neighborlist,  # neighbor list
        energy_key="energy",  # name of potential energies
        required_properties=[],  # additional properties extracted from the model
    )

    # thermostat for the ring polymer (PILE in normal mode representation)
    thermostat = hooks.PILELocalThermostat(temperature_bath=args.temperature, time_constant=100.0)

    # logging / checkpoints
    log_file = os.path.join(args.outdir, "simulation.hdf5")
    buffer_size = 100
    data_streams = [
        hooks.callback_hooks.MoleculeStream(store_velocities=True),
        hooks.callback_hooks.PropertyStream(target_properties=["energy"]),
    ]
    file_logger = hooks.callback_hooks.FileLogger(
        log_file,
        buffer_size,
        data_streams=data_streams,
        every_n_steps=1,
        precision=32,
    )
    chk_file = os.path.join(args.outdir, "simulation.chk")
    checkpoint = hooks.callback_hooks.Checkpoint(chk_file, every_n_steps=100)
    tensorboard_dir = os.path.join(args.outdir, "logs")
    tensorboard_logger = hooks.TensorBoardLogger(
        tensorboard_dir,
        ["energy", "temperature"],
    )

    simulation_hooks = [thermostat, file_logger, checkpoint, tensorboard_logger]

    md_simulator = md.Simulator(
        md_system,
        md_integrator,
        md_calculator,
        simulator_hooks=simulation_hooks,
    )
    md_simulator = md_simulator.to(md_precision)
    md_simulator = md_simulator.to(md_device)

    if args.restart is not None:
        state_dict = torch.load(args.restart, map_location=md_device)
        md_simulator.restart_simulation(state_dict, soft=False)
        log.info(f"Restarted from {args.restart} at step {md_simulator.step}")

    if torch.cuda.is_available():
        torch.backends.cudnn.benchmark = True
        torch.cuda.reset_peak_memory_stats()

    md_simulator.simulate(args.n_steps)

    if md_device.startswith("cuda"):
        peak = torch.cuda.max_memory_allocated() / 1024**2
        log.info(f"Peak GPU memory: {peak:.0f} MiB")

    # quick look at the data
    data = HDF5Loader(log_file)
    energies = data.get_potential_energy()
    log.info(f"Read {energies.shape[0]} frames; mean Epot {energies.mean():.4f}")


if __name__ == "__main__":
    main()
