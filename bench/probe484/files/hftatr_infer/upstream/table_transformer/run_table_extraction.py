#!/usr/bin/env python
"""End-to-end table extraction with the Hugging Face port of Table Transformer (TATR).

1. detect tables on a page with `microsoft/table-transformer-detection`
2. crop each table and recognise rows / columns with
   `microsoft/table-transformer-structure-recognition-v1.1-all`
3. OCR every cell with EasyOCR and write one CSV per table

Example:
    python run_table_extraction.py --image page.png --out out/ --fp16
"""
import argparse
import csv
import os

import numpy as np
import torch
from PIL import Image
from torchvision import transforms
from transformers import AutoModelForObjectDetection

import easyocr

device = "cuda" if torch.cuda.is_available() else "cpu"


class MaxResize(object):
    def __init__(self, max_size=800):
        self.max_size = max_size

    def __call__(self, image):
        width, height = image.size
        current_max_size = max(width, height)
        scale = self.max_size / current_max_size
        return image.resize((int(round(scale * width)), int(round(scale * height))))


detection_transform = transforms.Compose([
    MaxResize(800),
    transforms.ToTensor(),
    transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
])

structure_transform = transforms.Compose([
    MaxResize(1000),
    transforms.ToTensor(),
    transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
])


def box_cxcywh_to_xyxy(x):
    x_c, y_c, w, h = x.unbind(-1)
    b = [(x_c - 0.5 * w), (y_c - 0.5 * h), (x_c + 0.5 * w), (y_c + 0.5 * h)]
    return torch.stack(b, dim=1)


def rescale_bboxes(out_bbox, size):
    img_w, img_h = size
    b = box_cxcywh_to_xyxy(out_bbox)
    return b * torch.tensor([img_w, img_h, img_w, img_h], dtype=torch.float32)


def outputs_to_objects(outputs, img_size, id2label):
    m = outputs.logits.softmax(-1).max(-1)
    pred_labels = list(m.indices.detach().cpu().numpy())[0]
    pred_scores = list(m.values.detach().cpu().numpy())[0]
    pred_bboxes = outputs['pred_boxes'].detach().cpu()[0]
    pred_bboxes = [elem.tolist() for elem in rescale_bboxes(pred_bboxes, img_size)]

    objects = []
    for label, score, bbox in zip(pred_labels, pred_scores, pred_bboxes):
        class_label = id2label[int(label)]
        if not class_label == 'no object':
            objects.append({'label': class_label, 'score': float(score),
                            'bbox': [float(elem) for elem in bbox]})
    return objects


def objects_to_crops(img, objects, thresholds, padding=10):
    crops = []
    for obj in objects:
        if obj['score'] < thresholds.get(obj['label'], 0.5):
            continue
        x0, y0, x1, y1 = obj['bbox']
        crop = img.crop((x0 - padding, y0 - padding, x1 + padding, y1 + padding))
        if obj['label'] == 'table rotated':
            crop = crop.rotate(270, expand=True)
        crops.append(crop)
    return crops


def get_cell_coordinates_by_row(table_data):
    rows = [entry for entry in table_data if entry['label'] == 'table row']
    columns = [entry for entry in table_data if entry['label'] == 'table column']
    rows.sort(key=lambda x: x['bbox'][1])
    columns.sort(key=lambda x: x['bbox'][0])

    cell_coordinates = []
    for row in rows:
        row_cells = []
        for column in columns:
            cell_bbox = [column['bbox'][0], row['bbox'][1], column['bbox'][2], row['bbox'][3]]
            row_cells.append({'column': column['bbox'], 'cell': cell_bbox})
        row_cells.sort(key=lambda x: x['column'][0])
        cell_coordinates.append({'row': row['bbox'], 'cells': row_cells, 'cell_count': len(row_cells)})
    cell_coordinates.sort(key=lambda x: x['row'][1])
    return cell_coordinates


def apply_ocr(reader, cell_coordinates, cropped_table):
    data = []
    max_num_columns = 0
    for row in cell_coordinates:
        row_text = []
        for cell in row["cells"]:
            cell_image = np.array(cropped_table.crop(cell["cell"]))
            result = reader.readtext(cell_image)
            if len(result) > 0:
                text = " ".join([x[1] for x in result])
                row_text.append(text)
            else:
                row_text.append("")
        max_num_columns = max(max_num_columns, len(row_text))
        data.append(row_text)

    # pad rows which don't have max_num_columns elements
    for row in data:
        if len(row) != max_num_columns:
            row.extend([""] * (max_num_columns - len(row)))
    return data


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--image", required=True)
    p.add_argument("--out", default="out")
    p.add_argument("--det-model", default="microsoft/table-transformer-detection")
    p.add_argument("--str-model", default="microsoft/table-transformer-structure-recognition-v1.1-all")
    p.add_argument("--fp16", action="store_true", help="run both models in half precision on the GPU")
    p.add_argument("--languages", nargs="+", default=["en"])
    return p.parse_args()


def main():
    args = parse_args()
    os.makedirs(args.out, exist_ok=True)

    det_model = AutoModelForObjectDetection.from_pretrained(args.det_model, revision="no_timm")
    det_model.to(device)
    str_model = AutoModelForObjectDetection.from_pretrained(args.str_model)
    str_model.to(device)
    if args.fp16 and device == "cuda":
        det_model.half()
        str_model.half()
    dtype = torch.float16 if args.fp16 and device == "cuda" else torch.float32
    print(f"Models loaded on {device} ({dtype})")

    det_id2label = dict(det_model.config.id2label)
    det_id2label[len(det_id2label)] = "no object"
    str_id2label = dict(str_model.config.id2label)
    str_id2label[len(str_id2label)] = "no object"

    reader = easyocr.Reader(args.languages, gpu=True)

    image = Image.open(args.image).convert("RGB")
    pixel_values = detection_transform(image).unsqueeze(0).to(device, dtype=dtype)
    with torch.no_grad():
        outputs = det_model(pixel_values)
    outputs.logits = outputs.logits.float()
    outputs["pred_boxes"] = outputs["pred_boxes"].float()
    objects = outputs_to_objects(outputs, image.size, det_id2label)
    crops = objects_to_crops(image, objects, {"table": 0.5, "table rotated": 0.5})
    print(f"{len(crops)} table(s) detected")

    for t, crop in enumerate(crops):
        pixel_values = structure_transform(crop).unsqueeze(0).to(device, dtype=dtype)
        with torch.no_grad():
            outputs = str_model(pixel_values)
        outputs.logits = outputs.logits.float()
        outputs["pred_boxes"] = outputs["pred_boxes"].float()
        cells = outputs_to_objects(outputs, crop.size, str_id2label)
        cell_coordinates = get_cell_coordinates_by_row(cells)
        data = apply_ocr(reader, cell_coordinates, crop)

        out_path = os.path.join(args.out, f"table_{t}.csv")
        with open(out_path, "w", newline="") as f:
            csv.writer(f).writerows(data)
        crop.save(os.path.join(args.out, f"table_{t}.png"))
        print(f"wrote {out_path} ({len(data)} rows)")

    if device == "cuda":
        print(f"peak GPU memory: {torch.cuda.max_memory_allocated() / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
