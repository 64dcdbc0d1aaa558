#!/usr/bin/env python3
import argparse
import json
import os
import sys

import torch

from torch_fidelity.defaults import DEFAULTS
from torch_fidelity.metrics import calculate_metrics
from torch_fidelity.registry import (
    FEATURE_EXTRACTORS_REGISTRY,
    DATASETS_REGISTRY,
    SAMPLE_SIMILARITY_REGISTRY,
    NOISE_SOURCE_REGISTRY,
    INTERPOLATION_REGISTRY,
)


def main():
    parser = argparse.ArgumentParser(formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("input1", type=str, help="First input")
    parser.add_argument("input2", type=str, nargs="?", default=None, help="Second input")
    parser.add_argument(
        "-g",
        "--gpu",
        default=os.environ.get("CUDA_VISIBLE_DEVICES", None),
        type=str,
        help="CUDA_VISIBLE_DEVICES",
    )
    parser.add_argument("-c", "--cpu", action="store_true", help="Use CPU (disables the --gpu flag)")
    parser.add_argument("-b", "--batch-size", default=DEFAULTS["batch_size"], type=int, help="Batch size to use")
    parser.add_argument("--input1-cache-name", default=DEFAULTS["input1_cache_name"], type=str,
                        help="Assigns a cache entry to input1 (when not a registered input) and forces caching of features on it")
    parser.add_argument("--input1-model-z-type", default=DEFAULTS["input1_model_z_type"], type=str,
                        choices=list(NOISE_SOURCE_REGISTRY.keys()), help="Type of noise, accepted by the input1 generator model")
    parser.add_argument("--input1-model-z-size", default=DEFAULTS["input1_model_z_size"], type=int,
                        help="Dimensionality of noise, accepted by the input1 generator model")
    parser.add_argument("--input1-model-num-classes", default=DEFAULTS["input1_model_num_classes"], type=int,
                        help="Number of classes for conditional (0 for unconditional) generation (input1)")
    parser.add_argument("--input1-model-num-samples", default=DEFAULTS["input1_model_num_samples"], type=int,
                        help="Number of samples to draw from input1 generator model, when it is provided as a path to ONNX model")
    parser.add_argument("--input2-cache-name", default=DEFAULTS["input2_cache_name"], type=str,
                        help="Assigns a cache entry to input2 (when not a registered input) and forces caching of features on it")
    parser.add_argument("--isc", action="store_true", help="Calculate ISC (Inception Score)")
    parser.add_argument("--fid", action="store_true", help="Calculate FID (Frechet Inception Distance)")
    parser.add_argument("--kid", action="store_true", help="Calculate KID (Kernel Inception Distance)")
    parser.add_argument("--prc", action="store_true", help="Calculate PRC (Precision and Recall)")
    parser.add_argument("--ppl", action="store_true", help="Calculate PPL (Perceptual Path Length)")
    parser.add_argument("--feature-extractor", default=DEFAULTS["feature_extractor"], type=str,
                        choices=list(FEATURE_EXTRACTORS_REGISTRY.keys()), help="Name of the feature extractor")
    parser.add_argument("--feature-layer-isc", default=None, type=str, help="Name of the feature layer to use with ISC metric")
    parser.add_argument("--feature-layer-fid", default=None, type=str, help="Name of the feature layer to use with FID metric")
    parser.add_argument("--feature-layer-kid", default=None, type=str, help="Name of the feature layer to use with KID metric")
    parser.add_argument("--feature-extractor-weights-path", default=DEFAULTS["feature_extractor_weights_path"], type=str,
                        help="Path to feature extractor weights (downloaded if None)")
    parser.add_argument("--feature-extractor-internal-dtype", default=DEFAULTS["feature_extractor_internal_dtype"], type=str,
                        choices=["float32", "float64"], help="dtype to use inside the feature extractor")
    parser.add_argument("--feature-extractor-compile", action="store_true", help="Compile feature extractor (experimental: may have negative effect on metrics numerical precision)")
    parser.add_argument("--isc-splits", default=DEFAULTS["isc_splits"], type=int, help="Number of splits in ISC")
    parser.add_argument("--kid-subsets", default=DEFAULTS["kid_subsets"], type=int, help="Number of subsets in KID")
    parser.add_argument("--kid-subset-size", default=DEFAULTS["kid_subset_size"], type=int, help="Subset size in KID")
    parser.add_argument("--kid-degree", default=DEFAULTS["kid_degree"], type=int, help="Degree of polynomial kernel in KID")
    parser.add_argument("--kid-gamma", default=DEFAULTS["kid_gamma"], type=float, help="Polynomial kernel gamma in KID (automatic if None)")
    parser.add_argument("--kid-coef0", default=DEFAULTS["kid_coef0"], type=float, help="Polynomial kernel coef0 in KID")
    parser.add_argument("--ppl-epsilon", default=DEFAULTS["ppl_epsilon"], type=float, help="Interpolation step size in PPL")
    parser.add_argument("--ppl-reduction", default=DEFAULTS["ppl_reduction"], type=str, choices=["mean", "none"],
                        help="Reduction type to apply to the per-sample output values")
    parser.add_argument("--ppl-sample-similarity", default=DEFAULTS["ppl_sample_similarity"], type=str,
                        choices=list(SAMPLE_SIMILARITY_REGISTRY.keys()), help="Name of the sample similarity to use in PPL metric computation")
    parser.add_argument("--ppl-sample-similarity-resize", default=DEFAULTS["ppl_sample_similarity_resize"], type=int,
                        help="Force samples to this size when computing similarity, unless set to None")
    parser.add_argument("--ppl-sample-similarity-dtype", default=DEFAULTS["ppl_sample_similarity_dtype"], type=str,
                        help="Check samples are of compatible dtype when computing similarity, unless set to None")
    parser.add_argument("--ppl-discard-percentile-lower", default=DEFAULTS["ppl_discard_percentile_lower"], type=int,
                        help="Removes the lower percentile of samples before reduction")
    parser.add_argument("--ppl-discard-percentile-higher", default=DEFAULTS["ppl_discard_percentile_higher"], type=int,
                        help="Removes the higher percentile of samples before reduction")
    parser.add_argument("--ppl-z-interp-mode", default=DEFAULTS["ppl_z_interp_mode"], type=str,
                        choices=list(INTERPOLATION_REGISTRY.keys()), help="Noise interpolation mode in PPL")
    parser.add_argument("--prc-neighborhood", default=DEFAULTS["prc_neighborhood"], type=int,
                        help="Number of nearest neighbours in PRC")
    parser.add_argument("--prc-batch-size", default=DEFAULTS["prc_batch_size"], type=int,
                        help="Batch size in PRC")
    parser.add_argument("--samples-shuffle", action="store_true", help="Perform random samples shuffling before computing splits")
    parser.add_argument("--samples-find-deep", action="store_true", help="Find all samples in paths recursively")
    parser.add_argument("--samples-find-ext", default=DEFAULTS["samples_find_ext"], type=str,
                        help="List of extensions to look for when traversing input path")
    parser.add_argument("--samples-ext-lossy", default=DEFAULTS["samples_ext_lossy"], type=str,
                        help="List of extensions to warn about lossy compression")
    parser.add_argument("--samples-resize-and-crop", default=DEFAULTS["samples_resize_and_crop"], type=int,
                        help="Transform all images found in the directory to a given size and square shape")
    parser.add_argument("--datasets-root", default=DEFAULTS["datasets_root"], type=str,
                        help="Path to built-in torchvision datasets root. Defaults to $ENV_TORCH_HOME/fidelity_datasets")
    parser.add_argument("--datasets-download", action="store_true", help="Download torchvision datasets to dataset_root")
    parser.add_argument("--cache-root", default=DEFAULTS["cache_root"], type=str,
                        help="Path to file cache for features and statistics. Defaults to $ENV_TORCH_HOME/fidelity_cache")
    parser.add_argument("--no-cache", action="store_true", help="Do not use file cache for features and statistics")
    parser.add_argument("--rng-seed", default=DEFAULTS["rng_seed"], type=int, help="Random numbers generator seed for all operations involving randomness")
    parser.add_argument("--save-cpu-ram", action="store_true", help="Use less CPU RAM at the cost of speed")
    parser.add_argument("--silent", action="store_true", help="Do not output progress information to STDERR")
    parser.add_argument("--json", action="store_true", help="Print metrics in JSON format")

    args = parser.parse_args()

    if args.gpu is not None and not args.cpu:
        os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu

    if not args.cpu and not torch.cuda.is_available():
        print("WARNING: CUDA is not available, falling back to CPU. Pass --cpu to silence this warning", file=sys.stderr)
        args.cpu = True

    metrics = calculate_metrics(
        input1=args.input1,
        input2=args.input2,
        cuda=not args.cpu,
        batch_size=args.batch_size,
        isc=args.isc,
        fid=args.fid,
        kid=args.kid,
        prc=args.prc,
        ppl=args.ppl,
        feature_extractor=args.feature_extractor,
        feature_layer_isc=args.feature_layer_isc,
        feature_layer_fid=args.feature_layer_fid,
        feature_layer_kid=args.feature_layer_kid,
        feature_extractor_weights_path=args.feature_extractor_weights_path,
        feature_extractor_internal_dtype=args.feature_extractor_internal_dtype,
        feature_extractor_compile=args.feature_extractor_compile,
        isc_splits=args.isc_splits,
        kid_subsets=args.kid_subsets,
        kid_subset_size=args.kid_subset_size,
        kid_degree=args.kid_degree,
        kid_gamma=args.kid_gamma,
        kid_coef0=args.kid_coef0,
        ppl_epsilon=args.ppl_epsilon,
        ppl_reduction=args.ppl_reduction,
        ppl_sample_similarity=args.ppl_sample_similarity,
        ppl_sample_similarity_resize=args.ppl_sample_similarity_resize,
        ppl_sample_similarity_dtype=args.ppl_sample_similarity_dtype,
        ppl_discard_percentile_lower=args.ppl_discard_percentile_lower,
        ppl_discard_percentile_higher=args.ppl_discard_percentile_higher,
        ppl_z_interp_mode=args.ppl_z_interp_mode,
        prc_neighborhood=args.prc_neighborhood,
        prc_batch_size=args.prc_batch_size,
        samples_shuffle=args.samples_shuffle,
        samples_find_deep=args.samples_find_deep,
        samples_find_ext=args.samples_find_ext,
        samples_ext_lossy=args.samples_ext_lossy,
        samples_resize_and_crop=args.samples_resize_and_crop,
        datasets_root=args.datasets_root,
        datasets_download=args.datasets_download,
        cache_root=args.cache_root,
        cache=not args.no_cache,
        input1_cache_name=args.input1_cache_name,
        input1_model_z_type=args.input1_model_z_type,
        input1_model_z_size=args.input1_model_z_size,
        input1_model_num_classes=args.input1_model_num_classes,
        input1_model_num_samples=args.input1_model_num_samples,
        input2_cache_name=args.input2_cache_name,
        rng_seed=args.rng_seed,
        save_cpu_ram=args.save_cpu_ram,
        verbose=not args.silent,
    )

    if args.json:
        print(json.dumps(metrics, indent=4))
    else:
        print("\n".join((f"{k}: {v:.7g}" for k, v in metrics.items())))


if __name__ == "__main__":
    main()
