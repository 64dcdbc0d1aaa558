# Copyright (c) Microsoft Corporation. All rights reserved.
# Licensed under the MIT License.

""" Demo for image detection"""

#%%
# Importing necessary basic libraries and modules
import argparse
import os

import numpy as np
from PIL import Image
import supervision as sv

#%%
# PyTorch imports
import torch
from torch.utils.data import DataLoader

#%%
# Importing the model, dataset, transformations and utility functions from PytorchWildlife
from PytorchWildlife.models import detection as pw_detection
from PytorchWildlife.data import transforms as pw_trans
from PytorchWildlife.data import datasets as pw_data
from PytorchWildlife import utils as pw_utils

#%%
# Setting the device to use for computations ('cuda' indicates GPU)
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
if DEVICE == "cuda":
    torch.cuda.set_device(0)


def parse_args():
    parser = argparse.ArgumentParser(description="PytorchWildlife image detection demo")
    parser.add_argument("--image", default=os.path.join(".", "demo_data", "imgs", "10050028_0.JPG"),
                        help="single image to run on")
    parser.add_argument("--folder", default=os.path.join(".", "demo_data", "imgs"),
                        help="folder of images for batch detection")
    parser.add_argument("--output", default=os.path.join(".", "demo_output"),
                        help="where annotated images and json go")
    parser.add_argument("--version", default="MDV6-yolov10-e",
                        choices=["MDV6-yolov9-c", "MDV6-yolov9-e", "MDV6-yolov10-c",
                                 "MDV6-yolov10-e", "MDV6-rtdetr-c"],
                        help="MegaDetector V6 variant")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--conf", type=float, default=0.2,
                        help="confidence threshold for saving crops and the filtered json")
    return parser.parse_args()


def main():
    args = parse_args()
    os.makedirs(args.output, exist_ok=True)

    #%%
    # Initializing the MegaDetectorV6 model for image detection
    # Valid versions are MDV6-yolov9-c, MDV6-yolov9-e, MDV6-yolov10-c, MDV6-yolov10-e or MDV6-rtdetr-c
    detection_model = pw_detection.MegaDetectorV6(device=DEVICE, pretrained=True, version=args.version)

    # Uncomment the following line to use MegaDetectorV5 instead of MegaDetectorV6
    # detection_model = pw_detection.MegaDetectorV5(device=DEVICE, pretrained=True, version="a")

    #%% Single image detection
    # Performing the detection on the single image
    results = detection_model.single_image_detection(args.image)

    # Saving the detection results
    pw_utils.save_detection_images(results, os.path.join(args.output, "single"), overwrite=False)

    #%% Batch detection
    """ Batch-detection demo """
    # Performing batch detection on the images
    results = detection_model.batch_image_detection(args.folder, batch_size=args.batch_size)

    #%% Output to annotated images
    # Saving the batch detection results as annotated images
    pw_utils.save_detection_images(results, os.path.join(args.output, "batch"), args.folder, overwrite=False)

    #%% Output to cropped images
    # Saving the detected objects as cropped images
    pw_utils.save_crop_images(results, os.path.join(args.output, "crops"), args.folder, overwrite=False)

    #%% Output to JSON results
    # Saving the detection results in JSON format
    pw_utils.save_detection_json(results, os.path.join(args.output, "batch_output.json"),
                                 categories=detection_model.CLASS_NAMES,
                                 exclude_category_ids=[],  # Category IDs can be found in the definition of each model.
                                 exclude_file_path=None)

    # Separate the positive and negative detections through file copying:
    pw_utils.detection_folder_separation(os.path.join(args.output, "batch_output.json"),
                                         args.folder, os.path.join(args.output, "separated"),
                                         confidence_threshold=args.conf)

    # Saving the detection results in timelapse JSON format
    pw_utils.save_detection_timelapse_json(results, os.path.join(args.output, "batch_output_timelapse.json"),
                                           categories=detection_model.CLASS_NAMES,
                                           exclude_category_ids=[],
                                           exclude_file_path=args.folder,
                                           info={"detector": args.version})

    n_animals = sum(int((r["detections"].class_id == 0).sum()) for r in results)
    print(f"Ran {args.version} on {len(results)} images using {DEVICE}: {n_animals} animal boxes")


if __name__ == "__main__":
    main()
