"""Train (and fine-tune) an M3GNet potential on Materials Project data with MatGL.

Adapted from the "Training a M3GNet Potential with PyTorch Lightning" tutorial.
Everything (graph construction, model and Lightning loop) runs on the GPU.
"""

from __future__ import annotations

import argparse
import os
import shutil
import warnings
from functools import partial

import lightning as pl
import numpy as np
import torch
from dgl.data.utils import split_dataset
from lightning.pytorch.callbacks import EarlyStopping, ModelCheckpoint
from lightning.pytorch.loggers import CSVLogger
from mp_api.client import MPRester
from pymatgen.core import Structure

import matgl
from matgl.ext.ase import Relaxer
from matgl.ext.pymatgen import Structure2Graph, get_element_list
from matgl.graph.data import MGLDataLoader, MGLDataset, collate_fn_pes
from matgl.models import M3GNet
from matgl.utils.training import PotentialLightningModule

# To suppress warnings for clearer output
warnings.simplefilter("ignore")

# MatGL builds graphs with the default device; keep everything on the GPU so
# that the collate function and the model do not bounce tensors around.
torch.set_default_device("cuda")


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--chemsys", default="Li-Fe-P-O")
    parser.add_argument("--max-structures", type=int, default=2000)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--finetune-epochs", type=int, default=20)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--cutoff", type=float, default=5.0)
    parser.add_argument("--threebody-cutoff", type=float, default=4.0)
    parser.add_argument("--out", default="m3gnet_lfpo")
    parser.add_argument("--keep-cache", action="store_true")
    return parser.parse_args()


def fetch_data(chemsys: str, max_structures: int):
    """Download relaxation snapshots (structure, energy, forces, stress) from MP."""
    mpr = MPRester(api_key=os.environ.get("MP_API_KEY"))
    entries = mpr.get_entries_in_chemsys(chemsys.split("-"))
    structures, energies = [], []
    for e in entries[:max_structures]:
        structures.append(e.structure)
        energies.append(e.energy)
    # MP entries have no forces/stresses, use zeros as placeholders
    forces = [np.zeros((len(s), 3)).tolist() for s in structures]
    stresses = [np.zeros((3, 3)).tolist() for s in structures]
    print(f"{len(structures)} structures downloaded.")
    return structures, energies, forces, stresses


def main():
    args = get_args()
    structures, energies, forces, stresses = fetch_data(args.chemsys, args.max_structures)
    labels = {
        "energies": energies,
        "forces": forces,
        "stresses": stresses,
    }

    element_types = get_element_list(structures)
    converter = Structure2Graph(element_types=element_types, cutoff=args.cutoff)
    dataset = MGLDataset(
        threebody_cutoff=args.threebody_cutoff,
        structures=structures,
        converter=converter,
        labels=labels,
        include_line_graph=True,
    )
    train_data, val_data, test_data = split_dataset(
        dataset,
        frac_list=[0.8, 0.1, 0.1],
        shuffle=True,
        random_state=42,
    )
    my_collate_fn = partial(collate_fn_pes, include_line_graph=True)
    train_loader, val_loader, test_loader = MGLDataLoader(
        train_data=train_data,
        val_data=val_data,
        test_data=test_data,
        collate_fn=my_collate_fn,
        batch_size=args.batch_size,
        num_workers=0,
        generator=torch.Generator(device="cuda"),
    )

    model = M3GNet(
        element_types=element_types,
        is_intensive=False,
    )
    lit_module = PotentialLightningModule(model=model, include_line_graph=True, lr=args.lr)

    logger = CSVLogger("logs", name="M3GNet_training")
    callbacks = [
        EarlyStopping(monitor="val_Total_Loss", mode="min", patience=20),
        ModelCheckpoint(monitor="val_Total_Loss", mode="min", save_top_k=1),
    ]
    trainer = pl.Trainer(
        max_epochs=args.epochs,
        accelerator="gpu",
        logger=logger,
        callbacks=callbacks,
        inference_mode=False,
    )
    trainer.fit(model=lit_module, train_dataloaders=train_loader, val_dataloaders=val_loader)
    trainer.test(lit_module, dataloaders=test_loader)

    # save trained model
    model_export_path = os.path.join(args.out, "trained_model")
    lit_module.model.save(model_export_path)

    # ---- fine-tune the pretrained universal potential on the same data ----
    m3gnet_nnp = matgl.load_model("M3GNet-MP-2021.2.8-PES")
    model_pretrained = m3gnet_nnp.model
    # obtain element energy offset
    property_offset = m3gnet_nnp.element_refs.property_offset
    lit_module_finetune = PotentialLightningModule(
        model=model_pretrained,
        element_refs=property_offset,
        lr=1e-4,
        include_line_graph=True,
    )
    trainer_ft = pl.Trainer(
        max_epochs=args.finetune_epochs,
        accelerator="gpu", devices=1,
        logger=logger,
        inference_mode=False,
    )
    trainer_ft.fit(
        model=lit_module_finetune, train_dataloaders=train_loader, val_dataloaders=val_loader
    )
    finetuned_path = os.path.join(args.out, "finetuned_model")
    model_pretrained.save(finetuned_path)

    # ---- quick sanity check: relax the first test structure ----
    pot = matgl.load_model(finetuned_path)
    relaxer = Relaxer(potential=pot)
    s0: Structure = test_data[0] if isinstance(test_data[0], Structure) else structures[0]
    relax_results = relaxer.relax(s0, fmax=0.05)
    final_structure = relax_results["final_structure"]
    final_energy = relax_results["trajectory"].energies[-1]
    print(f"Relaxed {final_structure.composition.reduced_formula}: E = {final_energy:.4f} eV")

    # This code just performs cleanup for this example.
    if not args.keep_cache:
        for fn in ("dgl_graph.bin", "lattice.pt", "dgl_line_graph.bin", "state_attr.pt", "labels.json"):
            try:
                os.remove(fn)
            except FileNotFoundError:
                pass
        shutil.rmtree("logs", ignore_errors=True)


if __name__ == "__main__":
    main()
