import json
import os
import random

import torch
from PIL import Image
from torch.utils.data import Dataset
from qwen_vl_utils import process_vision_info

from .template.screenspot import _SCREENSPOT_SYSTEM, _SYSTEM_point, _SYSTEM_point_int

dataset_mapping = {
    "screenspot": "ScreenSpot",
    "screenspot_v2": "ScreenSpot-v2",
    "screenspot_pro": "ScreenSpot-Pro",
}


class ScreenSpotDataset(Dataset):
    """ScreenSpot grounding benchmark: (screenshot, instruction) -> click point inside the target bbox."""

    def __init__(
        self,
        dataset_dir,
        dataset="screenspot",
        json_data="hf_test_full",
        processor=None,
        inference=True,
        args_dict=None,
    ):
        self.dataset_dir = os.path.join(dataset_dir, dataset_mapping.get(dataset, dataset))
        self.processor = processor
        self.inference = inference
        self.args_dict = args_dict or {}
        self.xy_int = self.args_dict.get("xy_int", False)
        self.min_pixels = self.args_dict.get("min_pixels", 256 * 28 * 28)
        self.max_pixels = self.args_dict.get("max_pixels", 1344 * 28 * 28)

        META_DIR = os.path.join(self.dataset_dir, "metadata")
        self.IMG_DIR = os.path.join(self.dataset_dir, "images")
        with open(os.path.join(META_DIR, "{}.json".format(json_data))) as f:
            self.json_data = json.load(f)
        self.samples = self._flatten(self.json_data)
        print(f"Dataset: ScreenSpot; Split: {json_data}; # samples: {len(self.samples)}")

    @staticmethod
    def _flatten(json_data):
        samples = []
        for item in json_data:
            for element in item.get("element", [item]):
                samples.append({
                    "img_url": item["img_url"],
                    "img_size": item["img_size"],
                    "split": item.get("split", "web"),
                    "id": element.get("id", len(samples)),
                    "task": element["instruction"],
                    "bbox": element["bbox"],
                    "data_type": element.get("data_type", "text"),
                })
        return samples

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, idx):
        return self.get_sample(idx)

    def get_sample(self, idx):
        item = self.samples[idx]
        img_url = os.path.join(self.IMG_DIR, item["img_url"])
        image = Image.open(img_url).convert("RGB")
        img_size = image.size
        bbox = item["bbox"]
        if len(bbox) == 4 and bbox[2] > 1:
            # x1y1wh in pixels -> x1y1x2y2 normalised
            bbox = [bbox[0] / img_size[0], bbox[1] / img_size[1],
                    (bbox[0] + bbox[2]) / img_size[0], (bbox[1] + bbox[3]) / img_size[1]]

        if self.xy_int:
            system_prompt = _SCREENSPOT_SYSTEM + " " + _SYSTEM_point_int
        else:
            system_prompt = _SCREENSPOT_SYSTEM + " " + _SYSTEM_point

        source = [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": system_prompt},
                    {
                        "type": "image",
                        "image": img_url,
                        "min_pixels": self.min_pixels,
                        "max_pixels": self.max_pixels,
                    },
                    {"type": "text", "text": item["task"]},
                ],
            }
        ]

        prompt = self.processor.apply_chat_template(source, tokenize=False, add_generation_prompt=True)
        image_inputs, video_inputs = process_vision_info(source)
        data_dict = self.processor(
            text=[prompt],
            images=image_inputs,
            videos=video_inputs,
            padding=True,
            return_tensors="pt",
        )
        data_dict = dict(
            input_ids=data_dict["input_ids"][0],
            pixel_values=data_dict["pixel_values"],
            image_grid_thw=data_dict["image_grid_thw"],
            patch_assign=data_dict.get("patch_assign"),
            patch_pos=data_dict.get("patch_pos"),
            select_mask=data_dict.get("select_mask"),
        )
        data_dict["meta_data"] = {
            "split": item["split"],
            "data_type": item["data_type"],
            "id": item["id"],
            "img_url_abs": img_url,
            "task": item["task"],
            "bbox": bbox,
            "img_size": img_size,
        }
        return data_dict


def screenspot_collate(batch, pad_token_id):
    input_ids = torch.nn.utils.rnn.pad_sequence(
        [b["input_ids"] for b in batch], batch_first=True, padding_value=pad_token_id
    )
    attention_mask = input_ids.ne(pad_token_id)
    out = {
        "input_ids": input_ids,
        "attention_mask": attention_mask,
        "pixel_values": torch.cat([b["pixel_values"] for b in batch], dim=0),
        "image_grid_thw": torch.cat([b["image_grid_thw"] for b in batch], dim=0),
        "meta_data": [b["meta_data"] for b in batch],
    }
    for key in ("patch_assign", "patch_pos", "select_mask"):
        if batch[0].get(key) is not None:
            out[key] = torch.cat([b[key] for b in batch], dim=0)
    return out


def random_subset(samples, ratio, seed=42):
    rng = random.Random(seed)
    n = max(1, int(len(samples) * ratio))
    return rng.sample(samples, n)
