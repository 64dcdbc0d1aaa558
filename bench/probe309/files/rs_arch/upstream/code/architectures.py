import torch
from torchvision.models.resnet import resnet50
import torch.backends.cudnn as cudnn
from archs.cifar_resnet import resnet as resnet_cifar
from archs.wide_resnet import wide_resnet_28_10
from datasets import get_normalize_layer, get_input_center_layer
from torch.nn.functional import interpolate

# resnet50 - the classic ResNet-50, sized for ImageNet
# cifar_resnet20 - a 20-layer residual network sized for CIFAR
# cifar_resnet110 - a 110-layer residual network sized for CIFAR
# cifar_wrn28_10 - a wide residual network (depth 28, width 10) for CIFAR
ARCHITECTURES = ["resnet50", "cifar_resnet20", "cifar_resnet110", "cifar_wrn28_10"]


def get_architecture(arch: str, dataset: str) -> torch.nn.Module:
    """ Return a neural network (with random weights)

    :param arch: the architecture - should be in the ARCHITECTURES list above
    :param dataset: the dataset - should be in the datasets.DATASETS list
    :return: a Pytorch module
    """
    if arch == "resnet50" and dataset == "imagenet":
        model = torch.nn.DataParallel(resnet50(pretrained=False)).cuda()
        cudnn.benchmark = True
    elif arch == "cifar_resnet20":
        model = resnet_cifar(depth=20, num_classes=10).cuda()
    elif arch == "cifar_resnet110":
        model = resnet_cifar(depth=110, num_classes=10).cuda()
    elif arch == "cifar_wrn28_10":
        model = wide_resnet_28_10(num_classes=10).cuda()
    else:
        raise ValueError("unknown architecture {} for dataset {}".format(arch, dataset))

    # the first layer of the network normalizes the input (so that the
    # smoothing noise is added in [0, 1] pixel space, before normalization)
    normalize_layer = get_normalize_layer(dataset)
    return torch.nn.Sequential(normalize_layer, model)


def load_base_classifier(path: str) -> torch.nn.Module:
    """Load a base classifier saved by train.py (the checkpoint stores the
    architecture name and the state dict of the DataParallel-wrapped model)."""
    checkpoint = torch.load(path)
    base_classifier = get_architecture(checkpoint["arch"], checkpoint.get("dataset", "cifar10"))
    base_classifier.load_state_dict(checkpoint['state_dict'])
    return base_classifier
