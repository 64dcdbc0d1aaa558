"""Gradio demo: click a point to segment an object with SAM 2, then show its relative depth from
Depth-Anything-V2 (mean / median depth inside the mask, coloured depth map, masked overlay).

    python demo/app_depth_sam.py --sam-cfg configs/sam2.1/sam2.1_hiera_l.yaml --sam-ckpt checkpoints/sam2.1_hiera_large.pt
"""
import argparse

import cv2
import gradio as gr
import matplotlib
import numpy as np
import torch
from depth_anything_v2.dpt import DepthAnythingV2
from PIL import Image
from sam2.build_sam import build_sam2
from sam2.sam2_image_predictor import SAM2ImagePredictor

DEVICE = "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"

DA_CONFIGS = {
    "vits": {"encoder": "vits", "features": 64, "out_channels": [48, 96, 192, 384]},
    "vitb": {"encoder": "vitb", "features": 128, "out_channels": [96, 192, 384, 768]},
    "vitl": {"encoder": "vitl", "features": 256, "out_channels": [256, 512, 1024, 1024]},
}


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sam-cfg", default="configs/sam2.1/sam2.1_hiera_l.yaml")
    ap.add_argument("--sam-ckpt", default="checkpoints/sam2.1_hiera_large.pt")
    ap.add_argument("--da-encoder", default="vitl", choices=list(DA_CONFIGS))
    ap.add_argument("--da-ckpt", default="checkpoints/depth_anything_v2_vitl.pth")
    ap.add_argument("--input-size", type=int, default=518)
    ap.add_argument("--share", action="store_true")
    return ap.parse_args()


ARGS = parse_args()

# use bfloat16 for the entire demo
torch.autocast("cuda", dtype=torch.bfloat16).__enter__()
if torch.cuda.get_device_properties(0).major >= 8:
    # turn on tfloat32 for Ampere GPUs (https://pytorch.org/docs/stable/notes/cuda.html)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

sam2_model = build_sam2(ARGS.sam_cfg, ARGS.sam_ckpt, device="cuda")
predictor = SAM2ImagePredictor(sam2_model)

depth_anything = DepthAnythingV2(**DA_CONFIGS[ARGS.da_encoder])
depth_anything.load_state_dict(torch.load(ARGS.da_ckpt, map_location="cpu"))
depth_anything = depth_anything.to(DEVICE).eval()

cmap = matplotlib.colormaps.get_cmap("Spectral_r")


def colorize(depth):
    d = (depth - depth.min()) / (depth.max() - depth.min() + 1e-8)
    return (cmap(d)[:, :, :3] * 255).astype(np.uint8)


@torch.inference_mode()
def estimate_depth(image_rgb):
    bgr = cv2.cvtColor(image_rgb, cv2.COLOR_RGB2BGR)
    depth = depth_anything.infer_image(bgr, ARGS.input_size)
    return depth


@torch.inference_mode()
def segment(image_rgb, points, labels):
    predictor.set_image(image_rgb)
    masks, scores, _ = predictor.predict(
        point_coords=np.array(points, dtype=np.float32),
        point_labels=np.array(labels, dtype=np.int32),
        multimask_output=True,
    )
    best = int(np.argmax(scores))
    return masks[best].astype(bool), float(scores[best])


def overlay(image_rgb, mask, color=(30, 144, 255), alpha=0.5):
    out = image_rgb.copy()
    out[mask] = (alpha * np.array(color) + (1 - alpha) * out[mask]).astype(np.uint8)
    contours, _ = cv2.findContours(mask.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    cv2.drawContours(out, contours, -1, (255, 255, 255), 2)
    return out


def on_click(image, state, evt: gr.SelectData):
    if image is None:
        return None, None, "upload an image first", state
    state = state or {"points": [], "labels": []}
    state["points"].append([evt.index[0], evt.index[1]])
    state["labels"].append(1)
    mask, score = segment(image, state["points"], state["labels"])
    depth = estimate_depth(image)
    inside = depth[mask]
    stats = (f"SAM score {score:.3f} | mask {mask.mean() * 100:.1f}% of image | "
             f"relative depth mean {inside.mean():.3f}, median {np.median(inside):.3f}")
    return overlay(image, mask), colorize(depth), stats, state


def on_reset():
    torch.cuda.empty_cache()
    return None, None, "", None


with gr.Blocks(title="SAM 2 + Depth Anything V2") as demo:
    gr.Markdown("## Click an object: SAM 2 segments it, Depth Anything V2 estimates its relative depth")
    state = gr.State()
    with gr.Row():
        inp = gr.Image(label="Input", type="numpy")
        seg = gr.Image(label="Segmentation")
        dep = gr.Image(label="Depth")
    info = gr.Textbox(label="Stats")
    reset = gr.Button("Reset points")
    inp.select(on_click, inputs=[inp, state], outputs=[seg, dep, info, state])
    reset.click(on_reset, outputs=[seg, dep, info, state])
    gr.Examples(examples=["assets/examples/dog.jpg", "assets/examples/room.jpg"], inputs=inp)

if __name__ == "__main__":
    demo.queue().launch(share=ARGS.share)
