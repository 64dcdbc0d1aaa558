"""
This module provides a ASE calculator class [#ase1]_ for SchNetPack models, as
well as a general Interface to all ASE calculation methods, such as geometry
optimisation, normal mode computation and molecular dynamics simulations.

References
----------
.. [#ase1] Larsen, Mortensen, Blomqvist, Castelli, Christensen, Dułak, Friis,
    Groves, Hammer, Hargus: The atomic simulation environment -- a Python
    library for working with atoms.
    Journal of Physics: Condensed Matter, 9, 27. 2017.
"""

import os
import logging
from typing import Dict, List, Optional, Union

import ase
import numpy as np
import torch
from ase import units
from ase.calculators.calculator import Calculator, all_changes
from ase.io import read, write
from ase.md import VelocityVerlet, Langevin
from ase.md.velocitydistribution import MaxwellBoltzmannDistribution, Stationary, ZeroRotation
from ase.optimize import QuasiNewton

import schnetpack as spk
from schnetpack import properties
from schnetpack.data.loader import _atoms_collate_fn
from schnetpack.transform import CastTo32, CastTo64
from schnetpack.units import convert_units

log = logging.getLogger(__name__)

__all__ = ["SpkCalculator", "AseInterface", "AtomsConverter"]


class AtomsConverterError(Exception):
    pass


class AtomsConverter:
    """
    Convert ASE atoms to SchNetPack input batch format for model prediction.
    """

    def __init__(
        self,
        neighbor_list,
        transforms=None,
        device: Union[str, torch.device] = "cpu",
        dtype: torch.dtype = torch.float32,
        additional_inputs: Optional[Dict[str, torch.Tensor]] = None,
    ):
        self.neighbor_list = spk.transform.CachedNeighborList(neighbor_list) if neighbor_list else None
        self.device = device
        self.dtype = dtype
        self.additional_inputs = additional_inputs or {}

        # convert transforms and neighbor_list to list
        transforms = transforms or []
        if type(transforms) != list:
            transforms = [transforms]
        neighbor_list = [] if self.neighbor_list is None else [self.neighbor_list]

        # get transforms and initialize neighbor list
        self.transforms: List[spk.transform.Transform] = neighbor_list + transforms

        # Set numerical precision
        if dtype == torch.float32:
            self.transforms.append(CastTo32())
        elif dtype == torch.float64:
            self.transforms.append(CastTo64())
        else:
            raise AtomsConverterError(f"Unrecognized precision {dtype}")

    def __call__(self, atoms: Union[List[ase.Atoms], ase.Atoms]):
        if type(atoms) == ase.Atoms:
            atoms = [atoms]

        inputs_batch = []
        for at_idx, at in enumerate(atoms):
            inputs = {
                properties.n_atoms: torch.tensor([at.get_global_number_of_atoms()]),
                properties.Z: torch.from_numpy(at.get_atomic_numbers()),
                properties.R: torch.from_numpy(at.get_positions()),
                properties.cell: torch.from_numpy(at.get_cell().array).view(-1, 3, 3),
                properties.pbc: torch.from_numpy(at.get_pbc()).view(-1, 3),
            }
            inputs[properties.idx] = torch.tensor([at_idx])
            for transform in self.transforms:
                inputs = transform(inputs)
            inputs_batch.append(inputs)

        inputs = _atoms_collate_fn(inputs_batch)
        # Move input batch to device
        inputs = {p: inputs[p].to(self.device, non_blocking=True) for p in inputs}
        return inputs


class SpkCalculator(Calculator):
    """
    ASE calculator for schnetpack machine learning models.

    Args:
        model_file (str): path to trained model
        neighbor_list (schnetpack.transform.Transform): SchNetPack neighbor list
        energy_key (str): name of energies in model (default="energy")
        force_key (str): name of forces in model (default="forces")
        stress_key (str): name of stress tensor in model. Will not be computed if set to None (default=None)
        energy_unit (str, float): energy units used by model (default="kcal/mol")
        position_unit (str, float): position units used by model (default="Angstrom")
        device (torch.device): device used for calculations (default="cuda")
        dtype (torch.dtype): select model precision (default=float32)
        converter (schnetpack.interfaces.AtomsConverter): converter used to set up input batches
        transforms (schnetpack.transform.Transform, list): transforms for the converter.
    """

    energy = "energy"
    forces = "forces"
    stress = "stress"
    implemented_properties = [energy, forces, stress]

    def __init__(
        self,
        model_file: str,
        neighbor_list: spk.transform.Transform,
        energy_key: str = "energy",
        force_key: str = "forces",
        stress_key: Optional[str] = None,
        energy_unit: Union[str, float] = "kcal/mol",
        position_unit: Union[str, float] = "Angstrom",
        device: Union[str, torch.device] = "cuda",
        dtype: torch.dtype = torch.float32,
        converter: callable = AtomsConverter,
        transforms: Union[spk.transform.Transform, List[spk.transform.Transform]] = None,
        additional_inputs: Dict[str, torch.Tensor] = None,
        **kwargs,
    ):
        Calculator.__init__(self, **kwargs)

        self.converter = converter(
            neighbor_list=neighbor_list,
            device=device,
            dtype=dtype,
            transforms=transforms,
            additional_inputs=additional_inputs,
        )

        self.energy_key = energy_key
        self.force_key = force_key
        self.stress_key = stress_key

        # Mapping between ASE names and model outputs
        self.property_map = {
            self.energy: energy_key,
            self.forces: force_key,
            self.stress: stress_key,
        }

        self.model = self._load_model(model_file)
        self.model.to(device=device, dtype=dtype)
        self.device = torch.device(device)

        # set up basic conversion factors
        self.energy_conversion = convert_units(energy_unit, "eV")
        self.position_conversion = convert_units(position_unit, "Angstrom")

        # Unit conversion to default ASE units
        self.property_units = {
            self.energy: self.energy_conversion,
            self.forces: self.energy_conversion / self.position_conversion,
            self.stress: self.energy_conversion / self.position_conversion**3,
        }

        # Container for basic ml model ouputs
        self.model_results = None

    def _load_model(self, model_file: str) -> spk.model.AtomisticModel:
        """
        Load an individual model, activate stress computation

        Args:
            model_file (str): path to model.

        Returns:
           AtomisticTask: loaded schnetpack model
        """

        log.info("Loading model from {:s}".format(model_file))
        # load model and keep it on CPU, device can be changed afterwards
        model = torch.load(model_file, map_location="cpu", weights_only=False).to(torch.float64)
        model = model.eval()

        if self.stress_key is not None:
            log.info("Activating stress computation...")
            model.do_postprocessing = True

        return model

    def calculate(
        self,
        atoms: ase.Atoms = None,
        properties: List[str] = ["energy"],
        system_changes: List[str] = all_changes,
    ):
        # First call original calculator to set atoms attribute
        # (see https://wiki.fysik.dtu.dk/ase/_modules/ase/calculators/calculator.html#Calculator)

        if self.calculation_required(atoms, properties):
            Calculator.calculate(self, atoms)

            # Convert to schnetpack input format
            model_inputs = self.converter(atoms)
            model_results = self.model(model_inputs)

            results = {}
            # TODO: use index information to slice everything properly
            for prop in properties:
                model_prop = self.property_map[prop]

                if model_prop in model_results:
                    if prop == self.energy:
                        # ase calculator should return scalar energy
                        results[prop] = model_results[model_prop].cpu().data.numpy().item() * self.property_units[prop]
                    elif prop == self.stress:
                        # squeeze stress[1,3,3] to stress[3,3]
                        results[prop] = model_results[model_prop].cpu().data.numpy()[0] * self.property_units[prop]
                    else:
                        results[prop] = model_results[model_prop].cpu().data.numpy() * self.property_units[prop]
                else:
                    raise AtomsConverterError(f"'{prop}' is not a property of your model. Please check the model properties!")

            self.results = results
            self.model_results = model_results
            if self.device.type == "cuda" and len(atoms) > 5000:
                # large periodic systems fragment the caching allocator between MD steps
                torch.cuda.empty_cache()


class AseInterface:
    """
    Interface for ASE calculations (optimization and molecular dynamics)
    """

    def __init__(
        self,
        molecule_path: str,
        working_dir: str,
        model_file: str,
        neighbor_list: spk.transform.Transform,
        energy_key: str = "energy",
        force_key: str = "forces",
        stress_key: Optional[str] = None,
        energy_unit: Union[str, float] = "kcal/mol",
        position_unit: Union[str, float] = "Angstrom",
        device: Union[str, torch.device] = "cpu",
        dtype: torch.dtype = torch.float64,
        converter: AtomsConverter = AtomsConverter,
        optimizer_class: type = QuasiNewton,
        fixed_atoms: Optional[List[int]] = None,
        transforms: Union[spk.transform.Transform, List[spk.transform.Transform]] = None,
        additional_inputs: Dict[str, torch.Tensor] = None,
    ):
        # Setup directory
        self.working_dir = working_dir
        if not os.path.exists(self.working_dir):
            os.makedirs(self.working_dir)

        # Load the molecule
        self.molecule = read(molecule_path)

        # Apply position constraints
        if fixed_atoms:
            c = ase.constraints.FixAtoms(fixed_atoms)
            self.molecule.set_constraint(constraint=c)

        # Set up optimizer
        self.optimizer_class = optimizer_class

        # Set up calculator
        calculator = SpkCalculator(
            model_file=model_file,
            neighbor_list=neighbor_list,
            energy_key=energy_key,
            force_key=force_key,
            stress_key=stress_key,
            energy_unit=energy_unit,
            position_unit=position_unit,
            device=device,
            dtype=dtype,
            converter=converter,
            transforms=transforms,
            additional_inputs=additional_inputs,
        )

        self.molecule.set_calculator(calculator)

        self.dynamics = None

    def init_md(self, name: str, time_step: float = 0.5, temp_init: float = 300, temp_bath: Optional[float] = None,
                reset: bool = False, interval: int = 1):
        # If a previous dynamics run has been performed, don't reinitialize
        # velocities unless explicitly requested via restart=True
        if self.dynamics is None or reset:
            self._init_velocities(temp_init=temp_init)

        # Set up dynamics
        if temp_bath is None:
            self.dynamics = VelocityVerlet(self.molecule, time_step * units.fs)
        else:
            self.dynamics = Langevin(self.molecule, time_step * units.fs, temp_bath * units.kB, 1.0 / (100.0 * units.fs))

        # Create monitors for logfile and a trajectory file
        logfile = os.path.join(self.working_dir, "%s.log" % name)
        trajfile = os.path.join(self.working_dir, "%s.traj" % name)
        self.dynamics.attach(ase.md.MDLogger(self.dynamics, self.molecule, logfile, stress=False, peratom=False, header=True, mode="a"), interval=interval)
        self.dynamics.attach(ase.io.Trajectory(trajfile, "w", self.molecule).write, interval=interval)

    def _init_velocities(self, temp_init: float = 300, remove_translation: bool = True, remove_rotation: bool = True):
        MaxwellBoltzmannDistribution(self.molecule, temperature_K=temp_init)
        if remove_translation:
            Stationary(self.molecule)
        if remove_rotation:
            ZeroRotation(self.molecule)

    def run_md(self, steps: int):
        if not self.dynamics:
            raise AttributeError("Dynamics need to be initialized using the 'setup_md' function")
        self.dynamics.run(steps)

    def optimize(self, fmax: float = 1.0e-2, steps: int = 1000):
        name = "optimization"
        optimize_file = os.path.join(self.working_dir, name)
        optimizer = self.optimizer_class(self.molecule, trajectory="%s.traj" % optimize_file, restart="%s.pkl" % optimize_file)
        optimizer.run(fmax, steps)

        # Save final geometry in xyz format
        self.save_molecule(name)

    def save_molecule(self, name: str, file_format: str = "xyz", append: bool = False):
        molecule_path = os.path.join(self.working_dir, "%s.%s" % (name, file_format))
        write(molecule_path, self.molecule, format=file_format, append=append)
