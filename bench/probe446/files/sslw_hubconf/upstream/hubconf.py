dependencies = ['torch']

import torch
from sslearning.models.accNet import Resnet


model_urls = {
    'harnet5': 'https://wearables-files.ndph.ox.ac.uk/files/ssl/mtl_best_5s.mdl',
    'harnet10': 'https://wearables-files.ndph.ox.ac.uk/files/ssl/mtl_best_10s.mdl',
    'harnet30': 'https://wearables-files.ndph.ox.ac.uk/files/ssl/mtl_best_30s.mdl',
}


def _load_weights(model, url, progress=True, trust_remote=False):
    # weights were saved from a DDP model on GPU; load on CPU and strip the "module." prefix
    pretrained = torch.hub.load_state_dict_from_url(url, map_location=torch.device('cpu'), progress=progress)
    if 'state_dict' in pretrained:
        pretrained = pretrained['state_dict']
    pretrained = {k.replace('module.', ''): v for k, v in pretrained.items()}
    model_dict = model.state_dict()
    # filter out the classifier head, which depends on the downstream task
    pretrained = {k: v for k, v in pretrained.items() if k in model_dict and k.split('.')[0] != 'classifier'}
    model_dict.update(pretrained)
    model.load_state_dict(model_dict)
    return model


def _harnet(epoch_len, class_num, pretrained, my_device='cpu'):
    model = Resnet(output_size=class_num, epoch_len=epoch_len, is_eva=True)
    if pretrained:
        model = _load_weights(model, model_urls['harnet{}'.format(epoch_len)])
    return model.to(my_device)


def harnet5(class_num=2, pretrained=False, my_device='cpu', **kwargs):
    """
    harnet5 model: 5-second windows at 30 Hz
    pretrained (bool): load the weights pre-trained on the UK Biobank (700,000 person-days)
    my_device (str): device to move the model to, e.g. "cpu" or "cuda:0"
    """
    return _harnet(5, class_num, pretrained, my_device)


def harnet10(class_num=2, pretrained=False, my_device='cpu', **kwargs):
    """
    harnet10 model: 10-second windows at 30 Hz
    """
    return _harnet(10, class_num, pretrained, my_device)


def harnet30(class_num=2, pretrained=False, my_device='cpu', **kwargs):
    """
    harnet30 model: 30-second windows at 30 Hz
    """
    return _harnet(30, class_num, pretrained, my_device)
