import time
import argparse
import torch

from tqdm import tqdm
from torch.optim import Adam
from pathlib import Path
from types import SimpleNamespace
from torch_geometric.data import Data, Batch, DataLoader
from torch.utils.data import Dataset
from eval_utils import load_model, lattices_to_params_shape, get_crystals_list

from pymatgen.core.structure import Structure
from pymatgen.core.lattice import Lattice
from pymatgen.io.cif import CifWriter
from pyxtal.symmetry import Group
import chemparse
import numpy as np
from p_tqdm import p_map

import pdb

import os

train_dist = {
    'perov': [0, 0, 0, 0, 0, 1.0],
    'carbon': [0.0,
               0.0,
               0.0,
               0.0,
               0.0,
               0.0,
               0.3250697750779839,
               0.0,
               0.27795107535708424,
               0.0,
               0.15383362487995176,
               0.0,
               0.11246156110735512,
               0.0,
               0.04632124062620074,
               0.0,
               0.036573185524743474,
               0.0,
               0.024534879558060653,
               0.0,
               0.02203107978373594,
               0.0,
               0.001197084976973],

    'mp_20': [0.0,
              0.0021742334905660377,
              0.021079009433962265,
              0.019826061320754717,
              0.15271226415094338,
              0.047132959905660375,
              0.08464770047169812,
              0.021079009433962265,
              0.07808814858490566,
              0.03434551886792453,
              0.0972877358490566,
              0.013303360849056603,
              0.09181310613207547,
              0.02464622641509434,
              0.04177695754716981,
              0.014150943396226415,
              0.05946344339622642,
              0.0023584905660377358,
              0.03109080188679245,
              0.0034964622641509433,
              0.028817806603773586],
}

recommand_step_lr = {
    'csp': {
        "perov_5": 5e-7,
        "carbon_24": 5e-6,
        "mp_20": 1e-5,
        "mpts_52": 1e-5
    },
    'csp_multi': {
        "perov_5": 5e-7,
        "carbon_24": 5e-7,
        "mp_20": 1e-5,
        "mpts_52": 1e-5
    },
    'gen': {
        "perov_5": 1e-6,
        "carbon_24": 1e-5,
        "mp_20": 5e-6
    },
}


def diffusion(loader, model, step_lr):

    frac_coords = []
    num_atoms = []
    atom_types = []
    lattices = []
    for idx, batch in enumerate(loader):

        if torch.cuda.is_available(): batch.cuda()
        outputs, traj = model.sample(batch, step_lr=step_lr)
        frac_coords.append(outputs['frac_coords'].detach().cpu())
        num_atoms.append(outputs['num_atoms'].detach().cpu())
        atom_types.append(outputs['atom_types'].detach().cpu())
        lattices.append(outputs['lattices'].detach().cpu())

    frac_coords = torch.cat(frac_coords, dim=0)
    num_atoms = torch.cat(num_atoms, dim=0)
    atom_types = torch.cat(atom_types, dim=0)
    lattices = torch.cat(lattices, dim=0)
    lengths, angles = lattices_to_params_shape(lattices)

    return (
        frac_coords, atom_types, lattices, lengths, angles, num_atoms
    )


class SampleDataset(Dataset):

    def __init__(self, dataset, total_num):
        super().__init__()
        self.total_num = total_num
        self.distribution = train_dist[dataset]
        self.num_atoms = np.random.choice(len(self.distribution), total_num, p=self.distribution)
        self.is_carbon = dataset == 'carbon'

    def __len__(self) -> int:
        return self.total_num

    def __getitem__(self, index):

        num_atom = self.num_atoms[index]
        data = Data(
            num_atoms=torch.LongTensor([num_atom]),
            num_nodes=num_atom,
        )
        if self.is_carbon:
            data.atom_types = torch.LongTensor([6] * num_atom)
        return data


def get_pymatgen(crystal_array):
    frac_coords = crystal_array['frac_coords']
    atom_types = crystal_array['atom_types']
    lengths = crystal_array['lengths']
    angles = crystal_array['angles']
    try:
        structure = Structure(
            lattice=Lattice.from_parameters(
                *(lengths.tolist() + angles.tolist())),
            species=atom_types, coords=frac_coords, coords_are_cartesian=False)
        return structure
    except:
        return None


def main(args):
    # load_data if do reconstruction.
    model_path = Path(args.model_path)
    model, _, cfg = load_model(
        model_path, load_data=False)

    if torch.cuda.is_available():
        model.to('cuda')

    print('Evaluate the diffusion model.')

    test_set = SampleDataset(args.dataset, args.batch_size * args.num_batches_to_samples)
    test_loader = DataLoader(test_set, batch_size=args.batch_size)

    step_lr = args.step_lr if args.step_lr >= 0 else recommand_step_lr['gen'][args.dataset]

    start_time = time.time()
    (frac_coords, atom_types, lattices, lengths, angles, num_atoms) = diffusion(test_loader, model, step_lr)

    if args.label == '':
        gen_out_name = 'eval_gen.pt'
    else:
        gen_out_name = f'eval_gen_{args.label}.pt'

    torch.save({
        'eval_setting': args,
        'frac_coords': frac_coords,
        'num_atoms': num_atoms,
        'atom_types': atom_types,
        'lengths': lengths,
        'angles': angles,
        'time': time.time() - start_time,
    }, model_path / gen_out_name)

    if args.save_cifs:
        crystal_list = get_crystals_list(frac_coords, atom_types, lengths, angles, num_atoms)
        structures = p_map(get_pymatgen, crystal_list)
        cif_dir = model_path / f'cifs_{args.label or "gen"}'
        os.makedirs(cif_dir, exist_ok=True)
        for i, structure in enumerate(structures):
            if structure is None:
                continue
            CifWriter(structure).write_file(str(cif_dir / f'{i:06d}.cif'))


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--model_path', required=True)
    parser.add_argument('--dataset', required=True)
    parser.add_argument('--step_lr', default=-1, type=float)
    parser.add_argument('--num_batches_to_samples', default=20, type=int)
    parser.add_argument('--batch_size', default=500, type=int)
    parser.add_argument('--save_cifs', action='store_true',
                        help='also dump CIFs (CPU-bound; run on a GPU node only if it is idle)')
    parser.add_argument('--label', default='')
    args = parser.parse_args()

    main(args)
