# Copyright (c) Microsoft Corporation. All rights reserved.
# Licensed under the MIT License.

""" Gradio Demo for image detection and classification"""

# Importing necessary basic libraries and modules
import os
import shutil
import time
from zipfile import ZipFile

# PyTorch imports
import torch
from torch.utils.data import DataLoader

# Importing the model, dataset, transformations and utility functions from PytorchWildlife
from PytorchWildlife.models import detection as pw_detection
from PytorchWildlife.models import classification as pw_classification
from PytorchWildlife.data import transforms as pw_trans
from PytorchWildlife.data import datasets as pw_data
from PytorchWildlife import utils as pw_utils

# Importing the utility functions
import gradio as gr
import numpy as np
import supervision as sv
from PIL import Image

# Setting the device to use for computations ('cuda' indicates GPU)
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"

# Initializing a supervision box annotator for visualizing detections
dot_annotator = sv.DotAnnotator(radius=6)
box_annotator = sv.BoxAnnotator(thickness=4)
lab_annotator = sv.LabelAnnotator(text_color=sv.Color.BLACK, text_thickness=4, text_scale=2)

# Create a temp folder
os.makedirs(os.path.join("..", "temp"), exist_ok=True)  # ASK: Why do we need this?

# Initializing the detection and classification models
detection_model = None
classification_model = None


# Defining functions for different detection scenarios
def load_models(det, version, clf=None, wpath=None, wclass=None):
    """
    Load the detection and classification models (swapping out whatever is loaded).

    Args:
        det (str): detector family, e.g. "MegaDetectorV6" or "MegaDetectorV5"
        version (str): detector version string
        clf (str, optional): classifier name
    """
    global detection_model, classification_model

    # Free the previous models before loading new ones; the 24GB cards on the
    # demo box can't hold two MDv6-e plus a classifier.
    if detection_model is not None:
        del detection_model
        detection_model = None
    if classification_model is not None:
        del classification_model
        classification_model = None
    if DEVICE != "cpu":
        torch.cuda.empty_cache()
        torch.cuda.ipc_collect()

    if det == "MegaDetectorV6":
        detection_model = pw_detection.MegaDetectorV6(device=DEVICE, pretrained=True, version=version)
    elif det == "HerdNet general":
        detection_model = pw_detection.HerdNet(device=DEVICE, version="general")
    else:
        detection_model = pw_detection.__dict__[det](device=DEVICE, pretrained=True)

    if clf == "AI4GOpossum":
        classification_model = pw_classification.AI4GOpossum(device=DEVICE, pretrained=True)
    elif clf == "AI4GAmazonRainforest":
        classification_model = pw_classification.AI4GAmazonRainforest(device=DEVICE, pretrained=True)
    elif clf == "DFNE":
        classification_model = pw_classification.DFNE(device=DEVICE)
    elif clf == "CustomWeights":
        classification_model = pw_classification.CustomWeights(weights=wpath, class_names=wclass, device=DEVICE)
    else:
        classification_model = None

    if detection_model is not None and DEVICE != "cpu":
        used = torch.cuda.memory_allocated() / 2 ** 30
        total = torch.cuda.get_device_properties(0).total_memory / 2 ** 30
        return "Loaded {} ({}) and {} on {} [{:.1f}/{:.1f} GiB]".format(
            det, version, clf, torch.cuda.get_device_name(0), used, total)
    return "Loaded {} ({}) and {} on CPU".format(det, version, clf)


def single_image_detection(input_img, det_conf_thres, clf_conf_thres, img_index=None):
    """Performs detection on a single image and returns an annotated image.

    Args:
        input_img (PIL.Image): Input image in PIL.Image format defaulted by Gradio.
        det_conf_thres (float): Confidence threshold for detection.
        clf_conf_thres (float): Confidence threshold for classification.
        img_index: Image index identifier.
    Returns:
        annotated_img (PIL.Image.Image): Annotated image with bounding box instances.
    """
    input_img = np.array(input_img)

    # If the detection model is HerdNet, use dot annotator
    if isinstance(detection_model, pw_detection.HerdNet):
        results_det = detection_model.single_image_detection(input_img, img_path=img_index,
                                                             det_conf_thres=det_conf_thres)
        annotator = dot_annotator
    else:
        results_det = detection_model.single_image_detection(input_img, img_path=img_index,
                                                             det_conf_thres=det_conf_thres)
        annotator = box_annotator

    if classification_model is not None:
        labels = []
        for xyxy, det_id in zip(results_det["detections"].xyxy, results_det["detections"].class_id):
            # Only run the classifier on animal detections
            if det_id == 0:
                cropped_image = sv.crop_image(image=input_img, xyxy=xyxy)
                results_clf = classification_model.single_image_classification(cropped_image)
                if results_clf["confidence"] > clf_conf_thres:
                    labels.append("{} {:.2f}".format(results_clf["prediction"], results_clf["confidence"]))
                else:
                    labels.append("Unknown")
            else:
                labels.append(detection_model.CLASS_NAMES[det_id])
    else:
        labels = results_det["labels"]

    annotated_img = annotator.annotate(scene=input_img, detections=results_det["detections"])
    annotated_img = lab_annotator.annotate(scene=annotated_img, detections=results_det["detections"],
                                           labels=labels)
    return annotated_img


def batch_detection(zip_file, timelapse, det_conf_thres):
    """Perform detection on a batch of images from a zip file and return path to results JSON.

    Args:
        zip_file (File): Zip file containing images.
        det_conf_thres (float): Confidence threshold for detection.
        timelapse (boolean): Flag to output JSON for timelapse.
    Returns:
        json_save_path (str): Path to the JSON file containing detection results.
    """
    # Clean the temp folder if it contains files
    extract_path = os.path.join("..", "temp", "zip_upload")
    if os.path.exists(extract_path):
        shutil.rmtree(extract_path)
    os.makedirs(extract_path)

    json_save_path = os.path.join(extract_path, "results.json")
    with ZipFile(zip_file.name) as zfile:
        zfile.extractall(extract_path)
        # Check the contents of the extracted folder
        extracted_files = os.listdir(extract_path)

    if len(extracted_files) == 1 and os.path.isdir(os.path.join(extract_path, extracted_files[0])):
        tgt_folder_path = os.path.join(extract_path, extracted_files[0])
    else:
        tgt_folder_path = extract_path

    t0 = time.time()
    det_results = detection_model.batch_image_detection(tgt_folder_path, batch_size=16,
                                                        det_conf_thres=det_conf_thres)
    if DEVICE == "cuda":
        torch.cuda.synchronize()
    print("Batch detection on {} images took {:.1f}s".format(len(det_results), time.time() - t0))

    if classification_model is not None:
        clf_dataset = pw_data.DetectionCrops(
            det_results,
            transform=pw_trans.Classification_Inference_Transform(target_size=224),
            path_head=tgt_folder_path
        )
        clf_loader = DataLoader(clf_dataset, batch_size=32, shuffle=False,
                                pin_memory=True, num_workers=4, drop_last=False)
        clf_results = classification_model.batch_image_classification(clf_loader, id_strip=tgt_folder_path)
        if timelapse:
            json_save_path = json_save_path.replace(".json", "_timelapse.json")
            pw_utils.save_detection_classification_timelapse_json(det_results=det_results,
                                                                  clf_results=clf_results,
                                                                  det_categories=detection_model.CLASS_NAMES,
                                                                  clf_categories=classification_model.CLASS_NAMES,
                                                                  output_path=json_save_path)
        else:
            pw_utils.save_detection_classification_json(det_results=det_results,
                                                        clf_results=clf_results,
                                                        det_categories=detection_model.CLASS_NAMES,
                                                        clf_categories=classification_model.CLASS_NAMES,
                                                        output_path=json_save_path)
    else:
        if timelapse:
            json_save_path = json_save_path.replace(".json", "_timelapse.json")
            pw_utils.save_detection_timelapse_json(det_results, json_save_path, detection_model.CLASS_NAMES)
        else:
            pw_utils.save_detection_json(det_results, json_save_path, detection_model.CLASS_NAMES)

    return json_save_path


# Building Gradio UI

with gr.Blocks() as demo:
    gr.Markdown("# Pytorch-Wildlife Demo.")
    gr.Markdown("Running on **{}**".format("GPU (CUDA)" if DEVICE == "cuda" else "CPU"))
    with gr.Row():
        det_drop = gr.Dropdown(
            ["MegaDetectorV6", "MegaDetectorV5", "HerdNet general"],
            label="Detection model",
            info="Will add more detection models!",
            value="MegaDetectorV6"
        )
        det_version = gr.Dropdown(
            ["MDV6-yolov9-c", "MDV6-yolov9-e", "MDV6-yolov10-c", "MDV6-yolov10-e", "MDV6-rtdetr-c"],
            label="Model version",
            value="MDV6-yolov10-e"
        )
        clf_drop = gr.Dropdown(
            ["None", "AI4GOpossum", "AI4GAmazonRainforest", "DFNE"],
            label="Classification model",
            value="None"
        )
    with gr.Column():
        load_but = gr.Button("Load Models!")
        load_out = gr.Text("NO MODEL LOADED!!", label="Loaded models:")

    with gr.Tab("Single Image Process"):
        with gr.Row():
            with gr.Column():
                sgl_in = gr.Image(type="pil")
                sgl_conf_sl_det = gr.Slider(0, 1, label="Detection Confidence Threshold", value=0.2)
                sgl_conf_sl_clf = gr.Slider(0, 1, label="Classification Confidence Threshold", value=0.7)
            sgl_out = gr.Image()
        sgl_but = gr.Button("Detect Animals!")
    with gr.Tab("Batch Image Process"):
        with gr.Row():
            with gr.Column():
                bth_in = gr.File(label="Upload zip file.")
                chck_timelapse = gr.Checkbox(label="Generate timelapse JSON", info="Timelapse format")
                bth_conf_sl = gr.Slider(0, 1, label="Detection Confidence Threshold", value=0.2)
            bth_out = gr.File(label="Detection Results JSON.", height=200)
        bth_but = gr.Button("Detect Animals!")

    load_but.click(load_models, inputs=[det_drop, det_version, clf_drop], outputs=load_out)
    sgl_but.click(single_image_detection, inputs=[sgl_in, sgl_conf_sl_det, sgl_conf_sl_clf], outputs=sgl_out)
    bth_but.click(batch_detection, inputs=[bth_in, chck_timelapse, bth_conf_sl], outputs=bth_out)

if __name__ == "__main__":
    demo.launch(share=True)
