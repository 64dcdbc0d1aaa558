import torch
import clip

BACKGROUND_CATEGORY = ['ground', 'land', 'grass', 'tree', 'building', 'wall', 'sky', 'lake', 'water', 'river', 'sea',
                       'railway', 'railroad', 'keyboard', 'helmet', 'cloud', 'house', 'mountain', 'ocean', 'road',
                       'rock', 'street', 'valley', 'bridge', 'sign',
                       ]

BACKGROUND_CATEGORY_COCO = ['ground', 'land', 'grass', 'tree', 'building', 'wall', 'sky', 'lake', 'water', 'river',
                            'sea', 'railway', 'railroad', 'helmet', 'cloud', 'house', 'mountain', 'ocean', 'road',
                            'rock', 'street', 'valley', 'bridge',
                            ]

class_names = ['aeroplane', 'bicycle', 'bird', 'boat', 'bottle', 'bus', 'car', 'cat', 'chair', 'cow', 'diningtable',
               'dog', 'horse', 'motorbike', 'person', 'pottedplant', 'sheep', 'sofa', 'train', 'tvmonitor']

new_class_names = ['aeroplane', 'bicycle', 'bird avian', 'boat', 'bottle', 'bus', 'car', 'cat', 'chair seat', 'cow',
                   'diningtable', 'dog', 'horse', 'motorbike', 'person with clothes,people,human', 'pottedplant',
                   'sheep', 'sofa', 'train', 'tvmonitor screen']

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
        zeroshot_weights = torch.stack(zeroshot_weights, dim=1)
    return zeroshot_weights.t()


def clip_forward(clip_model, images, labels, dname='coco'):
    texts = []

    if dname == 'coco':
        names = new_class_names_coco
    else:
        names = new_class_names

    for i in labels:
        texts.append(f"a photo of {names[i]}.")

    texts = clip.tokenize(texts).to(images.device)

    image_features = clip_model.encode_image(images)
    text_features = clip_model.encode_text(texts)

    # normalized features
    image_features = image_features / image_features.norm(dim=-1, keepdim=True)
    text_features = text_features / text_features.norm(dim=-1, keepdim=True)

    N, C = image_features.size()
    image_features = image_features.reshape(N, 1, C)
    N, C = text_features.size()
    text_features = text_features.reshape(N, C, 1)

    similarity = torch.matmul(image_features, text_features)

    return similarity
