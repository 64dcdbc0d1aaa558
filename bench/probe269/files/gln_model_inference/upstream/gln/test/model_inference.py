from __future__ import print_function
from __future__ import absolute_import
from __future__ import division

import os
import sys
import rdkit
from rdkit import Chem
import random
import csv
import torch
import numpy as np
import pickle as cp
from tqdm import tqdm

from gln.common.cmd_args import cmd_args
from gln.common.cmd_args import DEVICE
from gln.data_process.data_info import DataInfo, load_center_maps
from gln.common.reactor import Reactor
from gln.graph_logic.logic_net import GraphPath
from rdkit.Chem import rdChemReactions
from rdchiral.main import rdchiralRunText, rdchiralRun
from rdchiral.initialization import rdchiralReaction, rdchiralReactants


class RetroGLN(object):
    """Single-step retrosynthesis with a trained GLN model.

        model = RetroGLN(dropbox, model_dump)
        result = model.run('[CH3:1][C:2](=[O:3])...', beam_size=50, topk=50)
    """

    def __init__(self, dropbox, model_dump):
        """
        Args:
            dropbox: the dropbox folder
            model_dump: the ckpt folder, which contains model dump and model args
        """
        assert os.path.isdir(model_dump)

        arg_file = os.path.join(model_dump, 'args.pkl')
        with open(arg_file, 'rb') as f:
            self.args = cp.load(f)
            self.args.dropbox = dropbox

        DataInfo.init(dropbox, self.args)
        load_center_maps(self.args)

        model_file = os.path.join(model_dump, 'model.dump')
        self.gln = GraphPath(self.args)
        self.gln.load_state_dict(torch.load(model_file))
        self.gln.cuda()
        self.gln.eval()

        self.prod_center_maps = {}
        self.cached_smarts = None

    def _ordered_tpls(self, cano_prod, beam_size, rxn_type):
        if (rxn_type, cano_prod) not in self.prod_center_maps:
            mol = Chem.MolFromSmiles(cano_prod)
            if mol is None:
                return None
            if self.args.split_mode == 'single':
                prod_center_maps = DataInfo.prod_center_maps[rxn_type]
            else:
                prod_center_maps = DataInfo.prod_center_maps['UNK']
            center_map = {}
            for c in prod_center_maps:
                pat = DataInfo.prod_smarts_list[c]
                if mol.HasSubstructMatch(Chem.MolFromSmarts(pat)):
                    center_map[c] = prod_center_maps[c]
            self.prod_center_maps[(rxn_type, cano_prod)] = center_map
        center_map = self.prod_center_maps[(rxn_type, cano_prod)]
        if not len(center_map):
            return None

        # rank reaction centers, then templates, with the model
        prod_graph = DataInfo.get_prod_graph(cano_prod)
        list_centers = list(center_map.keys())
        center_scores = self.gln.prod_center_predicate([prod_graph], [list_centers])
        top_centers = torch.topk(center_scores.view(-1), min(beam_size, len(list_centers)))
        out = []
        for score, idx in zip(*top_centers):
            c = list_centers[idx.item()]
            for tpl_idx in center_map[c]:
                out.append((score.item(), tpl_idx))
        out.sort(key=lambda x: -x[0])
        return out[:beam_size]

    def run(self, raw_prod, beam_size, topk, rxn_type='UNK'):
        """
        Args:
            raw_prod: the single product smiles
            beam_size: the size for beam search
            topk: top-k prediction of reactants
            rxn_type: (optional) reaction type
        Return:
            a dictionary:
            {
                'template': list of templates
                'reactants': list of reactants
                'scores': list of scores
            }
        """
        if self.args.split_mode == 'single' and rxn_type == 'UNK':
            rxn_type = 'Class_1'

        new_prod = Chem.MolToSmiles(Chem.MolFromSmiles(raw_prod))
        tpls = self._ordered_tpls(new_prod, beam_size, rxn_type)
        if tpls is None:
            return None

        list_of_reactions = []
        list_of_tpls = []
        for _, tpl_idx in tpls:
            tpl = DataInfo.unique_templates[tpl_idx]
            pred_mols = Reactor.run_reaction(new_prod, tpl)
            if pred_mols is None or not len(pred_mols):
                continue
            for pred in pred_mols:
                list_of_reactions.append(pred)
                list_of_tpls.append(tpl)
        if not len(list_of_reactions):
            return None

        with torch.no_grad():
            scores = self.gln.rxn_scores(new_prod, list_of_reactions)
        scores = scores.view(-1).cpu().numpy()
        order = np.argsort(-scores)[:topk]

        return {
            'template': [list_of_tpls[i] for i in order],
            'reactants': [list_of_reactions[i] for i in order],
            'scores': [float(scores[i]) for i in order],
        }


if __name__ == '__main__':
    random.seed(cmd_args.seed)
    np.random.seed(cmd_args.seed)
    torch.manual_seed(cmd_args.seed)

    model = RetroGLN(cmd_args.dropbox, cmd_args.model_for_eval)
    with open(cmd_args.file_for_eval, 'r') as f:
        reader = csv.reader(f)
        header = next(reader)
        rows = [row for row in reader]

    n_hit = 0
    pbar = tqdm(rows)
    for i, row in enumerate(pbar):
        rxn_id, rxn_type, rxn_smiles = row[0], row[1], row[2]
        reactants, _, prod = rxn_smiles.split('>')
        pred = model.run(prod, cmd_args.beam_size, cmd_args.topk, rxn_type=rxn_type)
        if pred is None:
            continue
        gt = set(Chem.MolToSmiles(Chem.MolFromSmiles(r)) for r in reactants.split('.'))
        for cand in pred['reactants'][:cmd_args.topk]:
            cand_set = set(Chem.MolToSmiles(Chem.MolFromSmiles(r)) for r in cand.split('.'))
            if cand_set == gt:
                n_hit += 1
                break
        pbar.set_description('top-%d acc: %.4f' % (cmd_args.topk, n_hit / (i + 1)))
