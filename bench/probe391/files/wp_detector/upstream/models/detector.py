import torch
from groundingdino.util.inference import load_model, load_image, predict, annotate
from groundingdino.util import box_ops
import cv2
import numpy as np
import os
import shortuuid
from typing import List, Dict
from PIL import Image
from torchvision.ops import box_convert

BOX_TRESHOLD = 0.35     # used in detector api.
TEXT_TRESHOLD = 0.25    # used in detector api.
AREA_THRESHOLD = 0.001  # used to filter out too small object.
IOU_THRESHOLD = 0.95    # used to filter the same instance. greater than threshold means the same instance


def in_dict(ent_dict, norm_box):
    """Return True when `norm_box` overlaps (IoU > IOU_THRESHOLD) a box already stored for this entity."""
    if len(ent_dict["bbox"]) == 0:
        return False
    for bbox in ent_dict["bbox"]:
        if compute_iou(bbox, norm_box) > IOU_THRESHOLD:
            return True
    return False


def compute_iou(box1, box2):
    x1 = max(box1[0], box2[0])
    y1 = max(box1[1], box2[1])
    x2 = min(box1[2], box2[2])
    y2 = min(box1[3], box2[3])
    inter = max(0, x2 - x1) * max(0, y2 - y1)
    area1 = (box1[2] - box1[0]) * (box1[3] - box1[1])
    area2 = (box2[2] - box2[0]) * (box2[3] - box2[1])
    union = area1 + area2 - inter
    if union <= 0:
        return 0.0
    return inter / union


def extract_detection(global_entity_dict, boxes, phrases, image_source, cache_dir, sample):
    h, w, _ = image_source.shape
    boxes = boxes * torch.Tensor([w, h, w, h])
    xyxy = box_convert(boxes=boxes, in_fmt="cxcywh", out_fmt="xyxy").numpy()
    normed_xyxy = np.around(np.clip(xyxy / np.array([w, h, w, h]), 0., 1.), 3).tolist()

    os.makedirs(cache_dir, exist_ok=True)

    for entity, box, norm_box in zip(phrases, xyxy, normed_xyxy):
        # filter out too small object
        thre = sample['area_threshold'] if 'area_threshold' in sample else AREA_THRESHOLD
        if (norm_box[2] - norm_box[0]) * (norm_box[3] - norm_box[1]) < thre:
            continue

        # filter out object already in the dict
        if in_dict(global_entity_dict[entity], norm_box):
            continue

        # add instance, including the cropped_pic & its original bbox
        crop_id = shortuuid.uuid()
        crop_img = Image.fromarray(image_source).crop(box)
        crop_path = os.path.join(cache_dir, f"{crop_id}.png")
        crop_img.save(crop_path)

        global_entity_dict[entity]["total_count"] += 1
        global_entity_dict[entity]["crop_path"].append(crop_path)
        global_entity_dict[entity]["bbox"].append(norm_box)  # [x1, y1, x2, y2] coordinate of left-top and right-bottom corner

    return global_entity_dict


def find_most_similar_strings(nlp, s_list, t_list):
    """Map every detector phrase to the closest extracted entity with spaCy vectors."""
    t_docs = [nlp(t) for t in t_list]
    result = []
    for s in s_list:
        s_doc = nlp(s)
        similarities = [(t, s_doc.similarity(t_doc)) for t, t_doc in zip(t_list, t_docs)]
        most_similar = max(similarities, key=lambda x: x[1])[0]
        result.append(most_similar)
    return result


class Detector:
    '''
        Input:
            img_path: str.
            named_entity: A list of str. Each str contains the named entities for one sentence.
        Output:
            global_entity_dict: A dict, containing entity name str, and corresponding entity information:
                total_count: number of detected instances of the entity.
                crop_path: a list of paths of cropped pictures.
                bbox: a list of normalised bounding boxes.
    '''

    def __init__(self, args):
        import spacy
        self.model = load_model(args.detector_config, args.detector_model, device='cuda:0')
        self.cache_dir = args.cache_dir
        self.args = args
        self.nlp = spacy.load("en_core_web_md")

    def detect_objects(self, sample: Dict):
        img_path = sample['img_path']
        extracted_entities = sample['named_entity']

        image_source, image = load_image(img_path)

        # global entity dict
        global_entity_dict = dict()
        for entity_str in extracted_entities:
            entity_list = entity_str.split('.')
            for ent in entity_list:
                ent = ent.strip()
                if ent == '':
                    continue
                global_entity_dict.setdefault(ent, {}).setdefault('total_count', 0)
                global_entity_dict.setdefault(ent, {}).setdefault('crop_path', [])
                global_entity_dict.setdefault(ent, {}).setdefault('bbox', [])

        for entity_str in extracted_entities:
            # detect objects for each sentence, taking the named entities of that sentence as the caption
            entity_list = [e.strip() for e in entity_str.split('.') if e.strip()]
            if len(entity_list) == 0:
                continue
            caption = ' . '.join(entity_list) + ' .'

            boxes, logits, phrases = predict(
                model=self.model,
                image=image,
                caption=caption,
                box_threshold=BOX_TRESHOLD,
                text_threshold=TEXT_TRESHOLD,
                device='cuda:0'
            )

            if len(phrases) == 0:
                continue

            # grounding dino may return sub-strings, map them back to the extracted entities
            phrases = find_most_similar_strings(self.nlp, phrases, entity_list)
            global_entity_dict = extract_detection(
                global_entity_dict, boxes, phrases, image_source, self.cache_dir, sample
            )

        sample['entity_info'] = global_entity_dict
        return sample
