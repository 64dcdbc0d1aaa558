#!/usr/bin/env python
"""Segment CBCT scans with the DentalSegmentator nnU-Net model (Dataset111_453CT).

    python scripts/run_dentalsegmentator.py -i scans/ -o segmentations/ -m weights/Dataset111_453CT

Labels: 1 maxilla/upper skull, 2 mandible, 3 upper teeth, 4 lower teeth, 5 mandibular canal.
"""
import argparse
import multiprocessing
import os
from pathlib import Path

import torch
from batchgenerators.utilities.file_and_folder_operations import join, maybe_mkdir_p
from nnunetv2.inference.predict_from_raw_data import nnUNetPredictor

LABELS = {1: "Maxilla & Upper Skull", 2: "Mandible", 3: "Upper Teeth", 4: "Lower Teeth", 5: "Mandibular canal"}


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-i", "--input", required=True, help="folder with .nii.gz / .nrrd CBCT scans")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("-m", "--model", required=True, help="trained model folder (contains fold_0, plans.json ...)")
    parser.add_argument("-f", "--folds", nargs="+", default=["0"])
    parser.add_argument("-chk", "--checkpoint", default="checkpoint_final.pth")
    parser.add_argument("--step-size", type=float, default=0.5)
    parser.add_argument("--disable-tta", action="store_true", help="no mirroring, ~8x faster")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu", "mps"],
                        help="'cuda' (GPU), 'cpu' or 'mps' (Apple M1/M2)")
    parser.add_argument("-npp", type=int, default=3, help="number of preprocessing processes")
    parser.add_argument("-nps", type=int, default=3, help="number of segmentation export processes")
    return parser.parse_args()


def main():
    args = parse_args()

    if args.device == "cpu":
        # let's allow torch to use hella threads
        torch.set_num_threads(multiprocessing.cpu_count())
        device = torch.device("cpu")
    elif args.device == "cuda":
        # multithreading in torch doesn't help nnU-Net if run on GPU
        torch.set_num_threads(1)
        torch.set_num_interop_threads(1)
        device = torch.device("cuda")
    else:
        device = torch.device("mps")

    maybe_mkdir_p(args.output)
    folds = [int(f) if f != "all" else f for f in args.folds]

    predictor = nnUNetPredictor(
        tile_step_size=args.step_size,
        use_gaussian=True,
        use_mirroring=not args.disable_tta,
        perform_everything_on_device=True,
        device=device,
        verbose=False,
        verbose_preprocessing=False,
        allow_tqdm=True,
    )
    predictor.initialize_from_trained_model_folder(args.model, use_folds=folds, checkpoint_name=args.checkpoint)

    inputs = sorted(str(p) for p in Path(args.input).iterdir() if p.name.endswith((".nii.gz", ".nrrd", ".mha")))
    # nnU-Net expects lists of lists (one inner list per case, one entry per channel)
    list_of_lists = [[f] for f in inputs]
    outputs = [join(args.output, Path(f).name.split(".")[0]) for f in inputs]

    predictor.predict_from_files(list_of_lists, outputs, save_probabilities=False, overwrite=True,
                                 num_processes_preprocessing=args.npp,
                                 num_processes_segmentation_export=args.nps,
                                 folder_with_segs_from_prev_stage=None, num_parts=1, part_id=0)
    print(f"segmented {len(inputs)} scans -> {args.output}")
    for k, v in LABELS.items():
        print(f"  label {k}: {v}")


if __name__ == "__main__":
    main()
