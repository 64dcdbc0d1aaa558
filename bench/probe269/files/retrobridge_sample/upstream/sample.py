import argparse
import os
import time

import numpy as np
import pandas as pd
import torch
from rdkit import Chem
from tqdm import tqdm

from src.data.retrobridge_dataset import RetroBridgeDataModule, RetroBridgeDatasetInfos
from src.features.extra_features import DummyExtraFeatures, ExtraFeatures
from src.frameworks.markov_bridge import MarkovBridge
from src.frameworks.one_shot_model import OneShotModel
from src.analysis.rdkit_functions import build_molecule
from src.utils import disable_rdkit_logging

device = 'cuda' if torch.cuda.is_available() else 'cpu'


def assign_trivial_atom_mapping_numbers(molecule):
    order = {}
    for atom in molecule.GetAtoms():
        idx = atom.GetIdx()
        atom.SetAtomMapNum(idx)
        order[idx] = idx
    return molecule, order


def canonicalize(smi):
    mol = Chem.MolFromSmiles(smi)
    if mol is None:
        return None
    for atom in mol.GetAtoms():
        atom.SetAtomMapNum(0)
    return Chem.MolToSmiles(mol)


def load_model(checkpoint, model_type):
    if model_type == 'RetroBridge':
        model = MarkovBridge.load_from_checkpoint(checkpoint, map_location=device)
    elif model_type == 'OneShot':
        model = OneShotModel.load_from_checkpoint(checkpoint, map_location=device)
    else:
        raise NotImplementedError(model_type)
    model.eval().to(device)
    # the visualisation / metric helpers hold their own small tensors
    model.dataset_info.nodes_dist.prob = model.dataset_info.nodes_dist.prob.to(device)
    return model


@torch.no_grad()
def sample_for_batch(model, data, n_samples, use_amp=False):
    """Draw ``n_samples`` reactant graphs for every product in ``data``."""
    group_size = n_samples
    ground_truth = []
    input_products = []
    pred_molecules = []
    pred_nlls = []

    for sample_idx in range(group_size):
        with torch.autocast(device_type='cuda', dtype=torch.float16, enabled=use_amp):
            (molecule_list, true_molecule_list, products_list, _, _, nll) = model.sample_chain(
                data,
                batch_size=len(data),
                keep_chain=0,
                number_chain_steps_to_save=1,
                save_true_reactants=True,
                use_one_hot=False,
            )
        for mol, true_mol, prod, mol_nll in zip(molecule_list, true_molecule_list, products_list, nll):
            pred_molecules.append(build_molecule(mol[0], mol[1], model.dataset_info.atom_decoder))
            ground_truth.append(build_molecule(true_mol[0], true_mol[1], model.dataset_info.atom_decoder))
            input_products.append(build_molecule(prod[0], prod[1], model.dataset_info.atom_decoder))
            pred_nlls.append(mol_nll.item())

    return ground_truth, input_products, pred_molecules, pred_nlls


def main(args):
    torch_generator = torch.Generator(device=device).manual_seed(args.sampling_seed)
    torch.manual_seed(args.sampling_seed)
    np.random.seed(args.sampling_seed)

    model = load_model(args.checkpoint, args.model)
    model.T = args.n_steps or model.T

    data_module = RetroBridgeDataModule(
        data_root=args.data,
        batch_size=args.batch_size,
        num_workers=0,
        shuffle=False,
        extra_nodes=True,
        evaluation=True,
        swap=False,
    )
    data_module.prepare_data()
    data_module.setup()
    loader = data_module.test_dataloader() if args.mode == 'test' else data_module.val_dataloader()

    rows = []
    start = time.time()
    for i, data in enumerate(tqdm(loader)):
        if args.max_batches is not None and i >= args.max_batches:
            break
        data = data.to(device)
        gt, prods, preds, nlls = sample_for_batch(model, data, args.n_samples, use_amp=args.amp)
        for g, p, r, nll in zip(gt, prods, preds, nlls):
            rows.append({
                'product': Chem.MolToSmiles(p) if p is not None else None,
                'true': Chem.MolToSmiles(g) if g is not None else None,
                'pred': Chem.MolToSmiles(r) if r is not None else None,
                'nll': nll,
            })

    elapsed = time.time() - start
    if torch.cuda.is_available():
        torch.cuda.synchronize()
        print(f'peak GPU memory: {torch.cuda.max_memory_allocated() / 2 ** 30:.2f} GiB')
    print(f'sampled {len(rows)} molecules in {elapsed:.1f}s')

    df = pd.DataFrame(rows)
    df['pred_canonical'] = df['pred'].apply(lambda s: canonicalize(s) if isinstance(s, str) else None)
    df['true_canonical'] = df['true'].apply(lambda s: canonicalize(s) if isinstance(s, str) else None)
    os.makedirs(os.path.dirname(args.samples) or '.', exist_ok=True)
    df.to_csv(args.samples, index=False)
    print(f'saved samples to {args.samples}')


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--checkpoint', action='store', type=str, required=True)
    parser.add_argument('--data', action='store', type=str, required=True)
    parser.add_argument('--samples', action='store', type=str, required=True)
    parser.add_argument('--model', action='store', type=str, default='RetroBridge', choices=['RetroBridge', 'OneShot'])
    parser.add_argument('--mode', action='store', type=str, default='test', choices=['test', 'val'])
    parser.add_argument('--n_samples', action='store', type=int, default=100)
    parser.add_argument('--n_steps', action='store', type=int, default=None)
    parser.add_argument('--batch_size', action='store', type=int, default=64)
    parser.add_argument('--max_batches', action='store', type=int, default=None)
    parser.add_argument('--sampling_seed', action='store', type=int, default=1)
    parser.add_argument('--amp', action='store_true', default=False,
                        help='fp16 autocast during sampling (GPU only)')
    args = parser.parse_args()
    disable_rdkit_logging()
    main(args)
