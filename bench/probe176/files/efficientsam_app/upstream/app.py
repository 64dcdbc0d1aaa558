# Gradio demo for EfficientSAM (box / point prompts + segment everything).
import zipfile

import gradio as gr
import numpy as np
import torch
from PIL import Image
from torchvision.transforms import ToTensor

from efficient_sam.build_efficient_sam import build_efficient_sam_vitt, build_efficient_sam_vits

device = "cuda" if torch.cuda.is_available() else "cpu"
# bf16 only pays off on Ampere+; older cards fall back to fp16
AMP_DTYPE = torch.bfloat16 if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8 else torch.float16

with zipfile.ZipFile("weights/efficient_sam_vits.pt.zip", "r") as zip_ref:
    zip_ref.extractall("weights")

models = {
    "efficientsam_ti": build_efficient_sam_vitt().to(device).eval(),
    "efficientsam_s": build_efficient_sam_vits().to(device).eval(),
}


def _run(img, pts, labels, model_name):
    img_tensor = ToTensor()(img).to(device)
    pts_sampled = torch.reshape(torch.tensor(pts, dtype=torch.float32, device=device), [1, 1, -1, 2])
    pts_labels = torch.reshape(torch.tensor(labels, device=device), [1, 1, -1])
    with torch.autocast("cuda", dtype=AMP_DTYPE, enabled=device == "cuda"):
        predicted_logits, predicted_iou = models[model_name](img_tensor[None, ...], pts_sampled, pts_labels)
    sorted_ids = torch.argsort(predicted_iou, dim=-1, descending=True)
    predicted_logits = torch.take_along_dim(predicted_logits, sorted_ids[..., None, None], dim=2)
    return torch.ge(predicted_logits[0, 0, 0, :, :], 0).float().cpu().numpy()


@torch.no_grad()
def run_box(img, x0, y0, x1, y1, model_name):
    mask = _run(img, [[x0, y0], [x1, y1]], [2, 3], model_name)
    return overlay(img, mask)


@torch.no_grad()
def run_point(img, x, y, model_name):
    mask = _run(img, [[x, y]], [1], model_name)
    return overlay(img, mask)


@torch.no_grad()
def segment_everything(img, model_name, grid=16):
    h, w = np.array(img).shape[:2]
    xs, ys = np.meshgrid(np.linspace(0, w - 1, grid), np.linspace(0, h - 1, grid))
    canvas = np.zeros((h, w), dtype=np.int32)
    for k, (x, y) in enumerate(zip(xs.ravel(), ys.ravel())):
        mask = _run(img, [[x, y]], [1], model_name)
        canvas[(mask > 0) & (canvas == 0)] = k + 1
    torch.cuda.empty_cache()
    rng = np.random.default_rng(0)
    palette = rng.integers(0, 255, size=(canvas.max() + 1, 3), dtype=np.uint8)
    palette[0] = 0
    return Image.blend(img.convert("RGB"), Image.fromarray(palette[canvas]), 0.5)


def overlay(img, mask, color=(30, 144, 255)):
    img = np.array(img.convert("RGB"))
    out = img.copy()
    out[mask > 0] = (0.5 * img[mask > 0] + 0.5 * np.array(color)).astype(np.uint8)
    return Image.fromarray(out)


with gr.Blocks(title="EfficientSAM") as demo:
    gr.Markdown("## EfficientSAM: point / box prompts and segment-everything (GPU recommended)")
    model_name = gr.Radio(list(models.keys()), value="efficientsam_ti", label="model")
    with gr.Tab("box"):
        box_img = gr.Image(type="pil")
        coords = [gr.Number(label=n) for n in ("x0", "y0", "x1", "y1")]
        box_out = gr.Image()
        gr.Button("segment").click(run_box, [box_img, *coords, model_name], box_out)
    with gr.Tab("point"):
        pt_img = gr.Image(type="pil")
        px, py = gr.Number(label="x"), gr.Number(label="y")
        pt_out = gr.Image()
        gr.Button("segment").click(run_point, [pt_img, px, py, model_name], pt_out)
    with gr.Tab("everything"):
        ev_img = gr.Image(type="pil")
        ev_out = gr.Image()
        gr.Button("segment everything").click(segment_everything, [ev_img, model_name], ev_out)

demo.queue().launch(server_name="0.0.0.0", share=False)
