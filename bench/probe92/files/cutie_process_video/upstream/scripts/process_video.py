"""
Process a single video with Cutie, given the first-frame mask (or masks at a few frames).

    python scripts/process_video.py --video ./examples/bike.mp4 --mask_dir ./examples/bike_masks --output ./output/bike

Masks are read as palette PNGs named by frame index (00000.png, ...). Output is written as palette PNGs
and, optionally, an overlay video.
"""
import os
from os import path, listdir
from argparse import ArgumentParser

import cv2
import numpy as np
from PIL import Image
from tqdm import tqdm
import torch
from omegaconf import open_dict
from hydra import compose, initialize

from cutie.model.cutie import CUTIE
from cutie.inference.inference_core import InferenceCore
from cutie.inference.utils.results_utils import ResultSaver
from gui.interactive_utils import image_to_torch, torch_prob_to_numpy_mask, index_numpy_to_one_hot_torch, overlay_davis


def get_arguments():
    parser = ArgumentParser()
    parser.add_argument('-v', '--video', help='Video file.', required=True)
    parser.add_argument('-m', '--mask_dir', help='Directory with mask files (PNG, palette mode).', required=True)
    parser.add_argument('-o', '--output', help='Output directory.', required=True)
    parser.add_argument('--weights', default='weights/cutie-base-mega.pth')
    parser.add_argument('--device', help='cuda / mps / cpu', default='cuda')
    parser.add_argument('--amp', action='store_true', help='Run the network under mixed precision.')
    parser.add_argument('--mem_every', type=int, default=5)
    parser.add_argument('--max_internal_size', type=int, default=480,
                        help='Resize the shorter side of the internal image to this size. -1 disables resizing.')
    parser.add_argument('--save_overlay', action='store_true')
    parser.add_argument('--overlay_fps', type=int, default=24)
    return parser.parse_args()


def select_device(requested: str) -> str:
    if requested == 'cuda' and torch.cuda.is_available():
        device = 'cuda'
    elif requested == 'mps' and torch.backends.mps.is_available():
        device = 'mps'
    else:
        device = 'cpu'
    if device != requested:
        print(f'Requested device {requested} is not available, falling back to {device}.')
    return device


def load_masks(mask_dir):
    masks = {}
    palette = None
    for name in sorted(listdir(mask_dir)):
        if not name.endswith('.png'):
            continue
        frame_index = int(path.splitext(name)[0])
        mask_img = Image.open(path.join(mask_dir, name))
        if palette is None:
            palette = mask_img.getpalette()
        masks[frame_index] = np.array(mask_img)
    if not masks:
        raise ValueError(f'No mask found in {mask_dir}')
    return masks, palette


def build_model(args, device):
    with initialize(version_base='1.3.2', config_path='../cutie/config', job_name='process_video'):
        cfg = compose(config_name='eval_config')

    with open_dict(cfg):
        cfg['weights'] = args.weights
        cfg['mem_every'] = args.mem_every
        cfg['max_internal_size'] = args.max_internal_size

    cutie = CUTIE(cfg).to(device).eval()
    model_weights = torch.load(cfg.weights, map_location=device)
    cutie.load_weights(model_weights)
    return cutie, cfg


def main():
    args = get_arguments()
    device = select_device(args.device)
    print(f'Using device: {device}')

    torch.set_grad_enabled(False)
    cutie, cfg = build_model(args, device)
    processor = InferenceCore(cutie, cfg=cfg)

    masks, palette = load_masks(args.mask_dir)
    objects = sorted(set(np.unique(np.concatenate([m.ravel() for m in masks.values()]))) - {0})
    print(f'Found {len(objects)} objects in {len(masks)} annotated frames.')

    os.makedirs(args.output, exist_ok=True)
    cap = cv2.VideoCapture(args.video)
    total_frames = int(cap.get(cv2.CAP_PROP_FRAME_COUNT))

    writer = None
    if args.save_overlay:
        width = int(cap.get(cv2.CAP_PROP_FRAME_WIDTH))
        height = int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT))
        fourcc = cv2.VideoWriter_fourcc(*'mp4v')
        writer = cv2.VideoWriter(path.join(args.output, 'overlay.mp4'), fourcc, args.overlay_fps,
                                 (width, height))

    current_frame_index = 0
    with torch.inference_mode():
        with torch.amp.autocast(device_type=device, enabled=(args.amp and device == 'cuda')):
            pbar = tqdm(total=total_frames)
            while cap.isOpened():
                _, frame = cap.read()
                if frame is None:
                    break
                frame = cv2.cvtColor(frame, cv2.COLOR_BGR2RGB)
                frame_torch = image_to_torch(frame, device=device)

                if current_frame_index in masks:
                    mask_np = masks[current_frame_index]
                    mask_torch = index_numpy_to_one_hot_torch(mask_np, len(objects) + 1).to(device)
                    # the background channel is not passed to the processor
                    output_prob = processor.step(frame_torch, mask_torch[1:], idx_mask=False)
                else:
                    output_prob = processor.step(frame_torch)

                mask = torch_prob_to_numpy_mask(output_prob)
                mask_img = Image.fromarray(mask.astype(np.uint8))
                if palette is not None:
                    mask_img.putpalette(palette)
                mask_img.save(path.join(args.output, f'{current_frame_index:05d}.png'))

                if writer is not None:
                    visualization = overlay_davis(frame, mask)
                    writer.write(cv2.cvtColor(visualization, cv2.COLOR_RGB2BGR))

                current_frame_index += 1
                pbar.update(1)
            pbar.close()

    cap.release()
    if writer is not None:
        writer.release()

    if device == 'cuda':
        print(f'Peak GPU memory: {torch.cuda.max_memory_allocated() / 2**30:.2f} GB')
    print(f'Done. {current_frame_index} frames written to {args.output}.')


if __name__ == '__main__':
    main()
