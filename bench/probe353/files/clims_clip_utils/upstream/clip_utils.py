import torch
import torch.nn as nn
import torch.nn.functional as F
import clip

BACKGROUND_CATEGORY = ['ground', 'land', 'grass', 'tree', 'building', 'wall', 'sky', 'lake', 'water', 'river', 'sea',
                       'railway', 'railroad', 'keyboard', 'helmet', 'cloud', 'house', 'mountain', 'ocean', 'road',
                       'rock', 'street', 'valley', 'bridge', 'sign',
                       ]

BACKGROUND_CATEGORY_COCO = ['ground', 'land', 'grass', 'tree', 'building', 'wall', 'sky', 'lake', 'water', 'river',
                            'sea', 'railway', 'railroad', 'helmet', 'cloud', 'house', 'mountain', 'ocean', 'road',
                            'rock', 'street', 'valley', 'bridge',
                            ]

new_class_names = ['aeroplane', 'bicycle', 'bird avian', 'boat', 'bottle',
                   'bus', 'car', 'cat', 'chair seat', 'cow',
                   'diningtable', 'dog', 'horse', 'motorbike', 'person with clothes,people,human',
                   'pottedplant', 'sheep', 'sofa', 'train', 'tvmonitor screen'
                   ]

new_class_names_coco = ['person with clothes,people,human', 'bicycle', 'car', 'motorbike', 'aeroplane',
                        'bus', 'train', 'truck', 'boat', 'traffic light',
                        'fire hydrant', 'stop sign', 'parking meter', 'bench', 'bird avian',
                        'cat', 'dog', 'horse', 'sheep', 'cow',
                        'elephant', 'bear', 'zebra', 'giraffe', 'backpack,bag',
                        'umbrella,parasol', 'handbag,purse', 'necktie', 'suitcase', 'frisbee',
                        'skis', 'sknowboard', 'sports ball', 'kite', 'baseball bat',
                        'glove', 'skateboard', 'surfboard', 'tennis racket', 'bottle',
                        'wine glass', 'cup', 'fork', 'knife', 'dessertspoon',
                        'bowl', 'banana', 'apple', 'sandwich', 'orange',
                        'broccoli', 'carrot', 'hot dog', 'pizza', 'donut',
                        'cake', 'chair seat', 'sofa', 'pottedplant', 'bed',
                        'diningtable', 'toilet', 'tvmonitor screen', 'laptop', 'mouse',
                        'remote control', 'keyboard', 'cell phone', 'microwave', 'oven',
                        'toaster', 'sink', 'refrigerator', 'book', 'clock',
                        'vase', 'scissors', 'teddy bear', 'hairdrier,blowdrier', 'toothbrush',
                        ]


def zeroshot_classifier(classnames, templates, model):
    with torch.no_grad():
        zeroshot_weights = []
        for classname in classnames:
            texts = [template.format(classname) for template in templates]  # format with class
            texts = clip.tokenize(texts).cuda()  # tokenize
            class_embeddings = model.encode_text(texts)  # embed with text encoder
            class_embeddings /= class_embeddings.norm(dim=-1, keepdim=True)
            class_embedding = class_embeddings.mean(dim=0)
            class_embedding /= class_embedding.norm()
            zeroshot_weights.append(class_embedding)
        zeroshot_weights = torch.stack(zeroshot_weights, dim=1).cuda()
    return zeroshot_weights.t()


# text features do not depend on the image, cache them per (model, dataset)
_TEXT_FEATURE_CACHE = {}


def _get_text_features(clip_model, dname):
    key = (id(clip_model), dname)
    if key not in _TEXT_FEATURE_CACHE:
        class_names = new_class_names_coco if dname == 'coco' else new_class_names
        texts = ['a clean origami {}.'.format(c) for c in class_names]
        device = next(clip_model.parameters()).device
        with torch.no_grad():
            text_features = clip_model.encode_text(clip.tokenize(texts).to(device))
            text_features = text_features / text_features.norm(dim=-1, keepdim=True)
        _TEXT_FEATURE_CACHE[key] = text_features
    return _TEXT_FEATURE_CACHE[key]


def clip_forward(clip_model, images, labels, dname='coco'):
    text_features = _get_text_features(clip_model, dname)
    text_features = text_features[labels]

    image_features = clip_model.encode_image(images)
    image_features = image_features / image_features.norm(dim=-1, keepdim=True)

    N, C = image_features.size()
    image_features = image_features.reshape(N, 1, C)
    text_features = text_features.reshape(N, C, 1)

    similarity = torch.matmul(image_features, text_features.to(image_features.dtype))

    return similarity


class SimMaxLoss(nn.Module):

    def __init__(self, margin=0):
        super(SimMaxLoss, self).__init__()
        self.margin = margin

    def forward(self, x, weights):
        x = x.clamp(0.0001, 0.9999)
        return -(torch.log(x + self.margin) * weights).mean()


class SimMinLoss(nn.Module):

    def __init__(self, margin=0):
        super(SimMinLoss, self).__init__()
        self.margin = margin

    def forward(self, x, weights):
        x = x.clamp(0.0001, 0.9999)
        return -(torch.log(1 - x + self.margin) * weights).mean()


class BackgroundSuppressionLoss(nn.Module):
    """
    based on threshold
    """

    def __init__(self, threshold=0.26, dname='coco'):
        super(BackgroundSuppressionLoss, self).__init__()
        self.dname = dname
        if dname == 'voc':
            self.background = BACKGROUND_CATEGORY
        else:
            self.background = BACKGROUND_CATEGORY_COCO
        self.threshold = threshold
        print(f'Use CBSLoss! threshold: {threshold}')

    def forward(self, clip_model, images, eps=0.0001):
        image_features = clip_model.encode_image(images)  # [N1, C]
        text_features = clip_model.encode_text(clip.tokenize(self.background).cuda())  # [N2, C]

        # normalization
        image_features = image_features / image_features.norm(dim=-1, keepdim=True)
        text_features = text_features / text_features.norm(dim=-1, keepdim=True)

        logits_per_image = (image_features @ text_features.t())  # [N1, N2]
        mask = torch.zeros_like(logits_per_image)
        mask = torch.where(logits_per_image > self.threshold, torch.ones_like(mask), torch.zeros_like(mask))

        return -(torch.log(1 - logits_per_image) * mask).sum()


def get_clip_device():
    """CLIP's own default: fp16 weights on the GPU, fp32 on the CPU."""
    return "cuda" if torch.cuda.is_available() else "cpu"


imagenet_templates = [
    'a bad photo of a {}.',
    'a photo of many {}.',
    'a sculpture of a {}.',
    'a photo of the hard to see {}.',
    'a low resolution photo of the {}.',
    'a rendering of a {}.',
    'graffiti of a {}.',
    'a bad photo of the {}.',
    'a cropped photo of the {}.',
    'a tattoo of a {}.',
    'the embroidered {}.',
    'a photo of a hard to see {}.',
    'a bright photo of a {}.',
    'a photo of a clean {}.',
    'a photo of a dirty {}.',
    'a dark photo of the {}.',
    'a drawing of a {}.',
    'a photo of my {}.',
    'the plastic {}.',
    'a photo of the cool {}.',
    'a close-up photo of a {}.',
    'a black and white photo of the {}.',
    'a painting of the {}.',
    'a pixelated photo of the {}.',
    'a sculpture of the {}.',
    'a bright photo of the {}.',
    'a cropped photo of a {}.',
    'a plastic {}.',
    'a photo of the dirty {}.',
    'a jpeg corrupted photo of a {}.',
    'a blurry photo of the {}.',
    'a photo of the {}.',
    'a good photo of the {}.',
    'a rendering of the {}.',
    'a {} in a video game.',
    'a photo of one {}.',
    'a doodle of a {}.',
    'a close-up photo of the {}.',
    'a photo of a {}.',
    'the origami {}.',
]
