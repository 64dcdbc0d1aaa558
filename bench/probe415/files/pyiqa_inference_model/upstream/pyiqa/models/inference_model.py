import torch
import torchvision as tv
from collections import OrderedDict

from pyiqa.default_model_configs import DEFAULT_CONFIGS
from pyiqa.utils.registry import ARCH_REGISTRY
from pyiqa.utils.img_util import imread2tensor
from pyiqa.utils import get_root_logger


class InferenceModel(torch.nn.Module):
    """Common interface for quality inference of images with default setting of each metric.

    All metrics share the same calling convention:

        >>> iqa_metric = InferenceModel('lpips')
        >>> score = iqa_metric(img_dist, img_ref)

    Inputs can be file paths, PIL images or tensors in [0, 1]. When ``as_loss`` is True the
    metric keeps gradients so that it can be plugged into an optimisation loop.
    """

    def __init__(
        self,
        metric_name,
        as_loss=False,
        loss_weight=None,
        loss_reduction='mean',
        device=None,
        seed=123,
        check_input_range=True,
        **kwargs,  # key parameters for arch
    ):
        super(InferenceModel, self).__init__()

        self.metric_name = metric_name

        # ============ set metric properties ===========
        self.lower_better = DEFAULT_CONFIGS[metric_name].get('lower_better', False)
        self.metric_mode = DEFAULT_CONFIGS[metric_name].get('metric_mode', None)
        self.score_range = DEFAULT_CONFIGS[metric_name].get('score_range', None)
        if self.metric_mode is None:
            self.metric_mode = kwargs.pop('metric_mode')
        elif 'metric_mode' in kwargs:
            kwargs.pop('metric_mode')

        if device is None:
            self.device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')
        else:
            self.device = device

        self.as_loss = as_loss
        self.loss_weight = loss_weight
        self.loss_reduction = loss_reduction

        # disable input range check when used as loss
        self.check_input_range = check_input_range if not as_loss else False

        # =========== define metric model ===============
        net_opts = OrderedDict()
        # load default setting first
        if metric_name in DEFAULT_CONFIGS.keys():
            default_opt = DEFAULT_CONFIGS[metric_name]['metric_opts']
            net_opts.update(default_opt)
        # then update with custom setting
        net_opts.update(kwargs)
        network_type = net_opts.pop('type')
        self.net = ARCH_REGISTRY.get(network_type)(**net_opts)
        self.net = self.net.to(self.device)
        self.net.eval()

        self.seed = seed

        self.dummy_param = torch.nn.Parameter(torch.empty(0)).to(self.device)

    def load_weights(self, weights_path, weight_keys='params'):
        from pyiqa.archs.arch_util import load_pretrained_network
        load_pretrained_network(self.net, weights_path, weight_keys=weight_keys)

    def is_valid_input(self, x):
        if x is not None and self.check_input_range:
            assert isinstance(x, torch.Tensor), 'Input must be a torch.Tensor'
            assert x.dim() == 4, 'Input must be 4D tensor (B, C, H, W)'
            assert x.shape[1] in [1, 3], 'Input must be RGB or gray image'

            assert x.min() >= 0 and x.max() <= 1, (
                f'Input must be normalized to [0, 1], but got min={x.min():.4f}, max={x.max():.4f}'
            )

    def forward(self, target, ref=None, **kwargs):
        device = self.dummy_param.device

        with torch.set_grad_enabled(self.as_loss):
            if self.metric_mode == 'FR':
                assert ref is not None, 'Please specify reference image for Full Reference metric'
                target = imread2tensor(target, rgb=True) if isinstance(target, str) else target
                ref = imread2tensor(ref, rgb=True) if isinstance(ref, str) else ref
                if target.dim() == 3:
                    target = target.unsqueeze(0)
                if ref.dim() == 3:
                    ref = ref.unsqueeze(0)
                target = target.to(device)
                ref = ref.to(device)
                self.is_valid_input(target)
                self.is_valid_input(ref)
                output = self.net(target, ref, **kwargs)
            elif self.metric_mode == 'NR':
                if isinstance(target, str):
                    target = imread2tensor(target, rgb=True)
                elif isinstance(target, list) and isinstance(target[0], str):
                    target = torch.stack([imread2tensor(t, rgb=True) for t in target])
                if target.dim() == 3:
                    target = target.unsqueeze(0)
                target = target.to(device)
                self.is_valid_input(target)
                output = self.net(target, **kwargs)

        if self.as_loss:
            if isinstance(output, tuple):
                output = output[0]
            if self.loss_reduction == 'mean':
                output = output.mean()
            elif self.loss_reduction == 'sum':
                output = output.sum()
            if self.loss_weight is not None:
                output = self.loss_weight * output
            if self.lower_better is False:
                output = -output
            return output

        if isinstance(output, torch.Tensor) and output.dim() > 1:
            output = output.squeeze(-1) if output.shape[-1] == 1 else output
        return output

    def random_crop_test(self, x, crop_size=224, num_crops=10):
        """Average prediction over several random crops (used by some NR metrics)."""
        torch.manual_seed(self.seed)
        scores = []
        _, _, h, w = x.shape
        for _ in range(num_crops):
            top = torch.randint(0, max(h - crop_size, 0) + 1, (1,)).item()
            left = torch.randint(0, max(w - crop_size, 0) + 1, (1,)).item()
            crop = x[..., top:top + crop_size, left:left + crop_size]
            scores.append(self.forward(crop))
        return torch.stack(scores).mean(0)

    def __repr__(self):
        mode = 'Full Reference' if self.metric_mode == 'FR' else 'No Reference'
        direction = 'lower is better' if self.lower_better else 'higher is better'
        return f'{self.metric_name} ({mode}, {direction}) on {self.device}'


def get_resize_transform(size):
    return tv.transforms.Compose([
        tv.transforms.Resize(size, interpolation=tv.transforms.InterpolationMode.BICUBIC, antialias=True),
    ])


def log_metric_creation(name, device):
    logger = get_root_logger()
    logger.info(f'Metric [{name}] is created on device: {device}')
