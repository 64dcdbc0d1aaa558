# pylint: disable=wrong-import-position
import argparse
import os

os.environ["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = "1"

import torch
from e3nn.util import jit

from mace.calculators import LAMMPS_MACE
from mace.cli.convert_cueq_e3nn import run as run_cueq_to_e3nn


def parse_args():
    parser = argparse.ArgumentParser(
        description="Convert a trained MACE model into a TorchScript model for the LAMMPS `pair_style mace` (ML-MACE) interface."
    )
    parser.add_argument(
        "model_path",
        type=str,
        help="Path to the model to be converted to LAMMPS",
    )
    parser.add_argument(
        "--head",
        type=str,
        nargs="?",
        help="Head of the model to be converted to LAMMPS",
        default=None,
    )
    parser.add_argument(
        "--dtype",
        type=str,
        nargs="?",
        help="Data type of the model to be converted to LAMMPS",
        default="float64",
    )
    parser.add_argument(
        "--device",
        type=str,
        default="cuda",
        help="Device the exported model is traced/saved on; LAMMPS (KOKKOS) loads it on the same device type",
    )
    return parser.parse_args()


def select_head(model):
    if hasattr(model, "heads"):
        heads = model.heads
    else:
        heads = [None]

    if len(heads) == 1:
        return heads[0]

    print("Available heads in the model:")
    for i, head in enumerate(heads):
        print(f"{i + 1}: {head}")

    # Ask the user to select a head
    selected = input(
        f"Select a head by number (Defaulting to head: {len(heads)}, press Enter to accept): "
    )

    if selected.isdigit() and 1 <= int(selected) <= len(heads):
        return heads[int(selected) - 1]
    if selected == "":
        print("No head selected. Proceeding without specifying a head.")
        return None
    print(f"No valid selection made. Defaulting to the last head: {len(heads)}")
    return heads[-1]


def main():
    args = parse_args()
    model_path = args.model_path  # takes model name as command-line input
    model = torch.load(
        model_path,
        map_location=torch.device(args.device if torch.cuda.is_available() else "cpu"),
    )
    if model.__class__.__name__ != "ScaleShiftMACE" and model.__class__.__name__ != "MACE":
        raise ValueError(f"Model type {model.__class__.__name__} not supported by LAMMPS interface")
    # a cueq model has to be converted back to plain e3nn before scripting
    if getattr(model, "use_cueq", False):
        model = run_cueq_to_e3nn(model, device=args.device)
    if args.dtype == "float64":
        model = model.double().to("cpu")
    elif args.dtype == "float32":
        print("Converting model to float32, this may cause loss of precision.")
        model = model.float().to("cpu")

    if args.head is None:
        head = select_head(model)
    else:
        head = args.head
        print(
            f"Selected head: {head} from command line in the list available heads: {model.heads}"
        )

    lammps_model = (
        LAMMPS_MACE(model, head=head) if head is not None else LAMMPS_MACE(model)
    )
    lammps_model_compiled = jit.compile(lammps_model)
    lammps_model_compiled.save(model_path + "-lammps.pt")
    print(f"Saved LAMMPS model to {model_path}-lammps.pt")


if __name__ == "__main__":
    main()
