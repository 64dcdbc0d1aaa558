# Copyright (c) Microsoft Corporation. All rights reserved.
# Licensed under the MIT License.

"""
Base classifier for timm-backed species classifiers (Amazon, Serengeti, DeepFaune, ...).

Each subclass defines CLASS_NAMES, IMAGE_SIZE and the backbone name and provides a
checkpoint URL; this class handles loading, preprocessing and batched inference on
crops produced by a detector.
"""

import os
from collections import OrderedDict

import numpy as np
from PIL import Image
from tqdm import tqdm

import timm
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.hub import load_state_dict_from_url
from torch.utils.data import DataLoader

from ..base_classifier import BaseClassifierInference
from ....data import transforms as pw_trans
from ....data import datasets as pw_data


class TIMM_BaseClassifierInference(BaseClassifierInference):
    """
    Base inference class for timm-based classifiers.
    """

    BACKBONE = None
    MODEL_NAME = None
    IMAGE_SIZE = None
    CLASS_NAMES = None

    def __init__(self, weights=None, device="cpu", url=None, transform=None, weights_key="state_dict"):
        """
        Args:
            weights (str, optional): path to a local checkpoint.
            device (str, optional): device string ("cpu", "cuda", "cuda:1", ...).
            url (str, optional): checkpoint URL, used when weights is None.
            transform (callable, optional): image transform; defaults to the classification transform.
            weights_key (str): key of the state dict inside the checkpoint.
        """
        super(TIMM_BaseClassifierInference, self).__init__()
        self.device = device
        self.num_cls = len(self.CLASS_NAMES)

        self.model = timm.create_model(self.BACKBONE, pretrained=False, num_classes=self.num_cls,
                                       dynamic_img_size=True)

        if weights:
            checkpoint = torch.load(weights, map_location=torch.device(self.device))
        elif url:
            checkpoint = load_state_dict_from_url(url, map_location=torch.device(self.device))
        else:
            raise Exception("Need weights for inference.")

        state_dict = checkpoint[weights_key] if weights_key in checkpoint else checkpoint
        state_dict = OrderedDict((k.replace("module.", "").replace("base_model.", ""), v)
                                 for k, v in state_dict.items())
        missing, unexpected = self.model.load_state_dict(state_dict, strict=False)
        if missing:
            print("Missing keys when loading {}: {}".format(self.MODEL_NAME, missing[:10]))
        if unexpected:
            print("Unexpected keys when loading {}: {}".format(self.MODEL_NAME, unexpected[:10]))

        self.model.to(self.device)
        self.model.eval()

        # cudnn autotuner helps a lot for the fixed-size crops we feed in
        if "cuda" in str(self.device):
            torch.backends.cudnn.benchmark = True

        if transform:
            self.transform = transform
        else:
            self.transform = pw_trans.Classification_Inference_Transform(target_size=self.IMAGE_SIZE)

    def results_generation(self, logits, img_ids, id_strip=None):
        """
        Turn a batch of logits into per-image results.
        """
        probs = torch.softmax(logits, dim=1)
        confs, preds = probs.max(dim=1)
        results = []
        for pred, conf, img_id, prob in zip(preds.tolist(), confs.tolist(), img_ids, probs.cpu().numpy()):
            r = {"img_id": str(img_id).strip(id_strip) if id_strip else str(img_id)}
            r["prediction"] = self.CLASS_NAMES[pred]
            r["class_id"] = pred
            r["confidence"] = conf
            r["all_confidences"] = {self.CLASS_NAMES[i]: float(p) for i, p in enumerate(prob)}
            results.append(r)
        return results

    def single_image_classification(self, img, img_id=None, id_strip=None):
        """
        Classify one image (path or ndarray).
        """
        if type(img) == str:
            img = Image.open(img).convert("RGB")
        else:
            img = Image.fromarray(img)
        img = self.transform(img)
        with torch.no_grad():
            logits = self.model(img.unsqueeze(0).to(self.device))
        return self.results_generation(logits.cpu(), [img_id])[0]

    def batch_image_classification(self, data_path=None, det_results=None, id_strip=None,
                                   batch_size=32, num_workers=4, half=None):
        """
        Classify crops. Either pass a folder of crops (data_path) or the detection results from a
        PytorchWildlife detector (det_results), in which case crops are taken on the fly.
        """
        if data_path:
            dataset = pw_data.ImageFolder(data_path, transform=self.transform)
        elif det_results:
            dataset = pw_data.DetectionCrops(det_results, transform=self.transform)
        else:
            raise Exception("Need data for inference.")

        dataloader = DataLoader(dataset, batch_size=batch_size, shuffle=False,
                                num_workers=num_workers, pin_memory=True, drop_last=False)

        # Default to fp16 on GPU; the classifiers were validated in fp16
        if half is None:
            half = torch.cuda.is_available() and str(self.device) != "cpu"
        if half:
            self.model.half()

        total_logits = []
        total_paths = []

        with tqdm(total=len(dataloader)) as pbar:
            for batch in dataloader:
                imgs, paths = batch[0], batch[1]
                imgs = imgs.to(self.device, non_blocking=True)
                if half:
                    imgs = imgs.half()
                with torch.no_grad():
                    logits = self.model(imgs)
                total_logits.append(logits.float().cpu())
                total_paths.extend(paths)
                pbar.update(1)

        total_logits = torch.cat(total_logits, dim=0)
        return self.results_generation(total_logits, total_paths, id_strip=id_strip)
