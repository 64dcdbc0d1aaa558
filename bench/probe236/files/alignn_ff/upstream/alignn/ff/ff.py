"""Module for running ALIGNN-FF."""

from ase.md import MDLogger
from jarvis.core.atoms import Atoms as JarvisAtoms
import os
from ase.md.nvtberendsen import NVTBerendsen
from ase.md.nptberendsen import NPTBerendsen
from ase.io import Trajectory
import matplotlib.pyplot as plt
from jarvis.analysis.thermodynamics.energetics import unary_energy
from ase.md.velocitydistribution import (
    MaxwellBoltzmannDistribution,
    Stationary,
    ZeroRotation,
)
from ase.optimize.fire import FIRE
from ase.optimize import BFGS, LBFGS
from ase.constraints import ExpCellFilter
from ase.eos import EquationOfState
from ase.calculators.calculator import Calculator, all_changes
from alignn.graphs import Graph
from alignn.models.alignn_atomwise import (
    ALIGNNAtomWise,
    ALIGNNAtomWiseConfig,
)
import torch
from jarvis.db.jsonutils import loadjson
import numpy as np
from ase import Atoms as AseAtoms
from ase import units
from ase.md.langevin import Langevin
from ase.md.verlet import VelocityVerlet
from jarvis.analysis.defects.vacancy import Vacancy
from jarvis.analysis.defects.surface import Surface
from jarvis.core.kpoints import Kpoints3D as Kpoints
from jarvis.io.phonopy.outputs import bandstructure_plot
import time

plt.switch_backend("agg")

# Reference values of chemical potentials for elements, used when
# computing vacancy / surface energies with the force field.
unary_energy_data_url = (
    "https://figshare.com/ndownloader/files/40357663"
)


def default_path():
    """Get default model path."""
    dpath = os.path.abspath(
        str(os.path.join(os.path.dirname(__file__), "alignnff_wt10"))
    )
    # print("model_path", dpath)
    return dpath


def ase_to_atoms(ase_atoms="", cartesian=True):
    """Convert ase structure to Atoms."""
    return JarvisAtoms(
        lattice_mat=ase_atoms.get_cell(),
        elements=ase_atoms.get_chemical_symbols(),
        coords=ase_atoms.get_positions(),
        cartesian=cartesian,
    )


class AlignnAtomwiseCalculator(Calculator):
    """Module for ASE Calculator interface."""

    def __init__(
        self,
        restart=None,
        ignore_bad_restart_file=Calculator._deprecated,
        label=None,
        include_stress=True,
        intermediate_lattice_graph=False,
        atoms=None,
        directory=".",
        device=None,
        model=None,
        config=None,
        path=".",
        model_filename="best_model.pt",
        config_filename="config.json",
        stress_wt=1.0,
        force_multiplier=1.0,
        force_mult_natoms=False,
        batch_stress=True,
        **kwargs,
    ):
        """Initialize class."""
        super(AlignnAtomwiseCalculator, self).__init__(
            restart, ignore_bad_restart_file, label, atoms, directory, **kwargs
        )
        self.model = model
        self.device = device
        self.include_stress = include_stress
        self.intermediate_lattice_graph = intermediate_lattice_graph
        self.stress_wt = stress_wt
        self.force_multiplier = force_multiplier
        self.force_mult_natoms = force_mult_natoms
        self.batch_stress = batch_stress
        if self.include_stress:
            self.implemented_properties = ["energy", "forces", "stress"]
        else:
            self.implemented_properties = ["energy", "forces"]
        if config is None:
            config = loadjson(os.path.join(path, config_filename))
        self.config = config
        if self.device is None:
            self.device = torch.device(
                "cuda" if torch.cuda.is_available() else "cpu"
            )
        if self.model is None:
            model = ALIGNNAtomWise(ALIGNNAtomWiseConfig(**config["model"]))
            model.state_dict()
            model.load_state_dict(
                torch.load(
                    os.path.join(path, model_filename),
                    map_location=self.device,
                )
            )
            model.to(self.device)
            model.eval()
            self.model = model
        else:
            self.model.to(self.device)

    def calculate(self, atoms, properties=None, system_changes=None):
        """Calculate properties."""
        j_atoms = ase_to_atoms(atoms)
        num_atoms = j_atoms.num_atoms
        g, lg = Graph.atom_dgl_multigraph(
            j_atoms,
            neighbor_strategy=self.config["neighbor_strategy"],
            cutoff=self.config["cutoff"],
            max_neighbors=self.config["max_neighbors"],
            atom_features=self.config["atom_features"],
            use_canonize=self.config["use_canonize"],
        )
        if self.config["model"]["alignn_layers"] > 0:
            lat = torch.tensor(atoms.cell.array).type(
                torch.get_default_dtype()
            )
            result = self.model(
                (
                    g.to(self.device),
                    lg.to(self.device),
                    lat.to(self.device),
                )
            )
        else:
            result = self.model((g.to(self.device), lg.to(self.device)))
        forces = self.force_multiplier * result["grad"].detach().cpu().numpy()
        if self.force_mult_natoms:
            forces *= num_atoms
        energy = result["out"].detach().cpu().numpy()
        if self.batch_stress:
            stress = (
                self.stress_wt
                * -1
                * result["stresses"][:3].reshape(3, 3).detach().cpu().numpy()
            )
        else:
            stress = (
                self.stress_wt
                * result["stresses"][:3].reshape(3, 3).detach().cpu().numpy()
            )
        self.results = {
            "energy": energy,
            "forces": forces,
            "stress": full_3x3_to_voigt_6_stress(stress),
            "dipole": np.zeros(3),
            "charges": np.zeros(len(atoms)),
            "magmom": 0.0,
            "magmoms": np.zeros(len(atoms)),
        }


def full_3x3_to_voigt_6_stress(stress_matrix):
    """Convert a 3x3 stress tensor into Voigt notation."""
    stress_matrix = np.asarray(stress_matrix)
    return np.array(
        [
            stress_matrix[0, 0],
            stress_matrix[1, 1],
            stress_matrix[2, 2],
            (stress_matrix[1, 2] + stress_matrix[2, 1]) / 2,
            (stress_matrix[0, 2] + stress_matrix[2, 0]) / 2,
            (stress_matrix[0, 1] + stress_matrix[1, 0]) / 2,
        ]
    )


class ForceField(object):
    """Module to run ALIGNN-FF."""

    def __init__(
        self,
        jarvis_atoms=None,
        model_path="out",
        model_filename="best_model.pt",
        include_stress=True,
        timestep=None,
        print_format=None,
        logger=None,
        dyn=None,
        communicator=None,
        stress_wt=1.0,
        force_multiplier=1.0,
        force_mult_natoms=False,
        batch_stress=True,
    ):
        """Intialize class."""
        self.jarvis_atoms = jarvis_atoms
        self.model_path = model_path
        self.model_filename = model_filename
        self.include_stress = include_stress
        self.timestep = timestep
        self.atoms = self.jarvis_atoms.ase_converter()
        self.print_format = print_format
        self.dyn = dyn
        self.communicator = communicator
        self.logger = logger
        if self.timestep is None:
            self.timestep = 0.01
        # Convert in appropriate unit
        self.timestep = self.timestep * units.fs
        self.logger = logger
        if self.print_format is None:
            self.print_format = self.example_print()
        if self.logger is None:
            self.logger = MDLogger(
                self.dyn,
                self.atoms,
                "md.log",
                header=True,
                stress=False,
                peratom=True,
                mode="a",
            )
        self.atoms.calc = AlignnAtomwiseCalculator(
            path=self.model_path,
            include_stress=self.include_stress,
            model_filename=self.model_filename,
            stress_wt=stress_wt,
            force_multiplier=force_multiplier,
            force_mult_natoms=force_mult_natoms,
            batch_stress=batch_stress,
            device="cuda" if torch.cuda.is_available() else "cpu",
        )

    def example_print(self):
        """Print info."""
        if isinstance(self.atoms, ExpCellFilter):
            self.atoms = self.atoms.atoms
        line = ""
        try:
            line = f"time={self.dyn.get_time() / units.fs: 5.0f} fs "
        except Exception:
            pass
        line += (
            f"a={self.atoms.get_cell()[0,0]: 3.3f} Ang "
            + f"b={self.atoms.get_cell()[1,1]: 3.3f} Ang "
            + f"c={self.atoms.get_cell()[2,2]: 3.3f} Ang "
            + f"Volume={self.atoms.get_volume(): 3.3f} amu/a3 "
            + f"PE={self.atoms.get_potential_energy(): 5.5f} eV "
            + f"KE={self.atoms.get_kinetic_energy(): 5.5f} eV "
            + f"T={self.atoms.get_temperature(): 3.3f} K "
        )
        print(line)

    def set_momentum_maxwell_boltzmann(self, temperature_K=10):
        """Set initial temperature."""
        print("SETTING INITIAL TEMPERATURE K", temperature_K)
        MaxwellBoltzmannDistribution(self.atoms, temperature_K=temperature_K)
        Stationary(self.atoms)
        ZeroRotation(self.atoms)

    def unrelaxed_atoms(self):
        """Get energy of a system."""
        pe = self.atoms.get_potential_energy()
        # print("energy", pe)
        fs = self.atoms.get_forces()
        # print("forces", fs)
        return pe, fs

    def optimize_atoms(
        self,
        optimizer="FIRE",
        trajectory="opt.traj",
        logfile="opt.log",
        steps=1000,
        fmax=0.05,
        optimize_lattice=True,
        interval=1,
    ):
        """Optimize structure."""
        available_ase_optimizers = {
            "BFGS": BFGS,
            "LBFGS": LBFGS,
            "FIRE": FIRE,
        }

        optimizer = available_ase_optimizers.get(optimizer)
        if optimize_lattice:
            self.atoms = ExpCellFilter(self.atoms)
        print("OPTIMIZATION")
        self.dyn = optimizer(
            self.atoms, trajectory="opt.traj", logfile="opt.log"
        )
        self.dyn.attach(self.example_print, interval=interval)
        self.dyn.run(fmax=fmax, steps=steps)
        return (
            ase_to_atoms(self.atoms.atoms),
            self.atoms.get_potential_energy(),
            self.atoms.get_forces(),
        )

    def run_nve_velocity_verlet(
        self,
        filename="ase_nve",
        interval=1,
        steps=1000,
        initial_temperature_K=None,
    ):
        """Run NVE."""
        print("NVE VELOCITY VERLET")
        if initial_temperature_K is not None:
            self.set_momentum_maxwell_boltzmann(
                temperature_K=initial_temperature_K
            )
        self.dyn = VelocityVerlet(self.atoms, self.timestep)
        self.dyn.attach(self.example_print, interval=interval)
        trajectory = Trajectory(filename + ".traj", "w", self.atoms)
        self.dyn.attach(trajectory.write, interval=interval)
        self.dyn.run(steps)
        return ase_to_atoms(self.atoms)

    def run_nvt_langevin(
        self,
        filename="ase_nvt_langevin",
        interval=1,
        temperature_K=300,
        steps=1000,
        friction=1e-4,
        initial_temperature_K=None,
    ):
        """Run NVT."""
        print("NVT LANGEVIN")
        if initial_temperature_K is not None:
            self.set_momentum_maxwell_boltzmann(
                temperature_K=initial_temperature_K
            )
        self.dyn = Langevin(
            self.atoms,
            self.timestep,
            temperature_K=temperature_K,
            friction=friction,
            communicator=self.communicator,
        )
        self.dyn.attach(self.example_print, interval=interval)
        trajectory = Trajectory(filename + ".traj", "w", self.atoms)
        self.dyn.attach(trajectory.write, interval=interval)
        self.dyn.run(steps)
        return ase_to_atoms(self.atoms)

    def run_nvt_berendsen(
        self,
        filename="ase_nvt_berendsen",
        interval=1,
        temperature_K=300,
        steps=1000,
        taut=None,
        initial_temperature_K=None,
    ):
        """Run NVT."""
        print("NVT BERENDSEN")
        if initial_temperature_K is not None:
            self.set_momentum_maxwell_boltzmann(
                temperature_K=initial_temperature_K
            )
        if taut is None:
            taut = 100 * self.timestep
        self.dyn = NVTBerendsen(
            self.atoms,
            self.timestep,
            temperature_K=temperature_K,
            taut=taut,
        )
        self.dyn.attach(self.example_print, interval=interval)
        trajectory = Trajectory(filename + ".traj", "w", self.atoms)
        self.dyn.attach(trajectory.write, interval=interval)
        self.dyn.run(steps)
        return ase_to_atoms(self.atoms)

    def run_npt_berendsen(
        self,
        filename="ase_npt_berendsen",
        interval=1,
        temperature_K=300,
        steps=1000,
        taut=49.11347394232032,
        taup=98.22694788464064,
        pressure=None,
        compressibility=None,
        initial_temperature_K=None,
    ):
        """Run NPT."""
        print("NPT BERENDSEN")
        if initial_temperature_K is not None:
            self.set_momentum_maxwell_boltzmann(
                temperature_K=initial_temperature_K
            )
        self.dyn = NPTBerendsen(
            self.atoms,
            self.timestep,
            temperature_K=temperature_K,
            taut=taut,
            taup=taup,
            pressure=pressure,
            compressibility=compressibility,
        )
        self.dyn.attach(self.example_print, interval=interval)
        trajectory = Trajectory(filename + ".traj", "w", self.atoms)
        self.dyn.attach(trajectory.write, interval=interval)
        self.dyn.run(steps)
        return ase_to_atoms(self.atoms)


def ev_curve(
    atoms=None,
    dx=np.arange(-0.05, 0.05, 0.01),
    model_path=".",
    model_filename="best_model.pt",
    fig_name="eos.png",
    on_relaxed_struct=False,
    stress_wt=1,
):
    """Get EV curve."""
    if on_relaxed_struct:
        ff = ForceField(
            jarvis_atoms=atoms,
            model_path=model_path,
            model_filename=model_filename,
            stress_wt=stress_wt,
        )
        relaxed, en, fs = ff.optimize_atoms()
    else:
        relaxed = atoms
    y = []
    vol = []
    for i in dx:
        s1 = relaxed.strain_atoms(i)
        ff = ForceField(
            jarvis_atoms=s1,
            model_path=model_path,
            model_filename=model_filename,
            stress_wt=stress_wt,
        )
        energy, fs = ff.unrelaxed_atoms()
        y.append(energy)
        vol.append(s1.volume)
    x = np.array(dx)
    y = np.array(y)
    eos = EquationOfState(vol, y, eos="murnaghan")
    v0, e0, B = eos.fit()
    kv = B / units.kJ * 1.0e24  # , 'GPa')
    print("Energies:", y)
    print("Volumes:", vol)
    eos.plot(fig_name)
    return x, y, eos, kv


def phonons(
    atoms=None,
    enforce_c_size=8,
    line_density=5,
    model_path=".",
    model_filename="best_model.pt",
    on_relaxed_struct=False,
    dim=[2, 2, 2],
    freq_conversion_factor=33.3566830,  # ThztoCm-1
    phonopy_bands_figname="phonopy_bands.png",
    write_fc=False,
    min_freq_tol=-0.05,
    distance=0.2,
):
    """Make Phonon calculation setup."""
    from phonopy import Phonopy
    from phonopy.file_IO import write_FORCE_CONSTANTS

    device = "cuda" if torch.cuda.is_available() else "cpu"
    calc = AlignnAtomwiseCalculator(
        path=model_path, model_filename=model_filename, device=device
    )

    kpoints = Kpoints().kpath(atoms, line_density=line_density)
    bulk = atoms.phonopy_converter()
    phonon = Phonopy(bulk, [[dim[0], 0, 0], [0, dim[1], 0], [0, 0, dim[2]]])
    phonon.generate_displacements(distance=distance)
    supercells = phonon.get_supercells_with_displacements()
    set_of_forces = []
    disp = 0
    for scell in supercells:
        ase_atoms = AseAtoms(
            symbols=scell.get_chemical_symbols(),
            scaled_positions=scell.get_scaled_positions(),
            cell=scell.get_cell(),
            pbc=True,
        )
        ase_atoms.calc = calc
        disp = disp + 1
        forces = np.array(ase_atoms.get_forces())
        drift_force = forces.sum(axis=0)
        for force in forces:
            force -= drift_force / forces.shape[0]
        set_of_forces.append(forces)
    phonon.produce_force_constants(forces=set_of_forces)
    if write_fc:
        write_FORCE_CONSTANTS(
            phonon.get_force_constants(), filename="FORCE_CONSTANTS"
        )
    lbls = kpoints.labels
    lbls_ticks = []
    freqs = []
    tmp_kp = []
    lbls_x = []
    count = 0
    for ii, k in enumerate(kpoints.kpts):
        k_str = ",".join(map(str, k))
        if ii == 0:
            tmp = []
            for i, freq in enumerate(phonon.get_frequencies(k)):
                tmp.append(freq)
            freqs.append(tmp)
            tmp_kp.append(k_str)
            lbl = "$" + str(lbls[ii]) + "$"
            lbls_ticks.append(lbl)
            lbls_x.append(count)
            count += 1
        elif k_str != tmp_kp[-1]:
            tmp_kp.append(k_str)
            tmp = []
            for i, freq in enumerate(phonon.get_frequencies(k)):
                tmp.append(freq)
            freqs.append(tmp)
            lbl = lbls[ii]
            if lbl != "":
                lbl = "$" + str(lbl) + "$"
                lbls_ticks.append(lbl)
                lbls_x.append(count)
            count += 1
    freqs = np.array(freqs)
    freqs = freqs * freq_conversion_factor
    the_grid = plt.GridSpec(1, 2, width_ratios=[3, 1], wspace=0.0)
    plt.rcParams.update({"font.size": 18})
    plt.figure(figsize=(10, 5))
    plt.subplot(the_grid[0])
    for i in range(freqs.shape[1]):
        plt.plot(freqs[:, i], lw=2, c="b")
    for i in lbls_x:
        plt.axvline(x=i, c="black")
    plt.xticks(lbls_x, lbls_ticks)
    plt.ylabel("Frequency (cm$^{-1}$)")
    plt.xlim([0, max(lbls_x)])
    plt.tight_layout()
    plt.savefig(phonopy_bands_figname)
    plt.close()
    return phonon

