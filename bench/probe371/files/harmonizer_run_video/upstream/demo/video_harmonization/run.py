import os
import time
import argparse

import cv2
import numpy as np
from PIL import Image

import torch
import torchvision.transforms.functional as tf

from src import model


DEVICE = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')


def read_video(path):
    cap = cv2.VideoCapture(path)
    fps = cap.get(cv2.CAP_PROP_FPS)
    frames = []
    while cap.isOpened():
        ret, frame = cap.read()
        if not ret:
            break
        frames.append(Image.fromarray(cv2.cvtColor(frame, cv2.COLOR_BGR2RGB)))
    cap.release()
    return frames, fps


def write_video(path, frames, fps):
    h, w = frames[0].shape[:2]
    writer = cv2.VideoWriter(path, cv2.VideoWriter_fourcc(*'mp4v'), fps, (w, h))
    for frame in frames:
        writer.write(cv2.cvtColor(frame, cv2.COLOR_RGB2BGR))
    writer.release()


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--example-path', type=str, default='./demo/video_harmonization/example', help='')
    parser.add_argument('--pretrained', type=str, default='./pretrained/harmonizer.pth', help='')
    parser.add_argument('--ema', type=float, default=0.5, help='temporal smoothing of the predicted filter arguments')
    args = parser.parse_known_args()[0]

    print('\n')
    print('================================================================================')
    print('Video Harmonization Demo')
    print('================================================================================')
    print('NOTE:')
    print('  The harmonized videos are saved in "{0}/harmonized"'.format(args.example_path))
    print('  Running on: {0}'.format(DEVICE))
    print('================================================================================\n')

    # create/load the harmonizer model
    print('Create/load Harmonizer...')
    harmonizer = model.Harmonizer().to(DEVICE)
    harmonizer.load_state_dict(torch.load(args.pretrained, map_location='cpu'), strict=True)
    harmonizer.eval()

    comp_path = os.path.join(args.example_path, 'composite')
    mask_path = os.path.join(args.example_path, 'mask')
    harmonized_path = os.path.join(args.example_path, 'harmonized')
    if not os.path.exists(harmonized_path):
        os.makedirs(harmonized_path)

    examples = sorted([v for v in os.listdir(comp_path) if v.endswith('.mp4')])
    for i, example in enumerate(examples):
        print('Process {0}/{1}: {2}'.format(i + 1, len(examples), example))
        comp_frames, fps = read_video(os.path.join(comp_path, example))
        mask_frames, _ = read_video(os.path.join(mask_path, example))
        if len(comp_frames) != len(mask_frames):
            print('The number of frames of the composite video and the mask video are inconsistent')
            continue

        ema_arguments = None
        harmonized_frames = []
        start = time.time()
        for comp, mask in zip(comp_frames, mask_frames):
            comp = tf.to_tensor(comp)[None, ...].to(DEVICE)
            mask = tf.to_tensor(mask.convert('1'))[None, ...].to(DEVICE)

            with torch.no_grad():
                arguments = harmonizer.predict_arguments(comp, mask)
                if ema_arguments is None:
                    ema_arguments = arguments
                else:
                    ema_arguments = [args.ema * e + (1 - args.ema) * a for e, a in zip(ema_arguments, arguments)]
                harmonized = harmonizer.restore_image(comp, mask, ema_arguments)[-1]

            harmonized = np.transpose(harmonized[0].cpu().numpy(), (1, 2, 0)) * 255
            harmonized_frames.append(harmonized.astype(np.uint8))

        elapsed = time.time() - start
        print('  {0} frames in {1:.1f}s ({2:.1f} fps)'.format(len(harmonized_frames), elapsed, len(harmonized_frames) / max(elapsed, 1e-6)))
        write_video(os.path.join(harmonized_path, example), harmonized_frames, fps)

    print('Done\n')
