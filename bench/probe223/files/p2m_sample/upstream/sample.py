import os
import shutil
import argparse
import random
import logging
from copy import deepcopy

import numpy as np
import torch
from torch_geometric.data import Batch
from torch_geometric.transforms import Compose
from torch.utils.data import Subset
from tqdm.auto import tqdm
from rdkit import Chem

from models.maskfill import MaskFillModelVN
from utils.transforms import *
from utils.datasets import get_dataset
from utils.misc import *
from utils.train import *
from utils.reconstruct import *
from utils.chem import *
from utils.sample import get_init, get_next, logp_to_rank_prob
from utils.sample import STATUS_FINISHED, STATUS_RUNNING


def pdb_to_pocket_data(pdb_path, center, bbox_size):
    from utils.protein_ligand import PDBProtein, parse_sdf_file
    from utils.data import ProteinLigandData, torchify_dict
    pocket_dict = PDBProtein(pdb_path).query_residues_bbox(center, bbox_size) if center is not None \
        else PDBProtein(pdb_path).to_dict_atom()
    data = ProteinLigandData.from_protein_ligand_dicts(
        protein_dict=torchify_dict(pocket_dict),
        ligand_dict={
            'element': torch.empty([0, ], dtype=torch.long),
            'pos': torch.empty([0, 3], dtype=torch.float),
            'atom_feature': torch.empty([0, 8], dtype=torch.float),
            'bond_index': torch.empty([2, 0], dtype=torch.long),
            'bond_type': torch.empty([0, ], dtype=torch.long),
        }
    )
    return data


def get_data_from_dataset(config, data_id, transform):
    dataset, subsets = get_dataset(config=config.dataset, transform=None)
    testset = subsets['test']
    data = testset[data_id]
    return data


def print_pool_status(pool, logger):
    logger.info('[Pool] Queue %d | Finished %d | Failed %d' % (
        len(pool.queue), len(pool.finished), len(pool.failed)
    ))


def get_logger_sample(log_dir):
    logger = logging.getLogger('sample')
    logger.setLevel(logging.DEBUG)
    if log_dir is not None:
        fh = logging.FileHandler(os.path.join(log_dir, 'log.txt'))
        fh.setLevel(logging.DEBUG)
        logger.addHandler(fh)
    return logger


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--config', type=str, default='./configs/sample.yml')
    parser.add_argument('-i', '--data_id', type=int, default=0)
    parser.add_argument('--device', type=str, default='cuda')
    parser.add_argument('--outdir', type=str, default='./outputs')
    args = parser.parse_args()

    # Load configs
    config = load_config(args.config)
    config_name = os.path.basename(args.config)[:os.path.basename(args.config).rfind('.')]
    seed_all(config.sample.seed)

    # Logging
    log_dir = get_new_log_dir(args.outdir, prefix='%s-%d' % (config_name, args.data_id))
    logger = get_logger('sample', log_dir)
    logger.info(args)
    logger.info(config)
    shutil.copyfile(args.config, os.path.join(log_dir, os.path.basename(args.config)))

    # Load checkpoint
    ckpt = torch.load(config.model.checkpoint, map_location=args.device)

    # Transform
    logger.info('Loading data...')
    protein_featurizer = FeaturizeProteinAtom()
    ligand_featurizer = FeaturizeLigandAtom()
    masking = get_mask(ckpt['config'].train.transform.mask)
    composer = AtomComposer(protein_featurizer.feature_dim, ligand_featurizer.feature_dim, ckpt['config'].model.encoder.knn)
    transform = Compose([
        RefineData(),
        LigandCountNeighbors(),
        protein_featurizer,
        ligand_featurizer,
    ])
    data = get_data_from_dataset(config, args.data_id, transform)
    data = transform(data)
    data = composer(data)

    # Model
    logger.info('Loading diffusion model...')
    if ckpt['config'].model.vn == 'vn':
        model = MaskFillModelVN(
            ckpt['config'].model,
            num_classes=7,
            num_bond_types=3,
            protein_atom_feature_dim=protein_featurizer.feature_dim,
            ligand_atom_feature_dim=ligand_featurizer.feature_dim,
        ).to(args.device)
    model.load_state_dict(ckpt['model'])
    model.eval()

    pool = EasyDict({
        'queue': [],
        'failed': [],
        'finished': [],
        'duplicate': [],
        'smiles': set(),
    })
    # # Sample the first atoms
    print('Initialization')
    pbar = tqdm(total=config.sample.beam_size, desc='InitSample')
    atom_composer = AtomComposer(protein_featurizer.feature_dim, ligand_featurizer.feature_dim, model.config.encoder.knn)
    data = transform_data(deepcopy(data), atom_composer)
    init_data_list = get_init(data.to(args.device),   # sample the initial atoms
            model = model,
            transform=atom_composer,
            threshold=config.sample.threshold
    )
    pool.queue = init_data_list
    if len(pool.queue) > config.sample.beam_size:
        pool.queue = init_data_list[:config.sample.beam_size]
        pbar.update(config.sample.beam_size)
    else:
        pbar.update(len(pool.queue))
    pbar.close()

    # # Sampling loop
    logger.info('Start sampling')
    global_step = 0

    try:
        while len(pool.finished) < config.sample.num_samples:
            global_step += 1
            if global_step > config.sample.max_steps:
                break
            queue_size = len(pool.queue)
            # # sample candidate new mols from each parent mol
            queue_tmp = []
            queue_weight = []
            for data in tqdm(pool.queue):
                nexts = []
                data_next_list = get_next(
                    data.to(args.device),
                    model = model,
                    transform = atom_composer,
                    threshold = config.sample.threshold
                )

                for data_next in data_next_list:
                    if data_next.status == STATUS_FINISHED:
                        try:
                            rdmol = reconstruct_from_generated_with_edges(data_next)
                            data_next.rdmol = rdmol
                            mol = Chem.MolFromSmiles(Chem.MolToSmiles(rdmol))
                            smiles = Chem.MolToSmiles(mol)
                            data_next.smiles = smiles
                            if smiles in pool.smiles:
                                logger.warning('Duplicate molecule: %s' % smiles)
                                pool.duplicate.append(data_next)
                            elif '.' in smiles:
                                logger.warning('Failed molecule: %s' % smiles)
                                pool.failed.append(data_next)
                            else:   # Pass checks
                                logger.info('Success: %s' % smiles)
                                pool.finished.append(data_next)
                                pool.smiles.add(smiles)
                        except MolReconsError:
                            logger.warning('Reconstruction error encountered.')
                            pool.failed.append(data_next)
                    elif data_next.status == STATUS_RUNNING:
                        nexts.append(data_next)

                queue_tmp += nexts
            prob = logp_to_rank_prob(np.array([p.average_logp[2:] for p in queue_tmp], dtype=object))
            n_tmp = len(queue_tmp)
            if n_tmp == 0:
                print('This round generated nothing.')
                break
            next_idx = np.random.choice(np.arange(n_tmp), p=prob, size=min(config.sample.beam_size, n_tmp), replace=False)
            pool.queue = [queue_tmp[idx] for idx in next_idx]

            print_pool_status(pool, logger)
            # the beam keeps growing graphs on the GPU; give memory back between rounds
            torch.cuda.empty_cache()
    except KeyboardInterrupt:
        logger.info('Terminated. Generated molecules will be saved.')

    # Save sdf mols
    sdf_dir = os.path.join(log_dir, 'SDF')
    os.makedirs(sdf_dir)
    with open(os.path.join(log_dir, 'SMILES.txt'), 'a') as smiles_f:
        for i, data_finished in enumerate(pool['finished']):
            smiles_f.write(data_finished.smiles + '\n')
            rdmol = data_finished.rdmol
            Chem.MolToMolFile(rdmol, os.path.join(sdf_dir, '%d.sdf' % i))

    torch.save(pool, os.path.join(log_dir, 'samples_all.pt'))
