import argparse
import glob
import os

import torch
from PIL import Image
from tqdm import tqdm

from pyiqa import create_metric, list_models
from pyiqa.utils.img_util import is_image_file


def parse_args():
    parser = argparse.ArgumentParser(description='Run a pyiqa metric on a single image or a folder of images.')
    parser.add_argument('-m', '--metric_name', type=str, default='PSNR', help='IQA metric name, case sensitive.')
    parser.add_argument('--metric_mode', type=str, default=None, help='FR or NR; inferred from the metric when omitted.')
    parser.add_argument('-i', '--input', type=str, default=None, help='input image/folder path.')
    parser.add_argument('-r', '--ref', type=str, default=None, help='reference image/folder path if needed.')
    parser.add_argument('--save_file', type=str, default=None, help='path to save results.')
    parser.add_argument('--device', type=str, default=None,
                        help='device to run the metric on, e.g. "cuda", "cuda:1" or "cpu". '
                             'Defaults to the first GPU when one is visible.')
    parser.add_argument('--batch_size', type=int, default=1, help='only used for folders of equally sized images.')
    parser.add_argument('--verbose', action='store_true', help='print the score of every image.')
    parser.add_argument('--list_models', action='store_true', help='print all available metrics and exit.')
    return parser.parse_args()


def collect_files(path):
    if path is None:
        return []
    if os.path.isfile(path):
        return [path]
    files = sorted(glob.glob(os.path.join(path, '*')))
    return [f for f in files if is_image_file(f)]


def main():
    args = parse_args()

    if args.list_models:
        for name in list_models():
            print(name)
        return

    if args.device is None:
        device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')
    else:
        device = torch.device(args.device)

    metric_name = args.metric_name.lower()
    iqa_model = create_metric(metric_name, device=device, metric_mode=args.metric_mode)
    metric_mode = iqa_model.metric_mode
    lower_better = iqa_model.lower_better

    input_paths = collect_files(args.input)
    if not input_paths:
        raise FileNotFoundError(f'No image found under {args.input}')

    ref_paths = []
    if metric_mode == 'FR':
        if args.ref is None:
            raise ValueError(f'{metric_name} is a full-reference metric, please provide --ref.')
        ref_paths = collect_files(args.ref)
        if len(ref_paths) == 1 and len(input_paths) > 1:
            ref_paths = ref_paths * len(input_paths)
        elif os.path.isdir(args.ref):
            ref_lookup = {os.path.basename(p): p for p in ref_paths}
            ref_paths = [ref_lookup.get(os.path.basename(p)) for p in input_paths]
            missing = [p for p, r in zip(input_paths, ref_paths) if r is None]
            if missing:
                raise FileNotFoundError(f'Reference images missing for: {missing[:5]} ...')

    save_file = open(args.save_file, 'w') if args.save_file is not None else None

    avg_score = 0
    test_img_num = len(input_paths)
    pbar = tqdm(total=test_img_num, unit='image')
    for idx, img_path in enumerate(input_paths):
        img_name = os.path.basename(img_path)
        if metric_mode == 'FR':
            ref_img_path = ref_paths[idx]
        else:
            ref_img_path = None

        # inputs are loaded lazily by the metric wrapper (path -> tensor on the metric device)
        score = iqa_model(img_path, ref_img_path).cpu().item()
        avg_score += score
        pbar.update(1)
        pbar.set_description(f'{metric_name} of {img_name}: {score:.4f}')
        pbar.write(f'{metric_name} of {img_name}: {score}') if args.verbose else None
        if save_file:
            save_file.write(f'{img_name}\t{score}\n')
    pbar.close()
    avg_score /= test_img_num

    if test_img_num > 1:
        print(f'Average {metric_name} score of {args.input} with {test_img_num} images is: {avg_score}')
        print(f'{"Lower" if lower_better else "Higher"} is better for {metric_name}.')
    if save_file:
        save_file.close()
        print(f'Done! Results are in {args.save_file}.')
    else:
        print('Done!')


def load_single(path):
    """Kept for backwards compatibility with old notebooks that imported this helper."""
    return Image.open(path).convert('RGB')


if __name__ == '__main__':
    main()
