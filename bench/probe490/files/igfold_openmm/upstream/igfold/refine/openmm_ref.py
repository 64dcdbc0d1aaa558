import io

import pdbfixer
from openmm import app, LangevinIntegrator, CustomExternalForce, Platform
from openmm import unit

ENERGY = unit.kilocalories_per_mole
LENGTH = unit.angstroms
spring_unit = ENERGY / (LENGTH ** 2)

CLASH_CUTOFF = 0.63


def refine(pdb_file, stiffness=10., constrain=True, use_gpu=False):
    """Short restrained minimisation of a predicted IgFold model with OpenMM (amber14)."""
    tolerance = 2.39 * ENERGY
    restraint_set = "non_hydrogen"

    fixer = pdbfixer.PDBFixer(pdb_file)
    fixer.findMissingResidues()
    fixer.findMissingAtoms()
    fixer.addMissingAtoms()
    fixer.addMissingHydrogens()

    force_field = app.ForceField("amber14/protein.ff14SB.xml")
    modeller = app.Modeller(fixer.topology, fixer.positions)
    modeller.addHydrogens(force_field)

    system = force_field.createSystem(modeller.topology, constraints=app.HBonds)

    if constrain:
        stiffness = stiffness * spring_unit
        force = CustomExternalForce("0.5 * k * ((x-x0)^2 + (y-y0)^2 + (z-z0)^2)")
        force.addGlobalParameter("k", stiffness)
        for p in ["x0", "y0", "z0"]:
            force.addPerParticleParameter(p)

        for residue in modeller.topology.residues():
            for atom in residue.atoms():
                if restraint_set == "non_hydrogen" and atom.element.name == "hydrogen":
                    continue
                force.addParticle(atom.index, modeller.positions[atom.index])
        system.addForce(force)

    integrator = LangevinIntegrator(0, 0.01, 0.0)

    # OpenMM's CUDA platform is used when the caller says a GPU is present
    platform = Platform.getPlatformByName('CUDA' if use_gpu else 'CPU')

    simulation = app.Simulation(modeller.topology, system, integrator, platform)
    simulation.context.setPositions(modeller.positions)

    for _ in range(3):
        simulation.minimizeEnergy(tolerance=tolerance)
        state = simulation.context.getState(getPositions=True, getEnergy=True)
        if not _check_clashes(modeller.topology, state.getPositions()):
            break
        stiffness = stiffness * 0.5
        if constrain:
            simulation.context.setParameter("k", stiffness)

    with open(pdb_file, "w") as f:
        app.PDBFile.writeFile(
            simulation.topology,
            state.getPositions(),
            f,
            keepIds=True,
        )


def _check_clashes(topology, positions):
    """Return True when any two heavy atoms from non-bonded residues sit closer than CLASH_CUTOFF Å."""
    coords = []
    res_ids = []
    for atom in topology.atoms():
        if atom.element.name == "hydrogen":
            continue
        pos = positions[atom.index].value_in_unit(LENGTH)
        coords.append(pos)
        res_ids.append(atom.residue.index)

    n = len(coords)
    for i in range(n):
        xi, yi, zi = coords[i]
        for j in range(i + 1, n):
            if abs(res_ids[i] - res_ids[j]) < 2:
                continue
            xj, yj, zj = coords[j]
            d2 = (xi - xj) ** 2 + (yi - yj) ** 2 + (zi - zj) ** 2
            if d2 < CLASH_CUTOFF ** 2:
                return True
    return False
