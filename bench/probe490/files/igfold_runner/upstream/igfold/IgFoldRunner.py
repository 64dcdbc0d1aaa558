import os
from glob import glob

import torch

import igfold
from antiberty import AntiBERTyRunner
from igfold.model.IgFold import IgFold
from igfold.utils.folding import fold, embed
from igfold.utils.general import exists

project_path = os.path.dirname(os.path.realpath(igfold.__file__))
ckpt_path = os.path.join(project_path, "trained_models/IgFold/*.ckpt")


def display_license():
    license_url = "https://github.com/Graylab/IgFold/blob/main/LICENSE.md"
    license_message = f"""
    The code, data, and weights for this work are made available for non-commercial use
    (including at commercial entities) under the terms of the JHU Academic Software License
    Agreement. For commercial inquiries, please contact Johns Hopkins Tech Ventures at
    awichma2@jhu.edu.
    License: {license_url}
    """
    print(license_message)


class IgFoldRunner():
    """
    Wrapper for IgFold model predictions.
    """

    def __init__(self, num_models=4, model_ckpts=None, try_gpu=True):
        """
        Initialize IgFoldRunner.

        :param num_models: Number of pre-trained IgFold models to use for prediction.
        :param model_ckpts: List of model checkpoints to use (instead of pre-trained).
        :param try_gpu: Put models on the GPU when one is available.
        """

        if exists(model_ckpts):
            num_models = len(model_ckpts)
        else:
            if num_models < 1 or num_models > 4:
                raise ValueError("num_models must be between 1 and 4.")

            if not exists(model_ckpts):
                model_ckpts = list(glob(ckpt_path))
            if len(model_ckpts) == 0:
                raise FileNotFoundError(
                    f"No pre-trained IgFold checkpoints found under {ckpt_path}; "
                    "run `python -c 'import igfold; igfold.download()'` first."
                )

            model_ckpts = sorted(model_ckpts)[:num_models]

        print(f"Loading {num_models} IgFold models...")

        device = torch.device("cuda:0" if torch.cuda.is_available() and try_gpu else "cpu")
        print(f"Using device: {device}")
        self.device = device

        self.models = []
        for ckpt_file in model_ckpts:
            print(f"Loading {ckpt_file}...")
            self.models.append(IgFold.load_from_checkpoint(ckpt_file).eval().to(device))

        print(f"Successfully loaded {num_models} IgFold models.")

        self.antiberty = AntiBERTyRunner()
        print(f"Loaded AntiBERTy model.")

    def fold(
        self,
        pdb_file: str,
        fasta_file: str = None,
        sequences: dict = None,
        template_pdb: str = None,
        ignore_cdrs: bool = None,
        ignore_chain: str = None,
        skip_pdb: bool = False,
        do_refine: bool = True,
        use_openmm: bool = False,
        do_renum: bool = False,
        truncate_sequences: bool = False,
    ):
        """
        Predict antibody structure with IgFold.

        :param pdb_file: PDB file for predicted structure.
        :param fasta_file: Fasta file containing sequences.
        :param sequences: Dictionary of sequences (chain id -> sequence).
        :param template_pdb: PDB file containing template structure.
        :param ignore_cdrs: Ignore CDRs in template structure.
        :param ignore_chain: Ignore chain in template structure.
        :param skip_pdb: Skip PDB processing.
        :param do_refine: Refine predicted structure.
        :param use_openmm: Use OpenMM for structure refinement (otherwise PyRosetta).
        :param do_renum: Renumber predicted structure with AbNum (requires internet).
        :param truncate_sequences: Truncate Fv sequences with ANARCI before prediction.

        :return: IgFold model output.
        """

        model_out = fold(
            self.antiberty,
            self.models,
            pdb_file=pdb_file,
            fasta_file=fasta_file,
            sequences=sequences,
            template_pdb=template_pdb,
            ignore_cdrs=ignore_cdrs,
            ignore_chain=ignore_chain,
            skip_pdb=skip_pdb,
            do_refine=do_refine,
            use_openmm=use_openmm,
            do_renum=do_renum,
            truncate_sequences=truncate_sequences,
        )

        return model_out

    def embed(
        self,
        fasta_file: str = None,
        sequences: dict = None,
    ):
        """
        Embed antibody sequences with IgFold.

        :param fasta_file: Fasta file containing sequences.
        :param sequences: Dictionary of sequences.

        :return: IgFold model output.
        """

        model_out = embed(
            self.antiberty,
            self.models,
            fasta_file=fasta_file,
            sequences=sequences,
        )

        return model_out
