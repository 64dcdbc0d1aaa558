import os
import cv2
import numpy as np
import torch
import torchvision.transforms as transforms
from PIL import Image

from libcom.utils.model_download import download_pretrained_model, download_entire_folder
from libcom.utils.process_image import read_image_pil, read_mask_pil
from libcom.utils.environment import check_gpu_device
from .source.ObPlaNet_simple import ObPlaNet_resnet18
from .source.prepare_multi_fg_scales import prepare_multi_fg_scales

cur_dir = os.path.dirname(os.path.abspath(__file__))
model_set = ['FOPA']


class FOPAHeatMapModel:
    """
    Foreground object placement assessment model (FOPA): given a background and a foreground,
    predict a heat map of placement rationality for a set of candidate scales/locations.

    Args:
        device (str | torch.device): gpu id
        model_type (str): predefined model type.
        kwargs (dict): other parameters for building model

    Examples:
        >>> from libcom import FOPAHeatMapModel
        >>> net = FOPAHeatMapModel(device=0)
        >>> bboxes, heatmaps = net('../tests/heatMap/bg/test.jpg', '../tests/heatMap/fg/test.jpg',
        ...                        '../tests/heatMap/mask/test.jpg', cache_dir='./cache', heatmap_dir='./heatmap')
    """

    def __init__(self, device=0, model_type='FOPA', **kwargs):
        assert model_type in model_set, f'Not implementation for {model_type}'
        self.model_type = model_type
        self.option = kwargs
        weight_path = os.path.join(cur_dir, 'pretrained_models', 'FOPA.pth')
        download_pretrained_model(weight_path)
        sopa_weight = os.path.join(cur_dir, 'pretrained_models', 'SOPA.pth.tar')
        download_pretrained_model(sopa_weight)
        self.device = check_gpu_device(device)
        self.build_pretrained_model(weight_path, sopa_weight)
        self.build_data_transformer()

    def build_pretrained_model(self, weight_path, sopa_weight):
        model = ObPlaNet_resnet18(pretrained=False, sopa_weight=sopa_weight)
        state_dict = torch.load(weight_path, map_location='cpu')
        model.load_state_dict(state_dict, strict=True)
        self.model = model.to(self.device).eval()

    def build_data_transformer(self):
        self.image_size = 256
        self.fg_scale_num = self.option.get('fg_scale_num', 16)
        self.transforms = transforms.Compose([
            transforms.Resize((self.image_size, self.image_size)),
            transforms.ToTensor(),
            transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
        ])
        self.mask_transforms = transforms.Compose([
            transforms.Resize((self.image_size, self.image_size)),
            transforms.ToTensor()
        ])

    def inputs_preprocess(self, bg_img, fg_img, fg_mask):
        bg_t = self.transforms(bg_img).unsqueeze(0).to(self.device)
        fg_t = self.transforms(fg_img).unsqueeze(0).to(self.device)
        mask_t = self.mask_transforms(fg_mask).unsqueeze(0).to(self.device)
        return bg_t, fg_t, mask_t

    def outputs_postprocess(self, heatmap, bg_size):
        heatmap = heatmap.squeeze().float().cpu().numpy()
        heatmap = (heatmap - heatmap.min()) / (heatmap.max() - heatmap.min() + 1e-8)
        heatmap = (heatmap * 255).astype(np.uint8)
        heatmap = cv2.resize(heatmap, bg_size, interpolation=cv2.INTER_LINEAR)
        return heatmap

    @torch.no_grad()
    def __call__(self, background_image, foreground_image, foreground_mask, cache_dir, heatmap_dir):
        """
        Predict placement heat maps for several foreground scales and return the best boxes.

        Args:
            background_image (str | numpy.ndarray): The path to background image or the background image in ndarray form.
            foreground_image (str | numpy.ndarray): The path to foreground image or the background image in ndarray form.
            foreground_mask (str | numpy.ndarray): The path to foreground mask or the background image in ndarray form.
            cache_dir (str): intermediate multi-scale foregrounds are written here.
            heatmap_dir (str): heat maps are written here.

        Returns:
            bboxes (list): the best box (x1, y1, x2, y2) for each scale, heatmaps (list of str): heat map paths.
        """
        os.makedirs(cache_dir, exist_ok=True)
        os.makedirs(heatmap_dir, exist_ok=True)
        bg_img = read_image_pil(background_image)
        fg_img = read_image_pil(foreground_image)
        fg_mask = read_mask_pil(foreground_mask)
        bg_w, bg_h = bg_img.size

        scaled = prepare_multi_fg_scales(cache_dir, fg_img, fg_mask, bg_img, self.fg_scale_num)
        bboxes, heatmap_paths = [], []
        for idx, (scaled_fg, scaled_mask, (fg_w, fg_h)) in enumerate(scaled):
            bg_t, fg_t, mask_t = self.inputs_preprocess(bg_img, scaled_fg, scaled_mask)
            heatmap, _ = self.model(bg_t, fg_t, mask_t, 'test')
            heatmap = torch.softmax(heatmap, dim=1)[:, 1:2]
            hm = self.outputs_postprocess(heatmap, (bg_w, bg_h))

            # best centre location, clipped so that the scaled foreground stays inside the background
            y, x = np.unravel_index(np.argmax(hm), hm.shape)
            x1 = int(np.clip(x - fg_w // 2, 0, bg_w - fg_w))
            y1 = int(np.clip(y - fg_h // 2, 0, bg_h - fg_h))
            bboxes.append([x1, y1, x1 + fg_w, y1 + fg_h])

            save_path = os.path.join(heatmap_dir, f'{idx}_{fg_w}_{fg_h}.jpg')
            cv2.imwrite(save_path, cv2.applyColorMap(hm, cv2.COLORMAP_JET))
            heatmap_paths.append(save_path)
        return bboxes, heatmap_paths
