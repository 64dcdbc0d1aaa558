"""Gradio demo for BiRefNet (dichotomous / camouflaged / salient object segmentation).

    python app.py --device cuda:0 --server-name 0.0.0.0 --port 7860
"""
import os
import argparse
from glob import glob

import cv2
import numpy as np
import torch
import gradio as gr
from PIL import Image
from torchvision import transforms

from models.birefnet import BiRefNet
from utils import check_state_dict


torch.set_float32_matmul_precision(['high', 'highest'][0])

parser = argparse.ArgumentParser(description='BiRefNet gradio demo')
parser.add_argument('--device', default='cuda:0' if torch.cuda.is_available() else 'cpu')
parser.add_argument('--weights', default='General', help='usage name (see usage_to_weights_file) or a local .pth')
parser.add_argument('--resolution', default='1024x1024', help='WxH fed to the network')
parser.add_argument('--half', action='store_true', help='fp16 inference (GPU only)')
parser.add_argument('--server-name', default='127.0.0.1')
parser.add_argument('--port', type=int, default=7860)
args = parser.parse_args()
device = torch.device(args.device)

usage_to_weights_file = {
    'General': 'BiRefNet',
    'General-Lite': 'BiRefNet_lite',
    'Portrait': 'BiRefNet-portrait',
    'DIS': 'BiRefNet-DIS5K',
    'HRSOD': 'BiRefNet-HRSOD',
    'COD': 'BiRefNet-COD',
    'DIS-TR_TEs': 'BiRefNet-DIS5K-TR_TEs',
    'General-legacy': 'BiRefNet-legacy',
}


def load_model(name):
    if os.path.isfile(name):
        model = BiRefNet(bb_pretrained=False)
        state_dict = torch.load(name, map_location='cpu', weights_only=True)
        model.load_state_dict(check_state_dict(state_dict))
    else:
        from transformers import AutoModelForImageSegmentation
        repo = '/'.join(('zhengpeng7', usage_to_weights_file.get(name, name)))
        model = AutoModelForImageSegmentation.from_pretrained(repo, trust_remote_code=True)
    model.to(device)
    model.eval()
    if args.half and device.type == 'cuda':
        model.half()
    return model


birefnet = load_model(args.weights)
current_weights = args.weights


class ImagePreprocessor():
    def __init__(self, resolution=(1024, 1024)) -> None:
        self.transform_image = transforms.Compose([
            transforms.Resize(resolution[::-1]),
            transforms.ToTensor(),
            transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
        ])

    def proc(self, image: Image.Image) -> torch.Tensor:
        image = self.transform_image(image)
        return image


def refine_foreground(image, mask, r=90):
    """Approximate foreground colour estimation (blur fusion), keeps hair/fur edges clean."""
    if mask.size != image.size:
        mask = mask.resize(image.size)
    image = np.array(image) / 255.0
    mask = np.array(mask) / 255.0
    alpha = mask[:, :, None]
    blurred_alpha = cv2.blur(alpha, (r, r))[:, :, None]
    blurred_fa = cv2.blur(image * alpha, (r, r))
    blurred_f = blurred_fa / (blurred_alpha + 1e-5)
    blurred_b1a = cv2.blur(image * (1 - alpha), (r, r))
    blurred_b = blurred_b1a / ((1 - blurred_alpha) + 1e-5)
    foreground = blurred_f + alpha * (image - alpha * blurred_f - (1 - alpha) * blurred_b)
    foreground = np.clip(foreground, 0, 1)
    return Image.fromarray((foreground * 255.0).astype(np.uint8))


@torch.inference_mode()
def predict(image, resolution, weights_file):
    global birefnet, current_weights
    if weights_file and weights_file != current_weights:
        birefnet = load_model(weights_file)
        current_weights = weights_file

    try:
        resolution = [int(int(reso) // 32 * 32) for reso in resolution.strip().split('x')]
    except Exception:
        resolution = [1024, 1024]
        print('Invalid resolution input. Automatically changed to 1024x1024.')

    if isinstance(image, str):
        image = Image.open(image)
    image_ori = image.convert('RGB')

    image_preprocessor = ImagePreprocessor(resolution=tuple(resolution))
    image_proc = image_preprocessor.proc(image_ori).unsqueeze(0).to(device)

    with torch.autocast(device_type='cuda', dtype=torch.float16, enabled=args.half):
        preds = birefnet(image_proc)[-1].sigmoid().float().cpu()
    pred = preds[0].squeeze()

    pred_pil = transforms.ToPILImage()(pred)
    mask = pred_pil.resize(image_ori.size)
    image_masked = refine_foreground(image_ori, mask)
    image_masked.putalpha(mask)

    torch.cuda.empty_cache()
    return image_masked, mask


examples = [[path, '1024x1024', 'General'] for path in sorted(glob('examples/*'))]

demo = gr.Interface(
    fn=predict,
    inputs=[
        gr.Image(label='Upload an image', type='pil'),
        gr.Textbox(lines=1, placeholder="Type the resolution (`WxH`) you want, e.g., `1024x1024`.", label="Resolution"),
        gr.Radio(list(usage_to_weights_file.keys()), value='General', label="Weights", info="Choose the weights you want."),
    ],
    outputs=[
        gr.Image(label="BiRefNet's prediction", type='pil', format='png'),
        gr.Image(label='Mask', type='pil'),
    ],
    examples=examples,
    title='BiRefNet: Bilateral Reference for High-Resolution Dichotomous Image Segmentation',
    description='Upload an image and get the foreground. Runs on {}.'.format(device),
)


if __name__ == '__main__':
    demo.launch(server_name=args.server_name, server_port=args.port, share=False)
