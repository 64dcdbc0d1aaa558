#!/usr/bin/env python3 -u
# Copyright (c) Meta Platforms, Inc. and affiliates.
#
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.
"""Dump per-token / mean / BOS embeddings (and optionally contact maps) of an
ESM language model for every sequence of a FASTA file, one .pt per sequence.

    python scripts/extract.py esm2_t33_650M_UR50D examples/data/some_proteins.fasta \
        examples/data/some_proteins_emb_esm2 --repr_layers 0 32 33 --include mean per_tok
"""
import argparse
import pathlib
import sys

import torch

from esm import FastaBatchedDataset, MSATransformer, pretrained

INCLUDE_CHOICES = ["mean", "per_tok", "bos", "contacts"]


def create_parser():
    parser = argparse.ArgumentParser(
        description="Extract per-token representations and model outputs for sequences in a FASTA file"
    )
    parser.add_argument(
        "model_location", type=str,
        help="PyTorch model file OR name of pretrained model to download (see README for models)",
    )
    parser.add_argument("fasta_file", type=pathlib.Path, help="FASTA file on which to extract representations")
    parser.add_argument("output_dir", type=pathlib.Path, help="output directory for extracted representations")
    parser.add_argument("--toks_per_batch", type=int, default=4096, help="maximum batch size (in tokens)")
    parser.add_argument(
        "--repr_layers", type=int, default=[-1], nargs="+",
        help="layers indices from which to extract representations (0 to num_layers, inclusive)",
    )
    parser.add_argument(
        "--include", type=str, nargs="+", choices=INCLUDE_CHOICES, required=True,
        help="specify which representations to return",
    )
    parser.add_argument(
        "--truncation_seq_length", type=int, default=1022,
        help="truncate sequences longer than the given value",
    )
    parser.add_argument("--nogpu", action="store_true", help="Do not use GPU even if available")
    parser.add_argument("--fp16", action="store_true", help="Run the language model in half precision")
    parser.add_argument("--skip_existing", action="store_true", help="Do not recompute sequences whose .pt exists")
    return parser


def _normalise_layers(model, layers):
    n = model.num_layers
    assert all(-(n + 1) <= i <= n for i in layers), f"repr_layers must be within [-{n + 1}, {n}]"
    return [(i + n + 1) % (n + 1) for i in layers]


def _build_result(label, seq_len, i, args, representations, contacts):
    truncate_len = min(args.truncation_seq_length, seq_len)
    result = {"label": label}
    # clone() so that each saved tensor owns its storage instead of
    # being a view into the (much larger) batch representation
    if "per_tok" in args.include:
        result["representations"] = {
            layer: t[i, 1: truncate_len + 1].clone() for layer, t in representations.items()
        }
    if "mean" in args.include:
        result["mean_representations"] = {
            layer: t[i, 1: truncate_len + 1].mean(0).clone() for layer, t in representations.items()
        }
    if "bos" in args.include:
        result["bos_representations"] = {layer: t[i, 0].clone() for layer, t in representations.items()}
    if contacts is not None:
        result["contacts"] = contacts[i, :truncate_len, :truncate_len].clone()
    return result


def run(args):
    model, alphabet = pretrained.load_model_and_alphabet(args.model_location)
    model.eval()
    if isinstance(model, MSATransformer):
        raise ValueError("This script currently does not handle models with MSA input (MSA Transformer).")

    use_gpu = torch.cuda.is_available() and not args.nogpu
    if use_gpu:
        model = model.cuda()
        print("Transferred model to GPU", file=sys.stderr)
    if args.fp16:
        model = model.half()

    dataset = FastaBatchedDataset.from_file(args.fasta_file)
    batches = dataset.get_batch_indices(args.toks_per_batch, extra_toks_per_seq=1)
    data_loader = torch.utils.data.DataLoader(
        dataset,
        collate_fn=alphabet.get_batch_converter(args.truncation_seq_length),
        batch_sampler=batches,
    )
    print(f"Read {args.fasta_file} with {len(dataset)} sequences", file=sys.stderr)

    args.output_dir.mkdir(parents=True, exist_ok=True)
    return_contacts = "contacts" in args.include
    repr_layers = _normalise_layers(model, args.repr_layers)

    n_written = 0
    with torch.no_grad():
        for batch_idx, (labels, strs, toks) in enumerate(data_loader):
            if args.skip_existing and all((args.output_dir / f"{lab}.pt").exists() for lab in labels):
                continue
            print(
                f"Processing {batch_idx + 1} of {len(batches)} batches ({toks.size(0)} sequences)",
                file=sys.stderr,
            )
            if use_gpu:
                toks = toks.to(device="cuda", non_blocking=True)

            out = model(toks, repr_layers=repr_layers, return_contacts=return_contacts)

            representations = {
                layer: t.to(device="cpu", dtype=torch.float32) for layer, t in out["representations"].items()
            }
            contacts = out["contacts"].to(device="cpu", dtype=torch.float32) if return_contacts else None

            for i, label in enumerate(labels):
                output_file = args.output_dir / f"{label}.pt"
                output_file.parent.mkdir(parents=True, exist_ok=True)
                result = _build_result(label, len(strs[i]), i, args, representations, contacts)
                torch.save(result, output_file)
                n_written += 1

    print(f"Saved {n_written} embedding files to {args.output_dir}", file=sys.stderr)


def main():
    parser = create_parser()
    args = parser.parse_args()
    run(args)


if __name__ == "__main__":
    main()
