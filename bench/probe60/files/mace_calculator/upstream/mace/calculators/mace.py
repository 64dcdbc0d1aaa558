###########################################################################################
# The ASE Calculator for MACE
# Authors: Ilyes Batatia, David Kovacs
# This program is distributed under the MIT License (see MIT.md)
###########################################################################################

import logging
import os
from glob import glob
from pathlib import Path
from typing import List, Optional, Union

import numpy as np
import torch
from ase.calculators.calculator import Calculator, all_changes
from ase.stress import full_3x3_to_voigt_6_stress
from e3nn import o3

from mace import data
from mace.cli.convert_e3nn_cueq import run as run_e3nn_to_cueq
from mace.modules.utils import extract_invariant
from mace.tools import torch_geometric, torch_tools, utils
from mace.tools.compile import prepare
from mace.tools.scripts_utils import extract_model

module_dir = os.path.dirname(__file__)
local_model_path = os.path.join(module_dir, "foundations_models/mace-mpa-0-medium.model")


def get_model_dtype(model: torch.nn.Module) -> torch.dtype:
    """Get the dtype of the model"""
    mode_dtype = next(model.parameters()).dtype
    if mode_dtype == torch.float64:
        return "float64"
    if mode_dtype == torch.float32:
        return "float32"
    raise ValueError(f"Unknown dtype {mode_dtype}")


def compute_hessians_vmap(forces: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    forces_flatten = forces.view(-1)
    num_elements = forces_flatten.shape[0]

    def get_vjp(v):
        return torch.autograd.grad(
            -1 * forces_flatten,
            positions,
            v,
            retain_graph=True,
            create_graph=False,
            allow_unused=False,
        )

    I_N = torch.eye(num_elements).to(forces.device)
    try:
        chunk_size = 1 if num_elements < 64 else 16
        gradient = torch.vmap(get_vjp, in_dims=0, out_dims=0, chunk_size=chunk_size)(I_N)[0]
    except RuntimeError:
        gradient = compute_hessians_loop(forces, positions)
    if gradient is None:
        return torch.zeros((positions.shape[0], forces.shape[0], 3, 3))
    return gradient


def compute_hessians_loop(forces: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    hessian = []
    for grad_elem in forces.view(-1):
        hess_row = torch.autograd.grad(
            outputs=[-1 * grad_elem],
            inputs=[positions],
            grad_outputs=torch.ones_like(grad_elem),
            retain_graph=True,
            create_graph=False,
            allow_unused=False,
        )[0]
        hess_row = hess_row.detach()
        if hess_row is None:
            hessian.append(torch.zeros_like(positions))
        else:
            hessian.append(hess_row)
    return torch.stack(hessian)


class MACECalculator(Calculator):
    """MACE ASE Calculator
    args:
        model_paths: str, path to model or models if a committee is produced
                to make a committee use a wild card notation like mace_*.model
        device: str, device to run on (cuda or cpu)
        energy_units_to_eV: float, conversion factor from model energy units to eV
        length_units_to_A: float, conversion factor from model length units to Angstroms
        default_dtype: str, default dtype of model
        charges_key: str, Array field of atoms object where atomic charges are stored
        model_type: str, type of model to load
                    Options: [MACE, DipoleMACE, EnergyDipoleMACE]

    Dipoles are returned in units of Debye
    """

    def __init__(
        self,
        model_paths: Union[list, str, None] = None,
        models: Union[List[torch.nn.Module], torch.nn.Module, None] = None,
        device: str = "cpu",
        energy_units_to_eV: float = 1.0,
        length_units_to_A: float = 1.0,
        default_dtype="",
        charges_key="Qs",
        model_type="MACE",
        compile_mode=None,
        fullgraph=True,
        enable_cueq=False,
        **kwargs,
    ):
        Calculator.__init__(self, **kwargs)
        if enable_cueq:
            assert model_type == "MACE", "CuEq only supports MACE models"
            compile_mode = None
        if "model_path" in kwargs:
            print("model_path argument deprecated, use model_paths")
            model_paths = kwargs["model_path"]

        if model_type == "MACE":
            self.implemented_properties = ["energy", "free_energy", "node_energy", "forces", "stress"]
        elif model_type == "DipoleMACE":
            self.implemented_properties = ["dipole"]
        elif model_type == "EnergyDipoleMACE":
            self.implemented_properties = ["energy", "free_energy", "node_energy", "forces", "stress", "dipole"]
        else:
            raise ValueError(f"Give a valid model_type: [MACE, DipoleMACE, EnergyDipoleMACE], {model_type} not supported")

        if model_paths is not None:
            if isinstance(model_paths, str):
                model_paths_glob = glob(model_paths)
                if len(model_paths_glob) == 0:
                    raise ValueError(f"Couldn't find MACE model files: {model_paths}")
                model_paths = model_paths_glob
            elif isinstance(model_paths, Path):
                model_paths = [model_paths]
            self.num_models = len(model_paths)
            self.models = [
                torch.load(f=model_path, map_location=device)
                for model_path in model_paths
            ]
        elif models is not None:
            if not isinstance(models, list):
                models = [models]
            self.num_models = len(models)
            self.models = models
        else:
            raise ValueError("No models supplied")

        self.use_compile = compile_mode is not None
        if self.use_compile:
            self.models = [
                torch.compile(
                    prepare(extract_model)(model=model, map_location=device),
                    mode=compile_mode,
                    fullgraph=fullgraph,
                )
                for model in self.models
            ]

        self.device = torch_tools.init_device(device)
        self.energy_units_to_eV = energy_units_to_eV
        self.length_units_to_A = length_units_to_A
        self.z_table = utils.AtomicNumberTable([int(z) for z in self.models[0].atomic_numbers])
        self.charges_key = charges_key
        try:
            self.heads = self.models[0].heads
        except AttributeError:
            self.heads = ["Default"]
        model_dtype = get_model_dtype(self.models[0])
        if default_dtype == "":
            print(f"No dtype selected, switching to {model_dtype} to match model dtype.")
            default_dtype = model_dtype
        if model_dtype != default_dtype:
            print(f"Changing default dtype to {default_dtype} to match model dtype")
            if default_dtype == "float64":
                self.models = [model.double() for model in self.models]
            elif default_dtype == "float32":
                self.models = [model.float() for model in self.models]
        torch_tools.set_default_dtype(default_dtype)
        if enable_cueq:
            print("Converting models to CuEq for acceleration")
            self.models = [run_e3nn_to_cueq(model, device=device).to(device) for model in self.models]
        for model in self.models:
            for param in model.parameters():
                param.requires_grad = False

    def _create_result_tensors(self, model_type: str, num_models: int, num_atoms: int) -> dict:
        dict_of_tensors = {}
        if model_type in ["MACE", "EnergyDipoleMACE"]:
            energies = torch.zeros(num_models, device=self.device)
            node_energy = torch.zeros(num_models, num_atoms, device=self.device)
            forces = torch.zeros(num_models, num_atoms, 3, device=self.device)
            stress = torch.zeros(num_models, 3, 3, device=self.device)
            dict_of_tensors.update({"energies": energies, "node_energy": node_energy, "forces": forces, "stress": stress})
        if model_type in ["EnergyDipoleMACE", "DipoleMACE"]:
            dipole = torch.zeros(num_models, 3, device=self.device)
            dict_of_tensors.update({"dipole": dipole})
        return dict_of_tensors

    def _atoms_to_batch(self, atoms):
        keyspec = data.KeySpecification(info_keys={}, arrays_keys={"charges": self.charges_key})
        config = data.config_from_atoms(atoms, key_specification=keyspec, head_name=self.heads[0])
        data_loader = torch_geometric.dataloader.DataLoader(
            dataset=[data.AtomicData.from_config(config, z_table=self.z_table, cutoff=self.r_max, heads=self.heads)],
            batch_size=1,
            shuffle=False,
            drop_last=False,
        )
        batch = next(iter(data_loader)).to(self.device)
        return batch

    @property
    def r_max(self) -> float:
        return float(self.models[0].r_max)

    def calculate(self, atoms=None, properties=None, system_changes=all_changes):
        """
        Calculate properties.
        :param atoms: ase.Atoms object
        :param properties: [str], properties to be computed, used by ASE internally
        :param system_changes: [str], system changes since last calculation, used by ASE internally
        :return:
        """
        Calculator.calculate(self, atoms)
        batch_base = self._atoms_to_batch(atoms)
        compute_stress = not self.use_compile and atoms.cell.rank == 3
        ret_tensors = self._create_result_tensors("MACE", len(self.models), len(atoms))
        for i, model in enumerate(self.models):
            batch = batch_base.clone()
            out = model(batch.to_dict(), compute_stress=compute_stress, training=self.use_compile)
            ret_tensors["energies"][i] = out["energy"].detach()
            ret_tensors["node_energy"][i] = (out["node_energy"]).detach()
            ret_tensors["forces"][i] = out["forces"].detach()
            if out["stress"] is not None:
                ret_tensors["stress"][i] = out["stress"].detach()

        self.results = {}
        self.results["energy"] = torch.mean(ret_tensors["energies"], dim=0).cpu().item() * self.energy_units_to_eV
        self.results["free_energy"] = self.results["energy"]
        self.results["node_energy"] = torch.mean(ret_tensors["node_energy"], dim=0).cpu().numpy()
        self.results["forces"] = (
            torch.mean(ret_tensors["forces"], dim=0).cpu().numpy()
            * self.energy_units_to_eV
            / self.length_units_to_A
        )
        if self.num_models > 1:
            self.results["energies"] = ret_tensors["energies"].cpu().numpy() * self.energy_units_to_eV
            self.results["energy_var"] = torch.var(ret_tensors["energies"], dim=0, unbiased=False).cpu().item() * self.energy_units_to_eV
        if compute_stress:
            self.results["stress"] = full_3x3_to_voigt_6_stress(
                torch.mean(ret_tensors["stress"], dim=0).cpu().numpy()
                * self.energy_units_to_eV
                / self.length_units_to_A**3
            )

    def get_hessian(self, atoms=None):
        if atoms is None and self.atoms is None:
            raise ValueError("atoms not set")
        if atoms is None:
            atoms = self.atoms
        batch = self._atoms_to_batch(atoms)
        hessians = [
            model(batch.to_dict(), compute_hessian=True, compute_stress=False, training=self.use_compile)["hessian"]
            for model in self.models
        ]
        hessians = [hessian.detach().cpu().numpy() for hessian in hessians]
        if self.num_models == 1:
            return hessians[0]
        return hessians

    def get_descriptors(self, atoms=None, invariants_only=True, num_layers=-1):
        if atoms is None and self.atoms is None:
            raise ValueError("atoms not set")
        if atoms is None:
            atoms = self.atoms
        num_interactions = int(self.models[0].num_interactions)
        if num_layers == -1:
            num_layers = num_interactions
        batch = self._atoms_to_batch(atoms)
        descriptors = [model(batch.to_dict())["node_feats"] for model in self.models]
        irreps_out = o3.Irreps(str(self.models[0].products[0].linear.irreps_out))
        l_max = irreps_out.lmax
        num_invariant_features = irreps_out.dim // (l_max + 1) ** 2
        per_layer_features = [irreps_out.dim for _ in range(num_interactions)]
        per_layer_features[-1] = num_invariant_features
        if invariants_only:
            descriptors = [
                extract_invariant(descriptor, num_layers=num_layers, num_features=num_invariant_features, l_max=l_max)
                for descriptor in descriptors
            ]
        to_keep = np.sum(per_layer_features[:num_layers])
        descriptors = [descriptor[:, :to_keep].detach().cpu().numpy() for descriptor in descriptors]
        if self.num_models == 1:
            return descriptors[0]
        return descriptors


def mace_mp(
    model: Union[str, Path] = None,
    device: str = "",
    default_dtype: str = "float32",
    dispersion: bool = False,
    return_raw_model: bool = False,
    **kwargs,
) -> MACECalculator:
    """Constructs a MACECalculator with a pretrained model based on the Materials Project (89 elements)."""
    if model in (None, "medium") and os.path.isfile(local_model_path):
        model = local_model_path
        print(f"Using local medium Materials Project MACE model for MACECalculator {model}")
    model_path = utils.download_mace_mp_checkpoint(model) if not os.path.isfile(str(model)) else str(model)

    if return_raw_model:
        return torch.load(model_path, map_location=device)

    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    if default_dtype == "float64":
        print("Using float64 for MACECalculator, which is slower but more accurate. Recommended for geometry optimization.")
    if default_dtype == "float32":
        print("Using float32 for MACECalculator, which is faster but less accurate. Recommended for MD. Use float64 for geometry optimization.")
    mace_calc = MACECalculator(model_paths=model_path, device=device, default_dtype=default_dtype, **kwargs)
    if not dispersion:
        return mace_calc
    from torch_dftd.torch_dftd3_calculator import TorchDFTD3Calculator
    from ase.calculators.mixing import SumCalculator

    d3_calc = TorchDFTD3Calculator(device=device, damping="bj", dtype=torch.float32, xc="pbe", **kwargs)
    return SumCalculator([mace_calc, d3_calc])


def mace_off(
    model: Union[str, Path] = None,
    device: str = "",
    default_dtype: str = "float64",
    return_raw_model: bool = False,
    **kwargs,
) -> MACECalculator:
    """Constructs a MACECalculator with a pretrained model based on the MACE-OFF23 models."""
    model_path = utils.download_mace_off_checkpoint(model) if not os.path.isfile(str(model)) else str(model)
    if return_raw_model:
        return torch.load(model_path, map_location=device)
    if not device:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    return MACECalculator(model_paths=model_path, device=device, default_dtype=default_dtype, **kwargs)


def mace_anicc(
    device: str = "cuda",
    model_path: str = None,
    return_raw_model: bool = False,
) -> MACECalculator:
    """Constructs a MACECalculator with a pretrained model based on the ANI (H, C, N, O)."""
    if model_path is None:
        model_path = os.path.join(module_dir, "foundations_models/ani500k_large_CC.model")
        print("Using ANI couple cluster model for MACECalculator, see https://doi.org/10.1063/5.0155322")
    if return_raw_model:
        return torch.load(model_path, map_location=device)
    return MACECalculator(model_paths=model_path, device=device, default_dtype="float64")
