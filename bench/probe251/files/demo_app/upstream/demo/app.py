"""
Gradio demo: upload an image or a short video, get a real/fake score per face.

    python demo/app.py --detector_path training/config/detector/efficientnetb4.yaml \
        --weights weights/effnb4_best.pth --port 7860
"""
import argparse
import os
import tempfile

import cv2
import dlib
import gradio as gr
import numpy as np
import torch
import torch.nn.functional as F
import yaml
from PIL import Image
from torchvision import transforms as T

from training.detectors import DETECTOR

DEVICE = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
USE_FP16 = DEVICE.type == "cuda"

face_detector = dlib.get_frontal_face_detector()


def load_detector(detector_path, weights):
    with open(detector_path) as f:
        config = yaml.safe_load(f)
    config['pretrained'] = None  # backbone weights come from the checkpoint
    model = DETECTOR[config['model_name']](config)
    ckpt = torch.load(weights, map_location=DEVICE)
    ckpt = {k.replace('module.', ''): v for k, v in ckpt.items()}
    model.load_state_dict(ckpt, strict=False)
    model = model.to(DEVICE).eval()
    if USE_FP16:
        model = model.half()
    return model, config


def build_transform(config):
    return T.Compose([
        T.Resize((config['resolution'], config['resolution'])),
        T.ToTensor(),
        T.Normalize(mean=config['mean'], std=config['std']),
    ])


def crop_faces(rgb, scale=1.3):
    gray = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    faces = face_detector(gray, 1)
    h, w = rgb.shape[:2]
    crops, boxes = [], []
    for f in faces:
        cx, cy = (f.left() + f.right()) / 2, (f.top() + f.bottom()) / 2
        size = max(f.width(), f.height()) * scale
        x1, y1 = int(max(0, cx - size / 2)), int(max(0, cy - size / 2))
        x2, y2 = int(min(w, cx + size / 2)), int(min(h, cy + size / 2))
        crops.append(Image.fromarray(rgb[y1:y2, x1:x2]))
        boxes.append((x1, y1, x2, y2))
    return crops, boxes


@torch.inference_mode()
def score_faces(model, transform, crops):
    if not crops:
        return []
    x = torch.stack([transform(c) for c in crops]).to(DEVICE, non_blocking=True)
    if USE_FP16:
        x = x.half()
    with torch.cuda.amp.autocast(enabled=USE_FP16):
        out = model({'image': x, 'label': None}, inference=True)
    return out['prob'].float().cpu().tolist()


def annotate(rgb, boxes, probs):
    vis = rgb.copy()
    for (x1, y1, x2, y2), p in zip(boxes, probs):
        color = (255, 0, 0) if p > 0.5 else (0, 200, 0)
        cv2.rectangle(vis, (x1, y1), (x2, y2), color, 3)
        cv2.putText(vis, f'fake {p:.2f}', (x1, max(0, y1 - 8)), cv2.FONT_HERSHEY_SIMPLEX, 0.8, color, 2)
    return vis


def make_handlers(model, transform):
    def on_image(img):
        rgb = np.array(img.convert('RGB'))
        crops, boxes = crop_faces(rgb)
        probs = score_faces(model, transform, crops)
        if not probs:
            return rgb, 'no face found'
        return annotate(rgb, boxes, probs), f'max fake prob: {max(probs):.3f} over {len(probs)} face(s)'

    def on_video(path, n_frames=16):
        cap = cv2.VideoCapture(path)
        total = int(cap.get(cv2.CAP_PROP_FRAME_COUNT))
        idxs = set(np.linspace(0, max(0, total - 1), n_frames, dtype=int).tolist())
        frame_scores, last_vis = [], None
        for i in range(total):
            ok, frame = cap.read()
            if not ok:
                break
            if i not in idxs:
                continue
            rgb = cv2.cvtColor(frame, cv2.COLOR_BGR2RGB)
            crops, boxes = crop_faces(rgb)
            probs = score_faces(model, transform, crops)
            if probs:
                frame_scores.append(max(probs))
                last_vis = annotate(rgb, boxes, probs)
        cap.release()
        if not frame_scores:
            return None, 'no face found'
        torch.cuda.empty_cache()
        return last_vis, f'video fake score: {float(np.mean(frame_scores)):.3f} ({len(frame_scores)} frames)'

    return on_image, on_video


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--detector_path', default='training/config/detector/efficientnetb4.yaml')
    parser.add_argument('--weights', default='weights/effnb4_best.pth')
    parser.add_argument('--port', type=int, default=7860)
    parser.add_argument('--share', action='store_true')
    args = parser.parse_args()

    model, config = load_detector(args.detector_path, args.weights)
    transform = build_transform(config)
    on_image, on_video = make_handlers(model, transform)

    hw = torch.cuda.get_device_name(DEVICE) if DEVICE.type == 'cuda' else 'CPU'
    with gr.Blocks(title='Deepfake detector') as demo:
        gr.Markdown(f"# Deepfake detector ({config['model_name']}, running on {hw})")
        with gr.Tab('Image'):
            inp = gr.Image(type='pil')
            out_img, out_txt = gr.Image(), gr.Textbox()
            gr.Button('Detect').click(on_image, inp, [out_img, out_txt])
        with gr.Tab('Video'):
            vin = gr.Video()
            vout_img, vout_txt = gr.Image(), gr.Textbox()
            gr.Button('Detect').click(on_video, vin, [vout_img, vout_txt])
    demo.queue(concurrency_count=1).launch(server_name='0.0.0.0', server_port=args.port, share=args.share)


if __name__ == '__main__':
    main()
