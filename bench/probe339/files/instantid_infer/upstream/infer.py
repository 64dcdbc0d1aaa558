import argparse
import math
import os

import cv2
import torch
import numpy as np
from PIL import Image

from diffusers.utils import load_image
from diffusers.models import ControlNetModel
from diffusers import LCMScheduler

from insightface.app import FaceAnalysis
from pipeline_stable_diffusion_xl_instantid import StableDiffusionXLInstantIDPipeline, draw_kps


def resize_img(input_image, max_side=1280, min_side=1024, size=None,
               pad_to_max_side=False, mode=Image.BILINEAR, base_pixel_number=64):

    w, h = input_image.size
    if size is not None:
        w_resize_new, h_resize_new = size
    else:
        ratio = min_side / min(h, w)
        w, h = round(ratio * w), round(ratio * h)
        ratio = max_side / max(h, w)
        input_image = input_image.resize([round(ratio * w), round(ratio * h)], mode)
        w_resize_new = (round(ratio * w) // base_pixel_number) * base_pixel_number
        h_resize_new = (round(ratio * h) // base_pixel_number) * base_pixel_number
    input_image = input_image.resize([w_resize_new, h_resize_new], mode)

    if pad_to_max_side:
        res = np.ones([max_side, max_side, 3], dtype=np.uint8) * 255
        offset_x = (max_side - w_resize_new) // 2
        offset_y = (max_side - h_resize_new) // 2
        res[offset_y:offset_y + h_resize_new, offset_x:offset_x + w_resize_new] = np.array(input_image)
        input_image = Image.fromarray(res)
    return input_image


def largest_face(face_infos):
    """only use the maximum face"""
    return sorted(face_infos, key=lambda x: (x['bbox'][2] - x['bbox'][0]) * (x['bbox'][3] - x['bbox'][1]))[-1]


def parse_args():
    parser = argparse.ArgumentParser(description='InstantID: zero-shot identity-preserving generation')
    parser.add_argument('--face_image', type=str, default='./examples/yann-lecun_resize.jpg')
    parser.add_argument('--pose_image', type=str, default=None, help='optional image whose face keypoints drive the pose')
    parser.add_argument('--prompt', type=str,
                        default='analog film photo of a man. faded film, desaturated, 35mm photo, grainy, vignette, vintage, Kodachrome, Lomography, stained, highly detailed, found footage, masterpiece, best quality')
    parser.add_argument('--negative_prompt', type=str,
                        default='(lowres, low quality, worst quality:1.2), (watermark:1.2), glitch, deformed, mutated, cross-eyed, ugly, disfigured')
    parser.add_argument('--base_model', type=str, default='stabilityai/stable-diffusion-xl-base-1.0')
    parser.add_argument('--checkpoint_dir', type=str, default='./checkpoints')
    parser.add_argument('--steps', type=int, default=30)
    parser.add_argument('--guidance_scale', type=float, default=5.0)
    parser.add_argument('--identitynet_strength', type=float, default=0.8)
    parser.add_argument('--adapter_strength', type=float, default=0.8)
    parser.add_argument('--seed', type=int, default=42)
    parser.add_argument('--num_images', type=int, default=1)
    parser.add_argument('--lcm', action='store_true', help='use LCM-LoRA for 4-8 step sampling')
    parser.add_argument('--lowvram', action='store_true', help='offload sub-models to CPU between calls')
    parser.add_argument('--output_dir', type=str, default='./results')
    return parser.parse_args()


if __name__ == "__main__":
    args = parse_args()
    os.makedirs(args.output_dir, exist_ok=True)

    # Load face encoder
    app = FaceAnalysis(name='antelopev2', root='./', providers=['CUDAExecutionProvider', 'CPUExecutionProvider'])
    app.prepare(ctx_id=0, det_size=(640, 640))

    # Path to InstantID models
    face_adapter = os.path.join(args.checkpoint_dir, 'ip-adapter.bin')
    controlnet_path = os.path.join(args.checkpoint_dir, 'ControlNetModel')

    # Load pipeline
    controlnet = ControlNetModel.from_pretrained(controlnet_path, torch_dtype=torch.float16)

    pipe = StableDiffusionXLInstantIDPipeline.from_pretrained(
        args.base_model,
        controlnet=controlnet,
        torch_dtype=torch.float16,
    )

    # SDXL + ControlNet + IP-Adapter needs ~18GB in fp16; offload on smaller cards
    total_mem = torch.cuda.get_device_properties(0).total_memory
    if args.lowvram or total_mem < 20 * 1024 ** 3:
        pipe.enable_model_cpu_offload()
    else:
        pipe.cuda()
    pipe.load_ip_adapter_instantid(face_adapter)
    pipe.enable_xformers_memory_efficient_attention()

    if args.lcm:
        pipe.load_lora_weights('latent-consistency/lcm-lora-sdxl')
        pipe.fuse_lora()
        pipe.scheduler = LCMScheduler.from_config(pipe.scheduler.config)
        args.steps = min(args.steps, 8)
        args.guidance_scale = min(args.guidance_scale, 1.5)

    face_image = load_image(args.face_image)
    face_image = resize_img(face_image)

    face_info = app.get(cv2.cvtColor(np.array(face_image), cv2.COLOR_RGB2BGR))
    if len(face_info) == 0:
        raise SystemExit(f'no face found in {args.face_image}')
    face_info = largest_face(face_info)
    face_emb = face_info['embedding']

    if args.pose_image is not None:
        pose_image = resize_img(load_image(args.pose_image))
        pose_info = app.get(cv2.cvtColor(np.array(pose_image), cv2.COLOR_RGB2BGR))
        if len(pose_info) == 0:
            raise SystemExit(f'no face found in {args.pose_image}')
        face_kps = draw_kps(pose_image, largest_face(pose_info)['kps'])
    else:
        face_kps = draw_kps(face_image, face_info['kps'])

    generator = torch.Generator(device="cuda").manual_seed(args.seed)

    images = pipe(
        prompt=args.prompt,
        negative_prompt=args.negative_prompt,
        image_embeds=face_emb,
        image=face_kps,
        controlnet_conditioning_scale=args.identitynet_strength,
        ip_adapter_scale=args.adapter_strength,
        num_inference_steps=args.steps,
        guidance_scale=args.guidance_scale,
        num_images_per_prompt=args.num_images,
        generator=generator,
    ).images

    for i, image in enumerate(images):
        image.save(os.path.join(args.output_dir, f'result_{args.seed}_{i}.jpg'))
    print(f'saved {len(images)} image(s) to {args.output_dir}')

    del pipe
    torch.cuda.empty_cache()
