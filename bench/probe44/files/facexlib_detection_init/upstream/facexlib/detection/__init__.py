import torch
from copy import deepcopy

from facexlib.utils import load_file_from_url
from .retinaface import RetinaFace

DETECTION_MODELS = {
    'retinaface_resnet50': {
        'network_name': 'resnet50',
        'url': 'https://github.com/xinntao/facexlib/releases/download/v0.1.0/detection_Resnet50_Final.pth',
    },
    'retinaface_mobile0.25': {
        'network_name': 'mobile0.25',
        'url': 'https://github.com/xinntao/facexlib/releases/download/v0.1.0/detection_mobilenet0.25_Final.pth',
    },
}


def _strip_prefix(state_dict, prefix='module.'):
    """Remove the DataParallel prefix that the original training code left in the checkpoints."""
    for k, v in deepcopy(state_dict).items():
        if k.startswith(prefix):
            state_dict[k[len(prefix):]] = v
            state_dict.pop(k)
    return state_dict


def init_detection_model(model_name, half=False, device='cuda', model_rootpath=None):
    """Build a face detector and load its released weights.

    Args:
        model_name (str): One of ``DETECTION_MODELS``.
        half (bool): Run the detector in fp16. Only worth it on GPUs with tensor cores.
        device (str | torch.device): Where to put the model.
        model_rootpath (str | None): Where to cache the downloaded weights.
    """
    if model_name not in DETECTION_MODELS:
        raise NotImplementedError(f'{model_name} is not implemented.')
    info = DETECTION_MODELS[model_name]
    model = RetinaFace(network_name=info['network_name'], half=half, device=device)

    if model_rootpath is None:
        model_rootpath = 'facexlib/weights'
    model_path = load_file_from_url(url=info['url'], model_dir=model_rootpath, progress=True, file_name=None)

    # TODO: clean pretrained model
    load_net = torch.load(model_path, map_location=lambda storage, loc: storage)
    load_net = _strip_prefix(load_net)
    model.load_state_dict(load_net, strict=True)
    model.eval()
    model = model.to(device)
    return model


def init_detection_model_batch(model_name, batch_size=8, half=True, device_id=0, model_rootpath=None):
    """Detector prepared for ``batched_detect_faces`` on one card of a multi-GPU box.

    ``device_id`` indexes the visible GPUs; the batch is padded to ``batch_size`` so that
    cudnn picks the same kernels for every call.
    """
    device = torch.device(f'cuda:{device_id}')
    model = init_detection_model(model_name, half=half, device=device, model_rootpath=model_rootpath)
    model.batch_size = batch_size
    return model


def list_detection_models():
    return sorted(DETECTION_MODELS.keys())


def warmup_detector(model, size=(640, 640), iters=3):
    """Run a few dummy batches so cudnn.benchmark settles before timing."""
    h, w = size
    dummy = torch.zeros((1, 3, h, w), dtype=torch.float32, device=model.device)
    if model.half_inference:
        dummy = dummy.half()
    with torch.no_grad():
        for _ in range(iters):
            model(dummy)
    return model
