# Copyright 2021 UC Davis Plant AI and Biophysics Lab
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

from typing import List, Union

import numpy as np

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    from torchvision.models import efficientnet_b4
except ImportError:
    raise ImportError("To use image classification models in `agml.models`, you "
                      "need to install Torchvision first. You can do this by "
                      "running `pip install torchvision`.")

from agml.models.base import AgMLModelBase
from agml.models.tools import auto_move_data, imagenet_style_process
from agml.models.metrics.accuracy import Accuracy
from agml.models.losses import LabelSmoothingLoss


class EfficientNetB4Transfer(nn.Module):
    """Wraps an EfficientDetB4 model with a classification head."""

    def __init__(self, num_classes):
        super(EfficientNetB4Transfer, self).__init__()
        self.base = efficientnet_b4(pretrained = False)
        self.l1 = nn.Linear(1000, 256)
        self.dropout = nn.Dropout(0.1)
        self.relu = nn.ReLU()
        self.l2 = nn.Linear(256, num_classes)

    def forward(self, x, **kwargs): # noqa
        x = self.base(x)
        x = x.view(x.size(0), -1)
        x = self.dropout(self.relu(self.l1(x)))
        return self.l2(x)


class ClassificationModel(AgMLModelBase):
    """Wraps an `EfficientNetB4` model for agricultural image classification.

    When using the model for inference, you should use the `predict()` method
    on any set of input images. This method wraps the `forward()` call with
    additional steps which perform the necessary preprocessing on the inputs,
    including resizing, normalization, and batching, as well as additional
    post-processing on the outputs (such as converting one-hot labels to
    integer labels), which will allow for a streamlined inference pipeline.

    If you want to use the `forward()` method directly, so that you can just
    call `model(inputs)`, then make sure your inputs are properly processed.
    This can be done by calling `model.preprocess_input(inputs)` on the
    input list of images/single image and then passing that result to the model.
    This will also return a one-hot label feature vector instead of integer
    labels, in the case that you want further customization of the outputs.

    This model can be subclassed in order to run a full training job; the
    actual transfer `EfficientNetB4` model can be accessed through the
    parameter `net` if you need custom access.

    Parameters
    ----------
    dataset : str
        The name of the dataset the model should be pretrained on (e.g.
        `plant_village_classification`), or a number of classes.
    """
    serializable = frozenset(("net", ))
    state_override = frozenset(("net", ))

    def __init__(self, num_classes = None, dataset = None, **kwargs):
        # Construct the network and load in pretrained weights.
        super(ClassificationModel, self).__init__()
        self._num_classes = num_classes
        if self._num_classes is None and dataset is not None:
            self._num_classes = self._get_num_classes(dataset)
        self.net = self._construct_sub_net(self._num_classes)
        self._loss = LabelSmoothingLoss(self._num_classes, smoothing = 0.1)
        self._accuracy = Accuracy()

    @auto_move_data
    def forward(self, batch):
        return self.net(batch)

    @staticmethod
    def _construct_sub_net(num_classes):
        return EfficientNetB4Transfer(num_classes)

    @staticmethod
    def _get_num_classes(dataset):
        from agml.data.public import source
        return source(dataset).num_classes

    @staticmethod
    def _preprocess_image(image, **kwargs):
        """Preprocesses a single input image to EfficientNet standards.

        The preprocessing steps are applied logically; if the images
        are passed with preprocessing already having been applied, for
        instance, the images are already resized or they are already been
        normalized, the operation is not applied again, for efficiency.

        Preprocessing includes the following steps:

        1. Resizing the image to size (224, 224).
        2. Performing normalization with ImageNet parameters.
        3. Converting the image into a PyTorch tensor format.

        as well as other intermediate steps such as adding a channel
        dimension for two-channel inputs, for example.
        """
        return imagenet_style_process(image, size = (224, 224), **kwargs)

    @staticmethod
    def preprocess_input(images = None, **kwargs) -> torch.Tensor:
        """Preprocesses the input image to the specification of the model.

        This method takes in a set of inputs and preprocesses them into the
        expected format for the `EfficientNetB4` image classification model.
        There are a variety of inputs which are accepted, including images,
        image paths, as well as fully-processed image tensors. The inputs
        are expanded and standardized, then run through a preprocessing
        pipeline which formats them into a single tensor ready for the model.

        Parameters
        ----------
        images : Any
            One of the following formats (and types):
                1. A single image path (str)
                2. A list of image paths (List[str])
                3. A single image (np.ndarray, torch.Tensor)
                4. A list of images (List[np.ndarray, torch.Tensor])
                5. A batched tensor of images (np.ndarray, torch.Tensor)

        Returns
        -------
        A 4-dimensional, preprocessed `torch.Tensor`.
        """
        images = ClassificationModel._expand_input_images(images)
        return torch.stack(
            [ClassificationModel._preprocess_image(
                image, **kwargs) for image in images], dim = 0)

    @torch.no_grad()
    def predict(self, images, **kwargs):
        """Runs `EfficientNetB4` inference on the input image(s).

        This method is the primary inference method for the model; it
        accepts a set of input images (see `preprocess_input()` for a
        detailed specification on the allowed input parameters), then
        preprocesses them to the model specifications, forward passes
        them through the model, and finally returns the predictions.

        In essence, this method is a wrapper for `forward()` that allows
        for passing a variety of inputs. If, on the other hand, you
        have pre-processed inputs and simply want to forward pass through
        the model without having to spend computational time on what
        is now unnecessary preprocessing, you can simply call `forward()`
        and then run `torch.argmax()` on the outputs to get predictions.

        Parameters
        ----------
        images : Any
            See `preprocess_input()` for the allowed input images.

        Returns
        -------
        A `np.ndarray` with integer labels for each image.
        """
        # Process the images and run inference.
        images = self.preprocess_input(images, **kwargs)
        out = torch.sigmoid(self.forward(images))

        # Post-process the output labels.
        return self._to_out(torch.squeeze(torch.argmax(out, 1)))

    def evaluate(self, loader, **kwargs):
        """Runs a mean accuracy evaluation on the given loader.

        This method will loop over the provided `AgMLDataLoader` and compute
        the mean accuracy over the entire loader. It takes the predictions
        from each image batch and accumulates them in an `Accuracy` metric.
        """
        acc = Accuracy()
        for (image, label) in loader:
            image = self.preprocess_input(image, **kwargs)
            prediction = self.forward(image).detach().cpu()
            acc.update(prediction, torch.as_tensor(label).long())
        return acc.compute().item()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr = 1e-3)

    def training_step(self, batch, *args, **kwargs): # noqa
        x, y = batch
        y_pred = self(x)
        loss = self._loss(y_pred, y)
        acc = self._accuracy(y_pred, y)
        self.log('accuracy', acc.item(), prog_bar = True)
        self.log('loss', loss.item(), prog_bar = True)
        return {'loss': loss, 'accuracy': acc}

    def validation_step(self, batch, *args, **kwargs): # noqa
        x, y = batch
        y_pred = self(x)
        val_loss = self._loss(y_pred, y)
        val_acc = self._accuracy(y_pred, y)
        self.log('val_loss', val_loss.item(), prog_bar = True)
        self.log('val_accuracy', val_acc.item(), prog_bar = True)
        return {'val_loss': val_loss, 'val_accuracy': val_acc}
