#!/usr/bin/env python
# coding: utf-8

# # Explain an Intermediate Layer of VGG16 on ImageNet (PyTorch)
#
# Explaining a prediction in terms of the original input image is harder than
# explaining the prediction in terms of a higher convolutional layer
# (because the higher convolutional layer is closer to the output). This
# notebook gives a simple example of how to use GradientExplainer to do
# explain a model output with respect to the 7th layer of the pretrained
# VGG16 network.
#
# Note that by default 200 samples are taken to compute the expectation. To
# run faster you can lower the number of samples per explanation.

import json
import time

import numpy as np
import torch
import torchvision.models as models

import shap

# 200 noisy samples per image through VGG16: do it on the GPU.
device = "cuda"
nsamples = 200

mean = [0.485, 0.456, 0.406]
std = [0.229, 0.224, 0.225]


def normalize(image):
    if image.max() > 1:
        image /= 255
    image = (image - mean) / std
    # in addition, roll the axis so that they suit pytorch
    return torch.tensor(image.swapaxes(-1, 1).swapaxes(2, 3)).float().to(device)


# ## Explain predictions
#
# Here we explain two images using the 7th layer of a pretrained VGG16 model.

# load the model
model = models.vgg16(pretrained=True).eval().to(device)

X, y = shap.datasets.imagenet50()

X /= 255

to_explain = X[[39, 41]]

# load the ImageNet class names
url = "https://s3.amazonaws.com/deep-learning-models/image-models/imagenet_class_index.json"
fname = shap.datasets.cache(url)
with open(fname) as f:
    class_names = json.load(f)

t0 = time.time()
e = shap.GradientExplainer((model, model.features[7]), normalize(X))
shap_values, indexes = e.shap_values(normalize(to_explain), ranked_outputs=2, nsamples=nsamples)
print(f"explained {len(to_explain)} images in {time.time() - t0:.1f}s")

# get the names for the classes
index_names = np.vectorize(lambda x: class_names[str(x)][1])(indexes)

# plot the explanations
shap_values = [np.swapaxes(np.swapaxes(s, 2, 3), 1, -1) for s in shap_values]

shap.image_plot(shap_values, to_explain, index_names)


# ## Explain predictions with local smoothing
#
# Gradient explainer uses expected gradients, which merges ideas from
# integrated gradients, SHAP, and SmoothGrad into a single expection
# equation. To use smoothing like SmoothGrad just set the local_smoothing
# parameter to something non-zero. This will add normally distributed noise
# with that standard deviation to the input during the expectation
# calculation. It can create smoother feature attributions that better
# capture correlated regions of the image.

e = shap.GradientExplainer((model, model.features[7]), normalize(X), local_smoothing=0.5)

# One image at a time so that the 200 smoothed samples of a 224x224 batch
# stay within memory on 8GB cards.
all_values = []
all_indexes = []
for i in range(len(to_explain)):
    sv, ind = e.shap_values(normalize(to_explain[i:i + 1]), ranked_outputs=2, nsamples=nsamples)
    all_values.append(sv)
    all_indexes.append(ind)
    torch.cuda.empty_cache()
    print(f"image {i}: {torch.cuda.memory_allocated() / 2**20:.0f} MiB still allocated")

shap_values = [np.concatenate([v[k] for v in all_values], axis=0) for k in range(2)]
indexes = np.concatenate(all_indexes, axis=0)

# get the names for the classes
index_names = np.vectorize(lambda x: class_names[str(x)][1])(indexes)

# plot the explanations
shap_values = [np.swapaxes(np.swapaxes(s, 2, 3), 1, -1) for s in shap_values]

shap.image_plot(shap_values, to_explain, index_names)
