"""Score a folder of generated images against their prompts with PickScore.

    python scripts/score_images.py --images-dir outputs/sdxl --prompts prompts.json --out scores.json

Prompts file: json mapping image file name -> prompt.
"""
import argparse
import json
import os

import torch
from PIL import Image
from tqdm import tqdm
from transformers import AutoProcessor, AutoModel

# load model
device = "cuda"
processor_name_or_path = "laion/CLIP-ViT-H-14-laion2B-s32B-b79K"
model_pretrained_name_or_path = "yuvalkirstain/PickScore_v1"

processor = AutoProcessor.from_pretrained(processor_name_or_path)
model = AutoModel.from_pretrained(model_pretrained_name_or_path).eval().to(device)


@torch.no_grad()
def calc_probs(prompt, images):
    # preprocess
    image_inputs = processor(
        images=images,
        padding=True,
        truncation=True,
        max_length=77,
        return_tensors="pt",
    ).to(device)

    text_inputs = processor(
        text=prompt,
        padding=True,
        truncation=True,
        max_length=77,
        return_tensors="pt",
    ).to(device)

    # embed
    image_embs = model.get_image_features(**image_inputs)
    image_embs = image_embs / torch.norm(image_embs, dim=-1, keepdim=True)

    text_embs = model.get_text_features(**text_inputs)
    text_embs = text_embs / torch.norm(text_embs, dim=-1, keepdim=True)

    # score
    scores = model.logit_scale.exp() * (text_embs @ image_embs.T)[0]

    # get probabilities if you have multiple images to choose from
    probs = torch.softmax(scores, dim=-1)

    return probs.cpu().tolist(), scores.cpu().tolist()


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--images-dir", required=True)
    parser.add_argument("--prompts", required=True, help="json: {file_name: prompt}")
    parser.add_argument("--out", default="pickscore.json")
    parser.add_argument("--batch-size", type=int, default=16)
    return parser.parse_args()


def main():
    args = parse_args()
    with open(args.prompts) as f:
        prompts = json.load(f)

    # group images that share a prompt so that probs are comparable
    by_prompt = {}
    for file_name, prompt in prompts.items():
        by_prompt.setdefault(prompt, []).append(file_name)

    results = {}
    for prompt, file_names in tqdm(by_prompt.items(), desc="PickScore"):
        for start in range(0, len(file_names), args.batch_size):
            chunk = file_names[start:start + args.batch_size]
            images = [Image.open(os.path.join(args.images_dir, fn)).convert("RGB") for fn in chunk]
            probs, scores = calc_probs(prompt, images)
            for fn, p, s in zip(chunk, probs, scores):
                results[fn] = {"prompt": prompt, "score": s, "prob": p}

    mean_score = sum(r["score"] for r in results.values()) / max(len(results), 1)
    print(f"scored {len(results)} images, mean PickScore = {mean_score:.4f}")
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
