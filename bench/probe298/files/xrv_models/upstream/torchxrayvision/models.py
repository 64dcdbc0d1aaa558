import sys
import os
import pathlib
import urllib
import warnings
from collections import OrderedDict

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

from . import utils
from . import datasets

model_urls = {}

model_urls['all'] = {
    "description": 'This model was trained on the datasets: nih-pc-chex-mimic_ch-google-openi-rsna and is described here: https://arxiv.org/abs/2002.02497',
    "weights_url": 'https://github.com/mlmed/torchxrayvision/releases/download/v1/nih-pc-chex-mimic_ch-google-openi-kaggle-densenet121-d121-tw-lr001-rot45-tr15-sc15-seed0-best.pt',
    "labels": ['Atelectasis', 'Consolidation', 'Infiltration', 'Pneumothorax', 'Edema', 'Emphysema', 'Fibrosis',
               'Effusion', 'Pneumonia', 'Pleural_Thickening', 'Cardiomegaly', 'Nodule', 'Mass', 'Hernia',
               'Lung Lesion', 'Fracture', 'Lung Opacity', 'Enlarged Cardiomediastinum'],
    "op_threshs": [0.07422872, 0.038290843, 0.09814756, 0.0098118475, 0.023601074, 0.0022490358, 0.010060724,
                   0.103246614, 0.056810737, 0.026791653, 0.050318155, 0.023985857, 0.01939503, 0.042889766,
                   0.053369623, 0.035975814, 0.20204692, 0.05015312],
    "ppv80_thres": [0.690908, 0.720028, 0.7303882, 0.69575006, 0.6884248, 0.5692298, 0.60883665, 0.65879273,
                    0.6036215, 0.6488545, 0.7204254, 0.6698103, 0.72232854, 0.7233098, 0.65815747, 0.5962648,
                    0.7003468, 0.7118226]
}
model_urls['densenet121-res224-nih'] = {
    "description": 'This model was trained on the NIH ChestX-ray14 dataset.',
    "weights_url": 'https://github.com/mlmed/torchxrayvision/releases/download/v1/nih-densenet121-d121-tw-lr001-rot45-tr15-sc15-seed0-best.pt',
    "labels": ['Atelectasis', 'Consolidation', 'Infiltration', 'Pneumothorax', 'Edema', 'Emphysema', 'Fibrosis',
               'Effusion', 'Pneumonia', 'Pleural_Thickening', 'Cardiomegaly', 'Nodule', 'Mass', 'Hernia'],
    "op_threshs": [0.039117552, 0.0034529066, 0.11396341, 0.0057298196, 0.00045666535, 0.0018880932,
                   0.012037827, 0.038744126, 0.0037316852, 0.0061548315, 0.0040440853, 0.006385103,
                   0.010032918, 0.0029208157],
}
model_urls['densenet121-res224-chex'] = {
    "description": 'This model was trained on the CheXpert dataset.',
    "weights_url": 'https://github.com/mlmed/torchxrayvision/releases/download/v1/chex-densenet121-d121-tw-lr001-rot45-tr15-sc15-seed0-best.pt',
    "labels": ['Atelectasis', 'Consolidation', '', 'Pneumothorax', 'Edema', '', '', 'Effusion', 'Pneumonia', '',
               'Cardiomegaly', '', '', '', 'Lung Lesion', 'Fracture', 'Lung Opacity', 'Enlarged Cardiomediastinum'],
    "op_threshs": [0.1988969, 0.05710573, np.nan, 0.0531293, 0.1435217, np.nan, np.nan, 0.27212676, 0.07749828,
                   np.nan, 0.19712369, np.nan, np.nan, np.nan, 0.09932402, 0.09273402, 0.3270967, 0.10888247],
}


class DenseNet(nn.Module):
    """Based on
    `"Densely Connected Convolutional Networks" <https://arxiv.org/abs/1608.06993>`_

    Possible weights for this class include:

    .. code-block:: python

        ## 224x224 models
        model = xrv.models.DenseNet(weights="densenet121-res224-all")
        model = xrv.models.DenseNet(weights="densenet121-res224-nih")  # NIH chest X-ray8
        model = xrv.models.DenseNet(weights="densenet121-res224-chex")  # CheXpert (Stanford)

    The model accepts a [N, 1, H, W] tensor with pixel values scaled to [-1024, 1024].
    Call ``model.cuda()`` (or ``model.to(device)``) yourself if you want to run on a GPU;
    the calibration thresholds are buffers and follow the module to whatever device it is on.
    """

    def __init__(self,
                 growth_rate=32,
                 block_config=(6, 12, 24, 16),
                 num_init_features=64,
                 bn_size=4,
                 drop_rate=0,
                 num_classes=len(datasets.default_pathologies),
                 in_channels=1,
                 weights=None,
                 op_threshs=None,
                 progress=True,
                 apply_sigmoid=False):

        super(DenseNet, self).__init__()

        self.apply_sigmoid = apply_sigmoid
        self.weights = weights

        if self.weights is not None:
            if not self.weights in model_urls.keys():
                possible_weights = [k for k in model_urls.keys() if k.startswith("densenet")]
                raise Exception("Weights value must be in {}".format(possible_weights))

            # set to be what this model is trained to predict
            self.pathologies = model_urls[weights]["labels"]
            self.targets = model_urls[weights]["labels"]

            # if different from default number of classes
            if num_classes != 18:
                raise ValueError("num_classes and weights cannot both be specified. The weights loaded will define the own number of output classes.")

            num_classes = len(self.pathologies)

        # First convolution
        self.features = nn.Sequential(OrderedDict([
            ('conv0', nn.Conv2d(in_channels, num_init_features, kernel_size=7, stride=2, padding=3, bias=False)),
            ('norm0', nn.BatchNorm2d(num_init_features)),
            ('relu0', nn.ReLU(inplace=True)),
            ('pool0', nn.MaxPool2d(kernel_size=3, stride=2, padding=1)),
        ]))

        # Each denseblock
        num_features = num_init_features
        for i, num_layers in enumerate(block_config):
            block = torchvision.models.densenet._DenseBlock(
                num_layers=num_layers,
                num_input_features=num_features,
                bn_size=bn_size,
                growth_rate=growth_rate,
                drop_rate=drop_rate)
            self.features.add_module('denseblock%d' % (i + 1), block)
            num_features = num_features + num_layers * growth_rate
            if i != len(block_config) - 1:
                trans = torchvision.models.densenet._Transition(
                    num_input_features=num_features,
                    num_output_features=num_features // 2)
                self.features.add_module('transition%d' % (i + 1), trans)
                num_features = num_features // 2

        # Final batch norm
        self.features.add_module('norm5', nn.BatchNorm2d(num_features))

        # Linear layer
        self.classifier = nn.Linear(num_features, num_classes)

        # Official init from torch repo.
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
            elif isinstance(m, nn.Linear):
                nn.init.constant_(m.bias, 0)

        # needs to be register_buffer here so it will go to cuda/cpu easily
        self.register_buffer('op_threshs', op_threshs)

        if self.weights is not None:
            self.weights_filename_local = get_weights(weights, progress=progress)

            try:
                savedmodel = torch.load(self.weights_filename_local, map_location='cpu')
                # patch to load old pytorch versions
                if not hasattr(savedmodel, "_non_persistent_buffers_set"):
                    savedmodel._non_persistent_buffers_set = set()
                self.load_state_dict(savedmodel.state_dict())
            except Exception as e:
                print("Loading failure. Check weights file:", self.weights_filename_local)
                raise e

            self.eval()

            if "op_threshs" in model_urls[weights]:
                self.op_threshs = torch.tensor(model_urls[weights]["op_threshs"])

            self.upsample = nn.Upsample(size=(224, 224), mode='bilinear', align_corners=False)

    def __repr__(self):
        if self.weights is not None:
            return "XRV-DenseNet121-{}".format(self.weights)
        else:
            return "XRV-DenseNet"

    def features2(self, x):
        x = fix_resolution(x, 224, self)
        warn_normalization(x)

        features = self.features(x)
        out = F.relu(features, inplace=True)
        out = F.adaptive_avg_pool2d(out, (1, 1)).view(features.size(0), -1)
        return out

    def forward(self, x):
        x = fix_resolution(x, 224, self)

        features = self.features2(x)
        out = self.classifier(features)

        if hasattr(self, 'apply_sigmoid') and self.apply_sigmoid:
            out = torch.sigmoid(out)

        if hasattr(self, "op_threshs") and (self.op_threshs is not None):
            out = torch.sigmoid(out)
            out = op_norm(out, self.op_threshs)
        return out


model_urls['resnet50-res512-all'] = {
    "description": 'This model was trained on the datasets pc-nih-rsna-siim-vin at a 512x512 resolution.',
    "weights_url": 'https://github.com/mlmed/torchxrayvision/releases/download/v1/pc-nih-rsna-siim-vin-resnet50-test512-e400-state.pt',
    "labels": ['Atelectasis', 'Consolidation', 'Infiltration', 'Pneumothorax', 'Edema', 'Emphysema', 'Fibrosis',
               'Effusion', 'Pneumonia', 'Pleural_Thickening', 'Cardiomegaly', 'Nodule', 'Mass', 'Hernia',
               'Lung Lesion', 'Fracture', 'Lung Opacity', 'Enlarged Cardiomediastinum'],
    "op_threshs": [0.51570356, 0.50444704, 0.53787947, 0.50723547, 0.5025118, 0.5035252, 0.5038076, 0.51862943,
                   0.5078151, 0.50886244, 0.5165202, 0.5004841, 0.5041253, 0.5000309, 0.5078532, 0.5015497,
                   0.52302516, 0.5055295],
}


class ResNet(nn.Module):
    """
    Based on `"Deep Residual Learning for Image Recognition" <https://arxiv.org/abs/1512.03385>`_

    Possible weights for this class include:

    .. code-block:: python

        # 512x512 models
        model = xrv.models.ResNet(weights="resnet50-res512-all")

    """

    def __init__(self, weights: str = None, apply_sigmoid: bool = False, num_classes=18, in_channels=1):
        super(ResNet, self).__init__()

        self.weights = weights
        self.apply_sigmoid = apply_sigmoid

        if self.weights is not None:
            if not self.weights in model_urls.keys():
                possible_weights = [k for k in model_urls.keys() if k.startswith("resnet")]
                raise Exception("Weights value must be in {}".format(possible_weights))
            self.pathologies = model_urls[weights]["labels"]
            num_classes = len(self.pathologies)
        else:
            self.pathologies = list(datasets.default_pathologies)[:num_classes]

        self.model = torchvision.models.resnet50(num_classes=num_classes, weights=None)

        # change the first conv layer so it accepts a single channel
        self.model.conv1 = torch.nn.Conv2d(in_channels, 64, kernel_size=7, stride=2, padding=3, bias=False)

        if self.weights is not None:
            weights_filename_local = get_weights(weights)

            try:
                self.model.load_state_dict(torch.load(weights_filename_local, map_location='cpu'))
            except Exception as e:
                print("Loading failure. Check weights file:", weights_filename_local)
                raise e

            if "op_threshs" in model_urls[weights]:
                self.register_buffer('op_threshs', torch.tensor(model_urls[weights]["op_threshs"]))

            self.upsample = nn.Upsample(size=(512, 512), mode='bilinear', align_corners=False)

        self.eval()

    def __repr__(self):
        if self.weights is not None:
            return "XRV-ResNet-{}".format(self.weights)
        else:
            return "XRV-ResNet"

    def features(self, x):
        x = fix_resolution(x, 512, self)
        warn_normalization(x)

        x = self.model.conv1(x)
        x = self.model.bn1(x)
        x = self.model.relu(x)
        x = self.model.maxpool(x)

        x = self.model.layer1(x)
        x = self.model.layer2(x)
        x = self.model.layer3(x)
        x = self.model.layer4(x)

        x = self.model.avgpool(x)
        x = torch.flatten(x, 1)
        return x

    def forward(self, x):
        x = fix_resolution(x, 512, self)
        warn_normalization(x)

        out = self.model(x)

        if hasattr(self, 'apply_sigmoid') and self.apply_sigmoid:
            out = torch.sigmoid(out)

        if hasattr(self, "op_threshs") and (self.op_threshs is not None):
            out = torch.sigmoid(out)
            out = op_norm(out, self.op_threshs)
        return out


def fix_resolution(x, resolution: int, model: nn.Module):
    """Check resolution of input and resize to match requested."""

    # just skip it if upsample was removed somehow
    if not hasattr(model, 'upsample') or (model.upsample == None):
        return x

    if (x.shape[2] != resolution) | (x.shape[3] != resolution):
        if not hasattr(model, 'printed_resolution_warning'):
            warnings.warn("Input size ({}x{}) is not the native resolution ({}x{}) for this model. A resize will be performed but this could impact performance.".format(x.shape[2], x.shape[3], resolution, resolution))
            model.printed_resolution_warning = True
        return model.upsample(x)
    return x


def warn_normalization(x):
    """Check normalization of input and warn if possibly wrong. When
    processing an image that may likely not have the correct
    normalization we can issue a warning. But running min and max on
    every image/batch is costly so we only do it on the first image/batch.
    """

    # Only run this check on the first image so we don't hurt performance.
    if not "norm_check" in warn_normalization.__dict__:
        warn_normalization.norm_check = True
        x_min = x.min()
        x_max = x.max()
        if torch.logical_or(-255 < x_min, x_max < 255) or torch.logical_or(x_min < -1025, 1025 < x_max):
            warnings.warn(f'The input image should be in the range [-1024,1024]. The image min:{x_min} max:{x_max} is outside of that range. See the torchxrayvision README.')


def op_norm(outputs, op_threshs):
    """Normalize outputs according to operating points for a given model.
    Args:
        outputs: outputs of self.classifier(). torch.Size(batch_size, num_tasks)
        op_threshs_arr: torch.Size(batch_size, num_tasks) with self.op_threshs expanded.
    Returns:
        outputs_new: normalized outputs, torch.Size(batch_size, num_tasks)
    """
    # expand to batch size so we can do parallel comp
    op_threshs = op_threshs.expand(outputs.shape[0], -1)

    # initial values will be 0.5
    outputs_new = torch.zeros(outputs.shape, device=outputs.device) + 0.5

    # only select non-nan elements otherwise the gradient breaks
    mask_leq = (outputs < op_threshs) & ~torch.isnan(op_threshs)
    mask_gt = ~(outputs < op_threshs) & ~torch.isnan(op_threshs)

    # scale outputs less than thresh
    outputs_new[mask_leq] = outputs[mask_leq] / (op_threshs[mask_leq] * 2)
    # scale outputs greater than thresh
    outputs_new[mask_gt] = 1.0 - ((1.0 - outputs[mask_gt]) / ((1 - op_threshs[mask_gt]) * 2))

    return outputs_new


def get_densenet_params(arch: str):
    assert 'dense' in arch
    if arch == 'densenet161':
        ret = dict(growth_rate=48, block_config=(6, 12, 36, 24), num_init_features=96)
    elif arch == 'densenet169':
        ret = dict(growth_rate=32, block_config=(6, 12, 32, 32), num_init_features=64)
    elif arch == 'densenet201':
        ret = dict(growth_rate=32, block_config=(6, 12, 48, 32), num_init_features=64)
    else:
        # default configuration: densenet121
        ret = dict(growth_rate=32, block_config=(6, 12, 24, 16), num_init_features=64)
    return ret


def get_model(weights: str, **kwargs):
    if weights.startswith("densenet"):
        return DenseNet(weights=weights, **kwargs)
    elif weights.startswith("resnet"):
        return ResNet(weights=weights, **kwargs)
    else:
        raise Exception("Unknown model: " + weights)


def get_weights(weights: str, progress: bool = True):
    url = model_urls[weights]["weights_url"]
    weights_filename = os.path.basename(url)
    weights_storage_folder = os.path.expanduser(os.path.join("~", ".torchxrayvision", "models_data"))
    weights_filename_local = os.path.expanduser(os.path.join(weights_storage_folder, weights_filename))

    if not os.path.isfile(weights_filename_local):
        if progress:
            print("Downloading weights...")
            print("If this fails you can run `wget {} -O {}`".format(url, weights_filename_local))
        pathlib.Path(weights_storage_folder).mkdir(parents=True, exist_ok=True)
        utils.download(url, weights_filename_local)

    return weights_filename_local
