"""
Dichotomous image segmentation / background removal inference (BiRefNet style).

    python inference.py --ckpt ckpt/BiRefNet-general-epoch_244.pth \
        --testsets DIS-VD+DIS-TE1 --pred-root e_preds

    python inference.py --ckpt ckpt/BiRefNet-general-epoch_244.pth \
        --images demo/*.jpg --output-dir demo/rgba --save-rgba

By default the model runs in half precision on the GPU (bf16 on Ampere and newer,
fp16 otherwise) and is wrapped in torch.compile. Use --no-compile on first runs or
for debugging, since compilation takes a couple of minutes.
"""
import os
import time
import argparse
from glob import glob

import cv2
import numpy as np
from PIL import Image
from tqdm import tqdm

import torch
import torch.nn.functional as F
from torchvision import transforms

from dataset import MyData
from models.birefnet import BiRefNet
from utils import save_tensor_img, check_state_dict
from config import Config


config = Config()

# Let cuBLAS use TF32 for the fp32 parts (decoder heads, interpolation).
torch.set_float32_matmul_precision('high')
torch.backends.cuda.matmul.allow_tf32 = True


def get_device_and_dtype(force_fp32=False):
    device = 'cuda' if torch.cuda.is_available() else 'cpu'
    if device == 'cpu' or force_fp32:
        return device, torch.float32
    major, _ = torch.cuda.get_device_capability()
    dtype = torch.bfloat16 if major >= 8 else torch.float16
    return device, dtype


def build_model(ckpt, device, dtype, compile_model=True):
    model = BiRefNet(bb_pretrained=False)
    state_dict = torch.load(ckpt, map_location='cpu', weights_only=True)
    state_dict = check_state_dict(state_dict)
    model.load_state_dict(state_dict)
    model = model.to(device=device, dtype=dtype).eval()
    if compile_model:
        model = torch.compile(model, mode='reduce-overhead')
    return model


def inference(model, data_loader_test, pred_root, method, testset, device, dtype):
    os.makedirs(os.path.join(pred_root, method, testset), exist_ok=True)
    for batch in tqdm(data_loader_test, total=len(data_loader_test)):
        inputs = batch[0].to(device, non_blocking=True)
        label_paths = batch[-1]
        with torch.no_grad(), torch.autocast(device_type='cuda', dtype=dtype, enabled=dtype != torch.float32):
            scaled_preds = model(inputs)[-1].sigmoid().to(torch.float32)

        for idx_sample in range(scaled_preds.shape[0]):
            res = F.interpolate(
                scaled_preds[idx_sample].unsqueeze(0),
                size=cv2.imread(label_paths[idx_sample], cv2.IMREAD_GRAYSCALE).shape[:2],
                mode='bilinear',
                align_corners=True
            )
            save_tensor_img(res, os.path.join(pred_root, method, testset,
                                              label_paths[idx_sample].replace('\\', '/').split('/')[-1]))
    return None


# ---------------------------------------------------------------- plain image folders
transform_image = transforms.Compose([
    transforms.Resize((1024, 1024)),
    transforms.ToTensor(),
    transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
])


def remove_background(model, image_paths, output_dir, device, dtype, save_rgba=False, benchmark=False):
    os.makedirs(output_dir, exist_ok=True)
    timings = []
    for path in tqdm(image_paths):
        image = Image.open(path).convert('RGB')
        input_images = transform_image(image).unsqueeze(0).to(device)

        if benchmark:
            torch.cuda.synchronize()  # exclude the H2D copy from the timing
        t0 = time.time()
        with torch.inference_mode(), torch.autocast(device_type='cuda', dtype=dtype, enabled=dtype != torch.float32):
            preds = model(input_images)[-1].sigmoid()
        if benchmark:
            torch.cuda.synchronize()
            timings.append(time.time() - t0)

        pred = preds[0].squeeze().float().cpu()
        mask = transforms.ToPILImage()(pred).resize(image.size)
        name = os.path.splitext(os.path.basename(path))[0]
        if save_rgba:
            image.putalpha(mask)
            image.save(os.path.join(output_dir, name + '.png'))
        else:
            mask.save(os.path.join(output_dir, name + '_mask.png'))

    if benchmark and len(timings) > 5:
        steady = timings[5:]
        print('avg latency: {:.1f} ms, peak memory: {:.0f} MB'.format(
            1000 * sum(steady) / len(steady), torch.cuda.max_memory_allocated() / 2 ** 20))


def process_video(model, video_path, output_path, device, dtype, bg_color=(0, 255, 0)):
    """Frame-by-frame background replacement for a video (no temporal smoothing)."""
    cap = cv2.VideoCapture(video_path)
    fps = cap.get(cv2.CAP_PROP_FPS) or 25
    w = int(cap.get(cv2.CAP_PROP_FRAME_WIDTH))
    h = int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT))
    n = int(cap.get(cv2.CAP_PROP_FRAME_COUNT))
    writer = cv2.VideoWriter(output_path, cv2.VideoWriter_fourcc(*'mp4v'), fps, (w, h))
    bg = np.zeros((h, w, 3), dtype=np.float32)
    bg[:] = bg_color[::-1]

    for _ in tqdm(range(n)):
        ok, frame = cap.read()
        if not ok:
            break
        image = Image.fromarray(cv2.cvtColor(frame, cv2.COLOR_BGR2RGB))
        inputs = transform_image(image).unsqueeze(0).to(device)
        with torch.no_grad():
            pred = model(inputs.to(dtype))[-1].sigmoid()
        alpha = F.interpolate(pred.float(), size=(h, w), mode='bilinear', align_corners=False)[0, 0]
        alpha = alpha.cpu().numpy()[..., None]
        out = frame.astype(np.float32) * alpha + bg * (1 - alpha)
        writer.write(out.astype(np.uint8))

    cap.release()
    writer.release()
    print('Saved {}'.format(output_path))


def main(args):
    device, dtype = get_device_and_dtype(args.fp32)
    print('Running on {} with {}'.format(device, dtype))

    if args.video:
        model = build_model(args.ckpt, device, dtype, compile_model=False)
        process_video(model, args.video, os.path.join(args.output_dir, 'out.mp4'), device, dtype)
        return

    if args.images:
        image_paths = sorted(p for pattern in args.images for p in glob(pattern))
        model = build_model(args.ckpt, device, torch.float32 if dtype == torch.float32 else dtype,
                            compile_model=not args.no_compile)
        remove_background(model, image_paths, args.output_dir, device, dtype,
                          save_rgba=args.save_rgba, benchmark=args.benchmark)
        return

    weights_lst = sorted(
        glob(os.path.join(args.ckpt_folder, '*.pth')) if args.ckpt_folder else [args.ckpt],
        key=lambda x: int(x.split('epoch_')[-1].split('.pth')[0]),
        reverse=True
    )
    for testset in args.testsets.split('+'):
        print('>>>> Testset: {}...'.format(testset))
        data_loader_test = torch.utils.data.DataLoader(
            dataset=MyData(testset, image_size=config.size, is_train=False),
            batch_size=config.batch_size_valid, shuffle=False, num_workers=config.num_workers, pin_memory=True
        )
        for weights in weights_lst:
            print('\tInferencing {}...'.format(weights))
            model = build_model(weights, device, dtype, compile_model=not args.no_compile)
            inference(
                model, data_loader_test=data_loader_test, pred_root=args.pred_root,
                method='--'.join([w.rstrip('.pth') for w in weights.split(os.sep)[-2:]]),
                testset=testset, device=device, dtype=dtype
            )
            del model
            torch.cuda.empty_cache()


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description='')
    parser.add_argument('--ckpt', type=str, help='model checkpoint', default=None)
    parser.add_argument('--ckpt-folder', default='', type=str, help='folder of checkpoints (epoch_N.pth)')
    parser.add_argument('--pred-root', default='e_preds', type=str, help='Output folder')
    parser.add_argument('--testsets', default='DIS-VD+DIS-TE1+DIS-TE2+DIS-TE3+DIS-TE4', type=str)
    parser.add_argument('--images', nargs='*', default=None, help='glob(s) of plain images to process')
    parser.add_argument('--video', default=None, type=str, help='run on a video file instead')
    parser.add_argument('--output-dir', default='outputs', type=str)
    parser.add_argument('--save-rgba', action='store_true')
    parser.add_argument('--benchmark', action='store_true')
    parser.add_argument('--no-compile', action='store_true')
    parser.add_argument('--fp32', action='store_true')
    args = parser.parse_args()

    if config.precisionHigh:
        torch.set_float32_matmul_precision('high')
    main(args)
