"""Run a trained TableNet checkpoint on a document image and extract the tables with Tesseract.

    python predict.py --model_weights saved_models/densenet_config_4_model_checkpoint.pth.tar \
        --image_path samples/10.1.1.1.2006_3.bmp
"""
import argparse

import albumentations as A
import cv2
import numpy as np
import pandas as pd
import pytesseract
import torch
from albumentations.pytorch import ToTensorV2
from PIL import Image
from pytesseract import Output

import config
from tablenet.model import TableNet

TRANSFORM = A.Compose([
    A.Normalize(
        mean=[0.485, 0.456, 0.406],
        std=[0.229, 0.224, 0.225],
        max_pixel_value=255,
    ),
    ToTensorV2()
])


class Predict:
    def __init__(self, checkpoint_path, transforms, threshold=0.6, per=0.005):
        self.transforms = transforms
        self.threshold = threshold
        self.per = per

        self.model = TableNet(encoder=config.ENCODER, use_pretrained_model=False,
                              basemodel_requires_grad=False)
        self.model.eval()
        # checkpoints are always restored on the host first, then moved
        state = torch.load(checkpoint_path, map_location=torch.device('cpu'))
        self.model.load_state_dict(state['state_dict'])
        self.model.to(config.DEVICE)

    def predict(self, image):
        processed_image = self.transforms(image=image)["image"]
        table_out, column_out = self.model(processed_image.unsqueeze(0).to(config.DEVICE))
        table_out = torch.sigmoid(table_out)
        column_out = torch.sigmoid(column_out)

        # remove gradients and move to numpy
        table_out = (table_out.detach().cpu().numpy().squeeze(0).transpose(1, 2, 0) > self.threshold).astype(np.uint8)
        column_out = (column_out.detach().cpu().numpy().squeeze(0).transpose(1, 2, 0) > self.threshold).astype(np.uint8)

        contours, table_contours = self.get_contours(column_out, table_out)
        # draw boundaries of the detected tables on the resized image
        tables = []
        for table_box in table_contours:
            x, y, w, h = table_box
            tables.append(image[y:y + h, x:x + w])
        return tables

    def get_contours(self, column_image, table_image):
        segmented_tables = np.zeros_like(table_image)
        contours, _ = cv2.findContours(table_image, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        table_contours = []
        for c in contours:
            if cv2.contourArea(c) > (self.per * table_image.shape[0] * table_image.shape[1]):
                table_contours.append(c)
        if len(table_contours) == 0:
            print("No table detected")
            return [], []

        table_boundRect = [None] * len(table_contours)
        for i, c in enumerate(table_contours):
            polygon = cv2.approxPolyDP(c, 3, True)
            table_boundRect[i] = cv2.boundingRect(polygon)
        # table bounding box
        table_boundRect.sort()

        col_contours, _ = cv2.findContours(column_image, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        col_boundRect = []
        for c in col_contours:
            if cv2.contourArea(c) > config.MIN_COLUMN_AREA:
                col_boundRect.append(cv2.boundingRect(cv2.approxPolyDP(c, 3, True)))
        col_boundRect.sort()
        cv2.drawContours(segmented_tables, table_contours, -1, 255, -1)
        return col_boundRect, table_boundRect


def ocr_table(table_img):
    """Very small helper: Tesseract in sparse-text mode, lines grouped by their block/line ids."""
    gray = cv2.cvtColor(table_img, cv2.COLOR_RGB2GRAY)
    data = pytesseract.image_to_data(gray, output_type=Output.DICT, config='--psm 6')
    rows = {}
    for i, word in enumerate(data['text']):
        if not word.strip():
            continue
        key = (data['block_num'][i], data['par_num'][i], data['line_num'][i])
        rows.setdefault(key, []).append(word)
    return pd.DataFrame([' '.join(v) for _, v in sorted(rows.items())], columns=['text'])


def main():
    parser = argparse.ArgumentParser(description='TableNet inference')
    parser.add_argument('--model_weights', type=str, required=True, help='checkpoint produced by train.py')
    parser.add_argument('--image_path', type=str, required=True)
    parser.add_argument('--threshold', type=float, default=0.6)
    parser.add_argument('--save_csv', action='store_true')
    args = parser.parse_args()

    image = np.array(Image.open(args.image_path).convert('RGB').resize((1024, 1024)))
    predictor = Predict(args.model_weights, TRANSFORM, threshold=args.threshold)

    with torch.no_grad():
        tables = predictor.predict(image)

    print(f"Found {len(tables)} table(s) (device: {config.DEVICE})")
    for i, tbl in enumerate(tables):
        df = ocr_table(tbl)
        print(f"--- table {i} ---")
        print(df.to_string(index=False))
        if args.save_csv:
            df.to_csv(f"table_{i}.csv", index=False)


if __name__ == '__main__':
    main()
