"""Multi-image / video chat with an InternVL-style model.

Images are tiled dynamically (up to 12 tiles of 448x448 plus a thumbnail) and fed to the
vision tower; large checkpoints are split layer-wise over all visible GPUs, with the vision
tower, embeddings and output head on GPU 0.
"""
import argparse
import math
import os

import numpy as np
import torch
import torchvision.transforms as T
from decord import VideoReader, cpu
from PIL import Image
from torchvision.transforms.functional import InterpolationMode
from transformers import AutoConfig, AutoModel, AutoTokenizer

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)

torch.backends.cuda.matmul.allow_tf32 = True


def build_transform(input_size: int):
    return T.Compose([
        T.Lambda(lambda img: img.convert("RGB") if img.mode != "RGB" else img),
        T.Resize((input_size, input_size), interpolation=InterpolationMode.BICUBIC),
        T.ToTensor(),
        T.Normalize(mean=IMAGENET_MEAN, std=IMAGENET_STD),
    ])


def find_closest_aspect_ratio(aspect_ratio, target_ratios, width, height, image_size):
    best_ratio_diff = float("inf")
    best_ratio = (1, 1)
    area = width * height
    for ratio in target_ratios:
        target_aspect_ratio = ratio[0] / ratio[1]
        ratio_diff = abs(aspect_ratio - target_aspect_ratio)
        if ratio_diff < best_ratio_diff:
            best_ratio_diff = ratio_diff
            best_ratio = ratio
        elif ratio_diff == best_ratio_diff:
            if area > 0.5 * image_size * image_size * ratio[0] * ratio[1]:
                best_ratio = ratio
    return best_ratio


def dynamic_preprocess(image, min_num=1, max_num=12, image_size=448, use_thumbnail=False):
    orig_width, orig_height = image.size
    aspect_ratio = orig_width / orig_height
    target_ratios = sorted(
        {(i, j) for n in range(min_num, max_num + 1) for i in range(1, n + 1) for j in range(1, n + 1)
         if min_num <= i * j <= max_num},
        key=lambda x: x[0] * x[1],
    )
    target_aspect_ratio = find_closest_aspect_ratio(aspect_ratio, target_ratios, orig_width, orig_height, image_size)
    target_width = image_size * target_aspect_ratio[0]
    target_height = image_size * target_aspect_ratio[1]
    blocks = target_aspect_ratio[0] * target_aspect_ratio[1]
    resized_img = image.resize((target_width, target_height))
    processed_images = []
    for i in range(blocks):
        box = (
            (i % (target_width // image_size)) * image_size,
            (i // (target_width // image_size)) * image_size,
            ((i % (target_width // image_size)) + 1) * image_size,
            ((i // (target_width // image_size)) + 1) * image_size,
        )
        processed_images.append(resized_img.crop(box))
    if use_thumbnail and len(processed_images) != 1:
        processed_images.append(image.resize((image_size, image_size)))
    return processed_images


def load_image(image_file, input_size=448, max_num=12):
    image = Image.open(image_file).convert("RGB")
    transform = build_transform(input_size=input_size)
    images = dynamic_preprocess(image, image_size=input_size, use_thumbnail=True, max_num=max_num)
    return torch.stack([transform(im) for im in images])


def get_frame_indices(bound, fps, max_frame, first_idx=0, num_segments=32):
    if bound:
        start, end = bound[0], bound[1]
    else:
        start, end = -100000, 100000
    start_idx = max(first_idx, round(start * fps))
    end_idx = min(round(end * fps), max_frame)
    seg_size = float(end_idx - start_idx) / num_segments
    return np.array([int(start_idx + (seg_size / 2) + np.round(seg_size * idx)) for idx in range(num_segments)])


def load_video(video_path, bound=None, input_size=448, max_num=1, num_segments=32):
    vr = VideoReader(video_path, ctx=cpu(0), num_threads=1)
    max_frame = len(vr) - 1
    fps = float(vr.get_avg_fps())
    pixel_values_list, num_patches_list = [], []
    transform = build_transform(input_size=input_size)
    for frame_index in get_frame_indices(bound, fps, max_frame, first_idx=0, num_segments=num_segments):
        img = Image.fromarray(vr[frame_index].asnumpy()).convert("RGB")
        tiles = dynamic_preprocess(img, image_size=input_size, use_thumbnail=True, max_num=max_num)
        pv = torch.stack([transform(tile) for tile in tiles])
        num_patches_list.append(pv.shape[0])
        pixel_values_list.append(pv)
    return torch.cat(pixel_values_list), num_patches_list


def split_model(model_path: str):
    device_map = {}
    world_size = torch.cuda.device_count()
    config = AutoConfig.from_pretrained(model_path, trust_remote_code=True)
    num_layers = config.llm_config.num_hidden_layers
    # GPU 0 also hosts the ViT: treat it as half a GPU
    num_layers_per_gpu = math.ceil(num_layers / (world_size - 0.5))
    num_layers_per_gpu = [num_layers_per_gpu] * world_size
    num_layers_per_gpu[0] = math.ceil(num_layers_per_gpu[0] * 0.5)
    layer_cnt = 0
    for i, num_layer in enumerate(num_layers_per_gpu):
        for _ in range(num_layer):
            device_map[f"language_model.model.layers.{layer_cnt}"] = i
            layer_cnt += 1
    for name in ("vision_model", "mlp1", "language_model.model.tok_embeddings", "language_model.model.embed_tokens",
                 "language_model.output", "language_model.model.norm", "language_model.model.rotary_emb",
                 "language_model.lm_head"):
        device_map[name] = 0
    device_map[f"language_model.model.layers.{num_layers - 1}"] = 0
    return device_map


def load_model(path: str, multi_gpu: bool):
    kwargs = dict(torch_dtype=torch.bfloat16, low_cpu_mem_usage=True, use_flash_attn=True, trust_remote_code=True)
    if multi_gpu:
        model = AutoModel.from_pretrained(path, device_map=split_model(path), **kwargs).eval()
    else:
        model = AutoModel.from_pretrained(path, **kwargs).eval().cuda()
    tokenizer = AutoTokenizer.from_pretrained(path, trust_remote_code=True, use_fast=False)
    return model, tokenizer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="OpenGVLab/InternVL2_5-8B")
    parser.add_argument("--images", nargs="*", default=[])
    parser.add_argument("--video", default=None)
    parser.add_argument("--multi-gpu", action="store_true")
    parser.add_argument("--max-tiles", type=int, default=12)
    args = parser.parse_args()

    model, tokenizer = load_model(args.model, args.multi_gpu)
    generation_config = dict(max_new_tokens=1024, do_sample=False)

    history = None
    if args.images:
        tiles = [load_image(p, max_num=args.max_tiles) for p in args.images]
        num_patches_list = [t.size(0) for t in tiles]
        pixel_values = torch.cat(tiles, dim=0).to(torch.bfloat16).cuda()
        prefix = "".join(f"Image-{i + 1}: <image>\n" for i in range(len(tiles)))
        question = prefix + "Describe the images in detail."
        response, history = model.chat(tokenizer, pixel_values, question, generation_config,
                                       num_patches_list=num_patches_list, history=None, return_history=True)
        print(f"User: {question}\nAssistant: {response}")
        question = "What are the similarities and differences between these images?"
        response, history = model.chat(tokenizer, pixel_values, question, generation_config,
                                       num_patches_list=num_patches_list, history=history, return_history=True)
        print(f"User: {question}\nAssistant: {response}")

    if args.video:
        pixel_values, num_patches_list = load_video(args.video, num_segments=8, max_num=1)
        pixel_values = pixel_values.to(torch.bfloat16).to(model.device)
        video_prefix = "".join(f"Frame{i + 1}: <image>\n" for i in range(len(num_patches_list)))
        question = video_prefix + "What is happening in this video?"
        response = model.chat(tokenizer, pixel_values, question, generation_config,
                              num_patches_list=num_patches_list, history=None)
        print(f"User: {question}\nAssistant: {response}")

    torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
