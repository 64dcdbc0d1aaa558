"""IP-Adapter-FaceID-PlusV2 demo.

1. extract the face ID embedding (and an aligned face crop) with insightface buffalo_l
2. generate with IP-Adapter-FaceID-PlusV2 on top of Realistic Vision 4.0

    python ip_adapter_faceid_demo.py --face person.jpg --prompt "photo of a woman in red dress in a garden"
"""
import argparse

import cv2
import numpy as np
import torch
from insightface.app import FaceAnalysis
from insightface.utils import face_align
from diffusers import StableDiffusionPipeline, DDIMScheduler, AutoencoderKL
from PIL import Image

from ip_adapter.ip_adapter_faceid import IPAdapterFaceIDPlus, IPAdapterFaceID

base_model_path = "SG161222/Realistic_Vision_V4.0_noVAE"
vae_model_path = "stabilityai/sd-vae-ft-mse"
image_encoder_path = "laion/CLIP-ViT-H-14-laion2B-s32B-b79K"
ip_ckpt = "ip-adapter-faceid-plusv2_sd15.bin"
ip_ckpt_base = "ip-adapter-faceid_sd15.bin"


def get_face_app(det_size=(640, 640)):
    # buffalo_l = retinaface det_10g + arcface w600k_r50; onnxruntime-gpu runs both on the GPU
    app = FaceAnalysis(name="buffalo_l", providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    app.prepare(ctx_id=0, det_size=det_size)
    return app


def extract_face(app, image_path):
    image = cv2.imread(image_path)
    if image is None:
        raise FileNotFoundError(image_path)
    faces = app.get(image)
    if len(faces) == 0:
        raise RuntimeError(f"no face detected in {image_path}")
    # largest face first
    faces = sorted(faces, key=lambda f: (f.bbox[2] - f.bbox[0]) * (f.bbox[3] - f.bbox[1]), reverse=True)
    faceid_embeds = torch.from_numpy(faces[0].normed_embedding).unsqueeze(0)
    face_image = face_align.norm_crop(image, landmark=faces[0].kps, image_size=224)  # you can also segment the face
    return faceid_embeds, face_image


def build_pipe(device):
    noise_scheduler = DDIMScheduler(
        num_train_timesteps=1000,
        beta_start=0.00085,
        beta_end=0.012,
        beta_schedule="scaled_linear",
        clip_sample=False,
        set_alpha_to_one=False,
        steps_offset=1,
    )
    vae = AutoencoderKL.from_pretrained(vae_model_path).to(dtype=torch.float16)
    pipe = StableDiffusionPipeline.from_pretrained(
        base_model_path,
        torch_dtype=torch.float16,
        scheduler=noise_scheduler,
        vae=vae,
        feature_extractor=None,
        safety_checker=None
    )
    return pipe


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--face", required=True)
    parser.add_argument("--prompt", default="photo of a woman in red dress in a garden")
    parser.add_argument("--negative_prompt", default="monochrome, lowres, bad anatomy, worst quality, low quality, blurry")
    parser.add_argument("--base", action="store_true", help="plain FaceID (no CLIP face structure)")
    parser.add_argument("--s_scale", type=float, default=1.0, help="face structure weight (PlusV2 only)")
    parser.add_argument("--num_samples", type=int, default=4)
    parser.add_argument("--seed", type=int, default=2023)
    parser.add_argument("--gpu", type=int, default=0)
    parser.add_argument("--out", default="faceid.png")
    args = parser.parse_args()

    device = f"cuda:{args.gpu}"

    app = get_face_app()
    faceid_embeds, face_image = extract_face(app, args.face)

    pipe = build_pipe(device)

    # load ip-adapter
    if args.base:
        ip_model = IPAdapterFaceID(pipe, ip_ckpt_base, device)
        images = ip_model.generate(
            prompt=args.prompt, negative_prompt=args.negative_prompt, faceid_embeds=faceid_embeds,
            num_samples=args.num_samples, width=512, height=768, num_inference_steps=30, seed=args.seed,
        )
    else:
        ip_model = IPAdapterFaceIDPlus(pipe, image_encoder_path, ip_ckpt, device)
        images = ip_model.generate(
            prompt=args.prompt, negative_prompt=args.negative_prompt, face_image=face_image, faceid_embeds=faceid_embeds,
            shortcut=True, s_scale=args.s_scale,
            num_samples=args.num_samples, width=512, height=768, num_inference_steps=30, seed=args.seed,
        )

    w, h = images[0].size
    grid = Image.new("RGB", size=(len(images) * w, h))
    for i, img in enumerate(images):
        grid.paste(img, box=(i * w, 0))
    grid.save(args.out)
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()
