"""Gradio demo for Anime2Sketch (Hugging Face Space)."""
import os

import gradio as gr
import torch
from PIL import Image

from data import get_transform, tensor_to_img
from model import create_model

device = "cuda" if torch.cuda.is_available() else "cpu"
LOAD_SIZE = 512

print(f"Loading Anime2Sketch on {device} ...")
models = {
    "default": create_model("default").to(device).eval(),
    "improved": create_model("improved").to(device).eval(),
}
transform = get_transform(LOAD_SIZE)


def sketch(img: Image.Image, variant: str, keep_size: bool):
    img = img.convert("RGB")
    w, h = img.size
    x = transform(img).unsqueeze(0).to(device)
    with torch.inference_mode():
        y = models[variant](x)
    out = Image.fromarray(tensor_to_img(y))
    if keep_size:
        out = out.resize((w, h), Image.BICUBIC)
    return out


examples = [
    [os.path.join("test_samples", f), "default", True]
    for f in sorted(os.listdir("test_samples"))
    if f.lower().endswith((".jpg", ".png"))
][:4]

demo = gr.Interface(
    fn=sketch,
    inputs=[
        gr.Image(type="pil", label="Anime illustration"),
        gr.Radio(["default", "improved"], value="default", label="Model"),
        gr.Checkbox(value=True, label="Resize output to input size"),
    ],
    outputs=gr.Image(type="pil", label="Sketch"),
    title="Anime2Sketch",
    description="Extract clean line art from anime illustrations. Runs on GPU when available.",
    examples=examples,
)

if __name__ == "__main__":
    demo.queue(max_size=16).launch(server_name="0.0.0.0")
