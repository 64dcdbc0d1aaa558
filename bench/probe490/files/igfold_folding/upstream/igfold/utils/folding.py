import os
from time import time

import numpy as np
import torch
from einops import rearrange

from igfold.model.interface import IgFoldInput
from igfold.utils.fasta import get_fasta_chain_dict
from igfold.utils.general import exists
from igfold.utils.pdb import get_atom_coords, save_PDB, write_pdb_bfactor, cdr_indices

try:
    from igfold.refine.pyrosetta_ref import refine as refine_pyrosetta
    PYROSETTA_AVAILABLE = True
except ImportError:
    PYROSETTA_AVAILABLE = False

try:
    from igfold.refine.openmm_ref import refine as refine_openmm
    OPENMM_AVAILABLE = True
except ImportError:
    OPENMM_AVAILABLE = False


def get_sequence_dict(sequences, pdb_file, fasta_file=None):
    if exists(sequences) and exists(fasta_file):
        print("Both sequences and fasta file provided. Using fasta file.")
        seq_dict = get_fasta_chain_dict(fasta_file)
    elif not exists(sequences) and exists(fasta_file):
        seq_dict = get_fasta_chain_dict(fasta_file)
    elif exists(sequences):
        seq_dict = sequences
    else:
        exit("Must provide sequences or fasta file.")

    return seq_dict


def process_template(pdb_file, fasta_file, ignore_cdrs=None, ignore_chain=None):
    temp_coords, temp_mask = None, None
    if exists(pdb_file):
        temp_coords = get_atom_coords(pdb_file, fasta_file=fasta_file)
        temp_coords = torch.stack(
            [
                temp_coords['N'], temp_coords['CA'], temp_coords['C'],
                temp_coords['CB']
            ],
            dim=1,
        ).view(-1, 3).unsqueeze(0)

        temp_mask = torch.ones(temp_coords.shape[:2]).bool()
        temp_mask[temp_coords.isnan().any(-1)] = False
        temp_mask[temp_coords.sum(-1) == 0] = False

        if exists(ignore_cdrs):
            cdr_names = ["h1", "h2", "h3", "l1", "l2", "l3"]
            if ignore_cdrs == False:
                cdr_names = []
            elif type(ignore_cdrs) == list and len(ignore_cdrs) > 0:
                cdr_names = ignore_cdrs
            elif type(ignore_cdrs) == str:
                cdr_names = [ignore_cdrs]

            for cdr in cdr_names:
                cdr_range = cdr_indices(pdb_file, cdr)
                temp_mask[:, (cdr_range[0] - 1) * 4:(cdr_range[1] + 2) * 4] = False
        if exists(ignore_chain) and ignore_chain in ["H", "L"]:
            seq_dict = get_fasta_chain_dict(fasta_file)
            hlen = len(seq_dict["H"])
            if ignore_chain == "H":
                temp_mask[:, :hlen * 4] = False
            elif ignore_chain == "L":
                temp_mask[:, hlen * 4:] = False

    return temp_coords, temp_mask


def get_embeddings(antiberty, sequences):
    embeddings, attentions = antiberty.embed(sequences, return_attention=True)
    embeddings = [e[1:-1].unsqueeze(0) for e in embeddings]
    attentions = [a[:, :, 1:-1, 1:-1].unsqueeze(0) for a in attentions]
    return embeddings, attentions


def fold(
    antiberty,
    models,
    pdb_file,
    fasta_file=None,
    sequences=None,
    template_pdb=None,
    ignore_cdrs=None,
    ignore_chain=None,
    skip_pdb=False,
    do_refine=True,
    use_openmm=False,
    do_renum=False,
    truncate_sequences=False,
):
    start_time = time()

    seq_dict = get_sequence_dict(sequences, pdb_file, fasta_file)

    if truncate_sequences:
        from igfold.utils.anarci_ import truncate_seq
        seq_dict = {k: truncate_seq(v) for k, v in seq_dict.items()}

    if not exists(fasta_file):
        fasta_file = pdb_file.replace(".pdb", ".fasta")
        with open(fasta_file, "w") as f:
            for chain, seq in seq_dict.items():
                f.write(">{}\n{}\n".format(chain, seq))

    temp_coords, temp_mask = process_template(
        template_pdb,
        fasta_file,
        ignore_cdrs=ignore_cdrs,
        ignore_chain=ignore_chain,
    )

    embeddings, attentions = get_embeddings(antiberty, list(seq_dict.values()))
    model_in = IgFoldInput(
        embeddings=embeddings,
        attentions=attentions,
        template_coords=temp_coords,
        template_mask=temp_mask,
        return_embeddings=True,
    )

    with torch.no_grad():
        model_outs = [model(model_in) for model in models]
        scores = torch.stack([o.prmsd.quantile(0.9) for o in model_outs])
        best_model_i = scores.argmin().item()
        model_out = model_outs[best_model_i]
        prmsd = rearrange(
            model_out.prmsd,
            "b (l a) -> b l a",
            a=4,
        )
        model_out.prmsd = prmsd

    if not skip_pdb:
        full_seq_dict = seq_dict
        coords = model_out.coords.squeeze(0).detach().cpu()
        res_rmsd = prmsd.square().mean(dim=-1).sqrt().squeeze(0).cpu()

        save_PDB(
            pdb_file,
            coords,
            "".join(full_seq_dict.values()),
            chains=list(full_seq_dict.keys()),
            atoms=['N', 'CA', 'C', 'CB', 'O'],
            error=res_rmsd,
            delim=[len(s) for s in full_seq_dict.values()],
            write_pdb=True,
        )

        if do_refine:
            if use_openmm:
                if not OPENMM_AVAILABLE:
                    raise ImportError("OpenMM refinement requested but openmm/pdbfixer are not installed.")
                # OpenMM picks its own platform: CUDA when torch sees a GPU, otherwise the CPU reference
                refine_openmm(pdb_file, use_gpu=torch.cuda.is_available())
            else:
                if not PYROSETTA_AVAILABLE:
                    print("PyRosetta not available. Skipping refinement. Use use_openmm=True instead.")
                else:
                    refine_pyrosetta(pdb_file)

        if do_renum:
            from igfold.utils.abnumber_ import renumber_pdb
            renumber_pdb(pdb_file, pdb_file)

        write_pdb_bfactor(pdb_file, pdb_file, bfactor=res_rmsd)

    print(f"Completed folding in {time() - start_time:.2f} seconds.")

    return model_out


def embed(antiberty, models, fasta_file=None, sequences=None):
    seq_dict = get_sequence_dict(sequences, None, fasta_file)

    embeddings, attentions = get_embeddings(antiberty, list(seq_dict.values()))
    model_in = IgFoldInput(
        embeddings=embeddings,
        attentions=attentions,
        return_embeddings=True,
    )

    with torch.no_grad():
        model_outs = [model(model_in) for model in models]

    bert_embs = torch.mean(torch.stack([o.bert_embs for o in model_outs]), dim=0)
    gt_embs = torch.mean(torch.stack([o.gt_embs for o in model_outs]), dim=0)
    strucutre_embs = torch.mean(torch.stack([o.structure_embs for o in model_outs]), dim=0)

    model_out = model_outs[0]
    model_out.bert_embs = bert_embs
    model_out.gt_embs = gt_embs
    model_out.structure_embs = strucutre_embs

    return model_out
