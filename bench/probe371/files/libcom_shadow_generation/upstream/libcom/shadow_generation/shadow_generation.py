import os
import cv2
import torch
import numpy as np
import einops
from PIL import Image
from omegaconf import OmegaConf

from libcom.utils.model_download import download_pretrained_model
from libcom.utils.process_image import read_image_opencv, read_mask_opencv
from libcom.utils.environment import check_gpu_device
from .source.cldm.model import create_model, load_state_dict
from .source.ldm.models.diffusion.ddim import DDIMSampler
from .source.ldm.util import seed_everything

cur_dir = os.path.dirname(os.path.abspath(__file__))
model_set = ['ShadowGeneration']


class ShadowGenerationModel:
    """
    Foreground shadow generation model based on a ControlNet-style latent diffusion model.

    Args:
        device (str | torch.device): gpu id
        model_type (str): predefined model type.
        kwargs (dict): sampler settings, e.g. ``sample_steps`` (default 50) and ``fp16`` (default True).

    Examples:
        >>> from libcom import ShadowGenerationModel
        >>> from libcom.utils.process_image import make_image_grid
        >>> import cv2
        >>> net = ShadowGenerationModel(device=0, model_type='ShadowGeneration')
        >>> comp_img = '../tests/shadow_generation/composite/1.png'
        >>> comp_mask = '../tests/shadow_generation/composite_mask/1.png'
        >>> preds = net(comp_img, comp_mask, number=5)
    """

    def __init__(self, device=0, model_type='ShadowGeneration', **kwargs):
        assert model_type in model_set, f'Not implementation for {model_type}'
        self.model_type = model_type
        self.option = kwargs
        weight_path = os.path.join(cur_dir, 'pretrained_models', 'Shadow_cldm.pth')
        download_pretrained_model(weight_path)
        self.device = check_gpu_device(device)
        self.build_pretrained_model(weight_path)
        self.build_data_transformer()

    def build_pretrained_model(self, weight_path):
        config = os.path.join(cur_dir, 'source', 'configs', 'cldm_v15.yaml')
        model = create_model(config).cpu()
        model.load_state_dict(load_state_dict(weight_path, location='cpu'), strict=False)
        self.model = model.to(self.device).eval()
        self.sampler = DDIMSampler(self.model)
        self.sample_steps = self.option.get('sample_steps', 50)
        self.use_fp16 = self.option.get('fp16', True)

    def build_data_transformer(self):
        self.image_size = 512

    def inputs_preprocess(self, composite_image, composite_mask):
        img = read_image_opencv(composite_image)
        mask = read_mask_opencv(composite_mask)
        self.ori_size = img.shape[:2]
        img = cv2.resize(img, (self.image_size, self.image_size))
        mask = cv2.resize(mask, (self.image_size, self.image_size), interpolation=cv2.INTER_NEAREST)
        img = cv2.cvtColor(img, cv2.COLOR_BGR2RGB)
        hint = np.concatenate([img, mask[:, :, None]], axis=-1).astype(np.float32) / 255.0
        control = torch.from_numpy(hint).to(self.device)
        control = einops.rearrange(control, 'h w c -> 1 c h w')
        return control

    def outputs_postprocess(self, samples):
        samples = (einops.rearrange(samples, 'b c h w -> b h w c') * 127.5 + 127.5).cpu().numpy().clip(0, 255).astype(np.uint8)
        outputs = []
        for sample in samples:
            sample = cv2.cvtColor(sample, cv2.COLOR_RGB2BGR)
            sample = cv2.resize(sample, (self.ori_size[1], self.ori_size[0]))
            outputs.append(sample)
        return outputs

    @torch.no_grad()
    def __call__(self, composite_image, composite_mask, number=5, seed=42):
        """
        Generate shadows for the foreground object of the composite image.

        Args:
            composite_image (str | numpy.ndarray): The path to composite image or the compposite image in ndarray form.
            composite_mask (str | numpy.ndarray): Mask of composite image which indicates the foreground object region in the composite image.
            number (int): Number of images should be generated.
            seed (int): random seed.

        Returns:
            generated_images (list of numpy.ndarray): The generated images with shadows.
        """
        seed_everything(seed)
        control = self.inputs_preprocess(composite_image, composite_mask)
        control = control.repeat(number, 1, 1, 1)
        H, W = self.image_size, self.image_size
        cond = {"c_concat": [control], "c_crossattn": [self.model.get_learned_conditioning([''] * number)]}
        un_cond = {"c_concat": [control], "c_crossattn": [self.model.get_learned_conditioning([''] * number)]}
        shape = (4, H // 8, W // 8)

        with torch.cuda.amp.autocast(enabled=self.use_fp16):
            samples, _ = self.sampler.sample(self.sample_steps, number, shape, cond,
                                             verbose=False, eta=0.0,
                                             unconditional_guidance_scale=1.0,
                                             unconditional_conditioning=un_cond)
            x_samples = self.model.decode_first_stage(samples)
        outputs = self.outputs_postprocess(x_samples.float())
        torch.cuda.empty_cache()
        return outputs
