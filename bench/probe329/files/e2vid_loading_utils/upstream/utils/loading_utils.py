import torch
from model.model import *


def load_model(path_to_model):
    print('Loading model {}...'.format(path_to_model))
    raw_model = torch.load(path_to_model)
    arch = raw_model['arch']

    try:
        model_type = raw_model['model']
    except KeyError:
        model_type = raw_model['config']['model']

    # instantiate model
    model = eval(arch)(model_type)

    # load model weights
    model.load_state_dict(raw_model['state_dict'])

    return model


def load_model_for_finetuning(path_to_model, gpu_id=0):
    """Same as load_model(), but keeps the optimizer state so that training can be resumed.

    Used by the fine-tuning scripts on the HDR / fast-motion sequences.
    """
    checkpoint = torch.load(path_to_model, map_location='cuda:{}'.format(gpu_id))
    arch = checkpoint['arch']
    model_type = checkpoint.get('model', checkpoint.get('config', {}).get('model'))
    model = eval(arch)(model_type)
    model.load_state_dict(checkpoint['state_dict'])
    optimizer_state = checkpoint.get('optimizer', None)
    epoch = checkpoint.get('epoch', 0)
    return model, optimizer_state, epoch


def get_device(use_gpu):
    if use_gpu and torch.cuda.is_available():
        device = torch.device('cuda:0')
    else:
        device = torch.device('cpu')
    print('Device:', device)

    return device


def num_trainable_parameters(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
