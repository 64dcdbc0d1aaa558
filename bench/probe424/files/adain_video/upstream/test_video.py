import argparse
import time
from pathlib import Path

import cv2
import numpy as np
import torch
import torch.nn as nn
from PIL import Image
from torchvision import transforms
from tqdm import tqdm

import net
from function import adaptive_instance_normalization


def test_transform(size, crop):
    transform_list = []
    if size != 0:
        transform_list.append(transforms.Resize(size))
    if crop:
        transform_list.append(transforms.CenterCrop(size))
    transform_list.append(transforms.ToTensor())
    return transforms.Compose(transform_list)


def style_transfer(vgg, decoder, content, style, alpha=1.0):
    assert (0.0 <= alpha <= 1.0)
    content_f = vgg(content)
    style_f = vgg(style)
    feat = adaptive_instance_normalization(content_f, style_f)
    feat = feat * alpha + content_f * (1 - alpha)
    return decoder(feat)


def frame_to_tensor(frame, tf):
    # OpenCV gives BGR uint8; convert to a PIL RGB image first
    img = Image.fromarray(cv2.cvtColor(frame, cv2.COLOR_BGR2RGB))
    return tf(img)


def tensor_to_frame(t):
    t = t.clamp(0, 1).squeeze(0).permute(1, 2, 0).numpy()
    t = (t * 255.0).astype(np.uint8)
    return cv2.cvtColor(t, cv2.COLOR_RGB2BGR)


parser = argparse.ArgumentParser()
parser.add_argument('--content_video', type=str, required=True,
                    help='File path to the content video')
parser.add_argument('--style_path', type=str, required=True,
                    help='File path to the style image')
parser.add_argument('--vgg', type=str, default='models/vgg_normalised.pth')
parser.add_argument('--decoder', type=str, default='models/decoder.pth')
parser.add_argument('--content_size', type=int, default=512)
parser.add_argument('--style_size', type=int, default=512)
parser.add_argument('--crop', action='store_true')
parser.add_argument('--save_ext', default='.mp4')
parser.add_argument('--output', type=str, default='output')
parser.add_argument('--alpha', type=float, default=1.0)
parser.add_argument('--gpu', type=int, default=0,
                    help='GPU id to run on, -1 for CPU')
parser.add_argument('--benchmark', action='store_true',
                    help='print per-frame latency')
args = parser.parse_args()

device = torch.device('cuda:%d' % args.gpu if args.gpu >= 0 else 'cpu')
if args.gpu >= 0:
    torch.backends.cudnn.benchmark = True

output_dir = Path(args.output)
output_dir.mkdir(exist_ok=True, parents=True)

content_video = Path(args.content_video)
style_path = Path(args.style_path)
assert content_video.is_file(), 'content video not found: %s' % content_video

decoder = net.decoder
vgg = net.vgg
decoder.eval()
vgg.eval()
decoder.load_state_dict(torch.load(args.decoder))
vgg.load_state_dict(torch.load(args.vgg))
vgg = nn.Sequential(*list(vgg.children())[:31])
vgg.to(device)
decoder.to(device)

content_tf = test_transform(args.content_size, args.crop)
style_tf = test_transform(args.style_size, args.crop)

cap = cv2.VideoCapture(str(content_video))
fps = int(cap.get(cv2.CAP_PROP_FPS))
n_frames = int(cap.get(cv2.CAP_PROP_FRAME_COUNT))

style = style_tf(Image.open(str(style_path)).convert('RGB'))
style = style.to(device).unsqueeze(0)

output_name = output_dir / '{:s}_stylized_{:s}{:s}'.format(
    content_video.stem, style_path.stem, args.save_ext)
writer = None
latencies = []

for _ in tqdm(range(n_frames)):
    ret, frame = cap.read()
    if not ret:
        break
    content = frame_to_tensor(frame, content_tf).to(device).unsqueeze(0)
    if args.benchmark and args.gpu >= 0:
        torch.cuda.synchronize()
    t0 = time.time()
    with torch.no_grad():
        output = style_transfer(vgg, decoder, content, style, args.alpha)
    if args.benchmark and args.gpu >= 0:
        torch.cuda.synchronize(device)
    latencies.append(time.time() - t0)
    out_frame = tensor_to_frame(output.cpu())
    if writer is None:
        h, w = out_frame.shape[:2]
        fourcc = cv2.VideoWriter_fourcc(*'mp4v')
        writer = cv2.VideoWriter(str(output_name), fourcc, fps, (w, h))
    writer.write(out_frame)

cap.release()
if writer is not None:
    writer.release()

if args.benchmark and latencies:
    # skip the first frames, they include cudnn autotuning
    steady = latencies[5:] or latencies
    print('mean latency per frame: %.2f ms' % (1000.0 * sum(steady) / len(steady)))
print('saved to', output_name)
