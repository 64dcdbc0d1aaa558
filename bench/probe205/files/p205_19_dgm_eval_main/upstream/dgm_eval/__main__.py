import os
import pathlib
import time
from argparse import ArgumentDefaultsHelpFormatter, ArgumentParser

import numpy as np
import torch

from .dataloaders import get_dataloader
from .heatmaps import visualize_heatmaps
from .metrics import compute_FD_with_reps, compute_FD_infinity, compute_mmd, compute_prdc, compute_vendi_score, compute_authpct
from .models import MODELS, load_encoder
from .representations import get_representations, load_reps_from_path, save_outputs

parser = ArgumentParser(formatter_class=ArgumentDefaultsHelpFormatter)

parser.add_argument('--model', type=str, default='dinov2', choices=MODELS.keys(),
                    help='Model to use for generating feature representations.')

parser.add_argument('--train_dataset', type=str, default='imagenet',
                    help='Dataset that model was trained on. Sets proper normalization for MAE.')

parser.add_argument('-bs', '--batch_size', type=int, default=50,
                    help='Batch size to use')

parser.add_argument('--num-workers', type=int,
                    help='Number of processes to use for data loading. '
                         'Defaults to `min(8, num_cpus)`')

parser.add_argument('--device', type=str, default=None,
                    help='Device to use. Like cuda, cuda:0 or cpu')

parser.add_argument('--nearest_k', type=int, default=5,
                    help='Number of neighbours for precision, recall, density, and coverage')

parser.add_argument('--reduce_factor', type=float, default=0.99,
                    help='Reduce factor for vendi score')

parser.add_argument('--nsample', type=int, default=50000,
                    help='Maximum number of images to use for calculation')

parser.add_argument('path', type=str, nargs='+',
                    help='Paths to the images, the first one is the real dataset, followed by generated')

parser.add_argument('--metrics', type=str, nargs='+', default=['fd', 'fd-infinity', 'kd', 'prdc'],
                    help="metrics to compute")

parser.add_argument('-ckpt', '--checkpoint', type=str, default=None,
                    help='Path to checkpoint for the representation model (if not hub)')

parser.add_argument('--arch', type=str, default=None,
                    help='Model architecture. If none specified use default specified in model class')

parser.add_argument('--splits', type=int, default=10,
                    help='Number of splits for inception score')

parser.add_argument('--heatmaps', action='store_true',
                    help='Generate heatmaps showing the most important parts of the images for FD')

parser.add_argument('--heatmaps-perturbation', action='store_true',
                    help='Add perturbations to heatmaps')

parser.add_argument('--output_dir', type=str, default='./experiments/',
                    help='Directory to save outputs in')

parser.add_argument('--save', action='store_true',
                    help='Save representations to output_dir')

parser.add_argument('--load', action='store_true',
                    help='Load representations and statistics from previous runs if possible')

parser.add_argument('--no-load-notes', action='store_true',
                    help='Do not use notes when loading representations')

parser.add_argument('--exp_name', type=str, default='',
                    help='Experiment name to add to filename')

parser.add_argument('--seed', type=int, default=13579,
                    help='Random seed')

parser.add_argument('--clean_resize', action='store_true',
                    help='Use clean resizing (from pillow)')

parser.add_argument('--depth', type=int, default=0,
                    help='Negative depth for internal layers, positive 1 for after projection head.')

parser.add_argument('--compile', action='store_true',
                    help='torch.compile the encoder (PyTorch >= 2.0, CUDA only)')


def get_device_and_num_workers(device, num_workers):
    if device is None:
        device = torch.device('cuda' if (torch.cuda.is_available()) else 'cpu')
    else:
        device = torch.device(device)

    if num_workers is None:
        num_avail_cpus = len(os.sched_getaffinity(0))
        num_workers = min(num_avail_cpus, 8)
    else:
        num_workers = num_workers

    print(f'Device: {device}, num_workers: {num_workers}')

    return device, num_workers


def get_dataloader_from_path(path, model_transform, num_workers, args, sample_w_replacement=False):

    print(f'Getting DataLoader for path: {path}\n', file=sys.stderr)

    dataloader = get_dataloader(path, args.nsample, args.batch_size, num_workers, seed=args.seed,
                                sample_w_replacement=sample_w_replacement,
                                transform=lambda x: model_transform(x))

    return dataloader


def compute_representations(DL, model, device, args):
    """
    Load representations from disk if path exists,
    else compute image representations using the specified encoder

    Returns:
        repsi: float32 (Nimage, ndim)
    """

    if args.load:
        print(f'Loading saved representations from: {args.output_dir}\n', file=sys.stderr)
        repsi = load_reps_from_path(args.output_dir, args.model, None, DL)
        if repsi is not None:
            return repsi

        print(f'No saved representations found: {args.output_dir}\n', file=sys.stderr)

    print('Calculating Representations\n', file=sys.stderr)
    t0 = time.time()
    repsi = get_representations(model, DL, device, normalized=False)
    torch.cuda.synchronize()
    print(f'  {len(repsi)} representations in {time.time() - t0:.1f}s\n', file=sys.stderr)
    if args.save:
        print(f'Saving representations to {args.output_dir}\n', file=sys.stderr)
        save_outputs(args.output_dir, repsi, args.model, None, DL)
    return repsi


def knn_radii(reps, k, device, chunk=4096):
    """k-NN radii of a set of representations, computed on the accelerator in fp32 chunks."""
    x = torch.from_numpy(reps).to(device=device, dtype=torch.float32)
    radii = []
    for i in range(0, x.shape[0], chunk):
        d = torch.cdist(x[i:i + chunk], x)
        radii.append(d.kthvalue(k + 1, dim=1).values.cpu())
    return torch.cat(radii).numpy()


def compute_scores(args, reps, test_reps, labels=None, device=None):

    scores = {}
    vendi_scores = None

    if 'fd' in args.metrics:
        print("Computing FD \n", file=sys.stderr)
        scores['fd'] = compute_FD_with_reps(*reps)

    if 'fd_eff' in args.metrics:
        print("Computing Efficient FD \n", file=sys.stderr)
        scores['fd_eff'] = compute_efficient_FD_with_reps(*reps)

    if 'fd-infinity' in args.metrics:
        print("Computing fd-infinity \n", file=sys.stderr)
        scores['fd_infinity_value'] = compute_FD_infinity(*reps)

    if 'kd' in args.metrics:
        print("Computing KD \n", file=sys.stderr)
        mmd_values = compute_mmd(*reps)
        scores['kd_value'] = mmd_values.mean()
        scores['kd_variance'] = mmd_values.std()

    if 'prdc' in args.metrics:
        print("Computing precision, recall, density, and coverage \n", file=sys.stderr)
        reduced_n = min(args.reduced_n if hasattr(args, 'reduced_n') else 10000, reps[0].shape[0], reps[1].shape[0])
        inds0 = np.random.choice(reps[0].shape[0], reduced_n, replace=False)
        inds1 = np.arange(reps[1].shape[0])
        if 'realism' not in args.metrics:
            # Realism is returned for each sample, do not shuffle if this metric is desired.
            # Else filenames and realism scores will not align
            inds1 = np.random.choice(inds1, min(inds1.shape[0], reduced_n), replace=False)

        prdc_dict = compute_prdc(
            reps[0][inds0],
            reps[1][inds1],
            nearest_k=args.nearest_k,
            realism=True if 'realism' in args.metrics else False)
        scores = dict(scores, **prdc_dict)

    if 'vendi' in args.metrics:
        print("Calculating diversity score", file=sys.stderr)
        scores['vendi'] = compute_vendi_score(reps[1])
        vendi_scores = None

    if 'authpct' in args.metrics:
        print("Computing authpct \n", file=sys.stderr)
        scores['authpct'] = compute_authpct(*reps)

    for key, value in scores.items():
        if key == 'realism':
            continue
        print(f'{key}: {value:.5f}\n')

    return scores, vendi_scores


def save_score(scores, output_dir, model, path, ckpt, nsample, is_only=False):

    ckpt_str = ''
    if ckpt is not None:
        ckpt_str = f'_ckpt-{os.path.splitext(os.path.basename(ckpt))[0]}'

    if is_only:
        out_str = f"Inception score: {scores['inception score']}\n"
    else:
        out_str = ''
        for key, value in scores.items():
            if key == 'realism':
                continue
            out_str += f"{key}: {value}\n"

    out_path = os.path.join(output_dir, f'{model}{ckpt_str}_nimage-{nsample}_{os.path.basename(os.path.normpath(path))}.txt')
    with open(out_path, 'w') as f:
        f.write(out_str)


def main():
    args = parser.parse_args()

    device, num_workers = get_device_and_num_workers(args.device, args.num_workers)

    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(args.seed)

    print('Loading Model', file=sys.stderr)
    # Get train representations
    model = load_encoder(args.model, device, ckpt=None, arch=None,
                         clean_resize=args.clean_resize,
                         sinception=True if args.model == 'sinception' else False,
                         depth=args.depth,
                         )
    if args.compile:
        model.model = torch.compile(model.model, mode="reduce-overhead")
    dataloader_real = get_dataloader_from_path(args.path[0], model.transform, num_workers, args)
    reps_real = compute_representations(dataloader_real, model, device, args)

    # Loop over all gen models
    for i, path in enumerate(args.path[1:]):

        print(f'Getting representations for {path}', file=sys.stderr)
        dataloader_gen = get_dataloader_from_path(path, model.transform, num_workers, args)
        reps_gen = compute_representations(dataloader_gen, model, device, args)

        # Compute scores
        scores, vendi_scores = compute_scores(args, (reps_real, reps_gen), None, device=device)

        if args.heatmaps:
            visualize_heatmaps(reps_real, reps_gen, model, dataset=dataloader_gen.data_set,
                               results_dir=args.output_dir, results_suffix=os.path.basename(path),
                               dataset_suffix=os.path.basename(args.path[0]), num_rows=4, num_cols=4,
                               device=device, perturbation=args.heatmaps_perturbation)

        save_score(scores, args.output_dir, args.model, path, args.checkpoint, args.nsample)
        torch.cuda.empty_cache()


if __name__ == '__main__':
    import sys
    main()
