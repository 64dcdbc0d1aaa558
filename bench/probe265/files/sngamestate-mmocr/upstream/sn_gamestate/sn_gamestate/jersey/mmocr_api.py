import pandas as pd
import torch
import numpy as np
from mmocr.apis import TextRecInferencer, TextDetInferencer
import mmocr.utils.polygon_utils as polygon_utils

from tracklab.utils.collate import default_collate, Unbatchable
from tracklab.pipeline.detectionlevel_module import DetectionLevelModule

import logging

log = logging.getLogger(__name__)


class MMOCR(DetectionLevelModule):
    """Jersey number recognition on player crops: DBNet text detection followed by SAR text recognition."""

    input_columns = []
    output_columns = ["jersey_number_detection", "jersey_number_confidence"]
    collate_fn = default_collate

    def __init__(self, batch_size, device, tracking_dataset=None):
        super().__init__(batch_size=batch_size)
        self.device = device
        self.batch_size = batch_size
        # mmocr inferencers move themselves to `device`; mmcv ops (DBNet's
        # deformable conv is not used in the r18 config) are only needed on GPU
        self.textdetinferencer = TextDetInferencer(
            "dbnet_resnet18_fpnc_1200e_icdar2015", device=device
        )
        self.textrecinferencer = TextRecInferencer("SAR", device=device)
        log.info(f"MMOCR jersey number recognition running on {device}")

    def no_jersey_number(self):
        return [None, None, 0]

    @torch.no_grad()
    def preprocess(self, image, detection: pd.Series, metadata: pd.Series):
        l, t, r, b = detection.bbox.ltrb(
            image_shape=(image.shape[1], image.shape[0]), rounded=True
        )
        crop = image[t:b, l:r]
        if crop.shape[0] == 0 or crop.shape[1] == 0:
            crop = np.zeros((10, 10, 3), dtype=np.uint8)
        crop = Unbatchable([crop])
        batch = {
            "img": crop,
        }

        return batch

    def extract_numbers(self, text):
        number = ""
        for char in text:
            if char.isdigit():
                number += char
        return number if number != "" else None

    def choose_best_jersey_number(self, jersey_numbers, jn_confidences):
        if len(jersey_numbers) == 0:
            return self.no_jersey_number()
        else:
            jn_confidences = np.array(jn_confidences)
            idx_sort = np.argsort(jn_confidences)
            return (
                jersey_numbers[idx_sort[-1]],
                jn_confidences[idx_sort[-1]],
                len(jersey_numbers),
            )  # return the highest confidence jersey number

    def extract_jersey_numbers_from_ocr(self, prediction):
        jersey_numbers = []
        jn_confidences = []
        for txt, conf in zip(prediction["rec_texts"], prediction["rec_scores"]):
            jn = self.extract_numbers(txt)
            if jn is not None:
                jersey_numbers.append(jn)
                jn_confidences.append(conf)
        jersey_number, jn_confidence, _ = self.choose_best_jersey_number(
            jersey_numbers, jn_confidences
        )
        if jersey_number is not None:
            jersey_number = jersey_number[:2]  # Only two-digit numbers are possible
        return jersey_number, jn_confidence

    def run_mmocr_inference(self, images_np):
        result = {}
        result["det"] = self.textdetinferencer(
            images_np,
            return_datasamples=True,
            batch_size=self.batch_size,
            progress_bar=False,
        )["predictions"]

        result["rec"] = []
        for i, det_data_sample in enumerate(result["det"]):
            img = images_np[i]
            quads = det_data_sample.pred_instances.polygons
            result["rec"].append([])
            for polygon in quads:
                quad = polygon_utils.poly2bbox(polygon).astype(np.int32)
                crop_img = img[quad[1]:quad[3], quad[0]:quad[2]]
                if crop_img.size == 0:
                    continue
                result["rec"][-1].append(crop_img)

        pred_results = [{} for _ in range(len(result["rec"]))]
        for i, rec_imgs in enumerate(result["rec"]):
            if len(rec_imgs) == 0:
                pred_results[i] = dict(rec_texts=[], rec_scores=[])
                continue
            rec_out = self.textrecinferencer(
                rec_imgs,
                return_datasamples=True,
                batch_size=self.batch_size,
                progress_bar=False,
            )["predictions"]
            pred_results[i] = dict(
                rec_texts=[r.pred_text.item for r in rec_out],
                rec_scores=[float(np.mean(r.pred_text.score)) for r in rec_out],
            )
        return pred_results

    @torch.no_grad()
    def process(self, batch, detections: pd.DataFrame, metadatas: pd.DataFrame):
        jersey_number_detection = []
        jersey_number_confidence = []
        images_np = [img.cpu().numpy() for img in batch["img"]]
        del batch["img"]

        predictions = self.run_mmocr_inference(images_np)
        for prediction in predictions:
            jn, conf = self.extract_jersey_numbers_from_ocr(prediction)
            jersey_number_detection.append(jn)
            jersey_number_confidence.append(conf)

        detections["jersey_number_detection"] = jersey_number_detection
        detections["jersey_number_confidence"] = jersey_number_confidence

        return detections


def tracklet_jersey_vote(detections: pd.DataFrame, device="cuda", min_conf=0.3):
    """Majority vote of the per-frame jersey numbers inside each tracklet.

    Runs on the GPU because a 45-min half has ~1.5M player detections and the pandas
    groupby-mode was the slowest step of the whole pipeline.
    """
    valid = detections["jersey_number_detection"].notna() & \
        (detections["jersey_number_confidence"] >= min_conf)
    if not valid.any():
        detections["jersey_number"] = None
        return detections

    track_ids = torch.as_tensor(detections.loc[valid, "track_id"].to_numpy(), device=device)
    numbers = torch.as_tensor(
        detections.loc[valid, "jersey_number_detection"].astype(int).to_numpy(), device=device
    )
    # encode (track, number) pairs so that one sort + mode per track gives the vote
    uniq_tracks, inverse = torch.unique(track_ids, return_inverse=True)
    votes = {}
    for k, tid in enumerate(uniq_tracks.tolist()):
        track_numbers = numbers[inverse == k]
        votes[tid] = int(track_numbers.mode().values.item())

    detections["jersey_number"] = detections["track_id"].map(votes)
    return detections
