import torch
from PIL import Image
from hpsv2.src.open_clip import create_model_and_transforms, get_tokenizer
import warnings
import argparse
import os
import requests
from clint.textui import progress
from typing import Union
import huggingface_hub
from hpsv2.utils import root_path, hps_version_map

warnings.filterwarnings("ignore", category=UserWarning)

model_dict = {}
model_name = "ViT-H-14"
device = 'cuda' if torch.cuda.is_available() else 'cpu'


def initialize_model():
    if not model_dict:
        model, preprocess_train, preprocess_val = create_model_and_transforms(
            model_name,
            'laion2B-s32B-b79K',
            precision='amp',
            device=device,
            jit=False,
            force_quick_gelu=False,
            force_custom_text=False,
            force_patch_dropout=False,
            force_image_size=None,
            pretrained_image=False,
            image_mean=None,
            image_std=None,
            light_augmentation=True,
            aug_cfg={},
            output_dict=True,
            with_score_predictor=False,
            with_region_predictor=False
        )
        model_dict['model'] = model
        model_dict['preprocess_val'] = preprocess_val


def _load_image(img, preprocess_val):
    if isinstance(img, str):
        img = Image.open(img)
    elif not isinstance(img, Image.Image):
        raise TypeError('The type of parameter img_path is illegal.')
    return preprocess_val(img).unsqueeze(0).to(device=device, non_blocking=True)


def _score_one(model, image, text):
    with torch.no_grad():
        # Calculate the HPS
        with torch.cuda.amp.autocast():
            outputs = model(image, text)
            image_features, text_features = outputs["image_features"], outputs["text_features"]
            logits_per_image = image_features @ text_features.T

            hps_score = torch.diagonal(logits_per_image).cpu().numpy()
    return hps_score[0]


def score(img_path: Union[list, str, Image.Image], prompt: str, cp: str = None, hps_version: str = "v2.0") -> list:

    initialize_model()
    model = model_dict['model']
    preprocess_val = model_dict['preprocess_val']

    # check if the checkpoint exists
    if not os.path.exists(root_path):
        os.makedirs(root_path)
    if cp is None:
        cp = huggingface_hub.hf_hub_download("xswu/HPSv2", hps_version_map[hps_version])

    checkpoint = torch.load(cp, map_location=device)
    model.load_state_dict(checkpoint['state_dict'])
    tokenizer = get_tokenizer(model_name)
    model = model.to(device)
    model.eval()

    text = tokenizer([prompt]).to(device=device, non_blocking=True)

    if isinstance(img_path, list):
        result = []
        for one_img_path in img_path:
            image = _load_image(one_img_path, preprocess_val)
            result.append(_score_one(model, image, text))
        return result
    elif isinstance(img_path, (str, Image.Image)):
        image = _load_image(img_path, preprocess_val)
        return [_score_one(model, image, text)]
    else:
        raise TypeError('The type of parameter img_path is illegal.')


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--image-path', nargs='+', type=str, required=True, help='Path to the input image')
    parser.add_argument('--prompt', type=str, required=True, help='Text prompt')
    parser.add_argument('--checkpoint', type=str, default=None, help='Path to the model checkpoint')
    parser.add_argument('--hps-version', type=str, default='v2.1', choices=['v2.0', 'v2.1'])

    args = parser.parse_args()

    hps_score = score(args.image_path, args.prompt, args.checkpoint, args.hps_version)
    print('HPSv2 score:', hps_score)
