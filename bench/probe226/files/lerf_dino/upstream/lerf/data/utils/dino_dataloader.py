import typing
from pathlib import Path

import numpy as np
import torch
from torchvision import transforms
from tqdm import tqdm

from lerf.data.utils.dino_extractor import ViTExtractor
from lerf.data.utils.feature_dataloader import FeatureDataloader


class DinoDataloader(FeatureDataloader):
    dino_model_type = "dino_vits8"
    dino_stride = 8
    dino_load_size = 500
    dino_layer = 11
    dino_facet = "key"
    dino_bin = False

    def __init__(
        self,
        cfg: dict,
        device: torch.device,
        image_list: torch.Tensor,
        cache_path: str = None,
    ):
        assert "image_shape" in cfg
        super().__init__(cfg, device, image_list, cache_path)

    def create(self, image_list):
        extractor = ViTExtractor(self.dino_model_type, self.dino_stride)
        preproc_image_lst = extractor.preprocess(image_list, self.dino_load_size)[0].to(self.device)

        dino_embeds = []
        for image in tqdm(preproc_image_lst, desc="dino", total=len(image_list), leave=False):
            with torch.no_grad():
                descriptors = extractor.extract_descriptors(
                    image.unsqueeze(0),
                    [self.dino_layer],
                    self.dino_facet,
                    self.dino_bin,
                )
            descriptors = descriptors.reshape(extractor.num_patches[0], extractor.num_patches[1], -1)
            dino_embeds.append(descriptors.cpu().detach())

        self.data = torch.stack(dino_embeds, dim=0)

    def __call__(self, img_points):
        # img_points: (B, 3) # (img_ind, x, y)
        img_scale = (
            self.data.shape[1] / self.cfg["image_shape"][0],
            self.data.shape[2] / self.cfg["image_shape"][1],
        )
        x_ind, y_ind = (img_points[:, 1] * img_scale[0]).long(), (img_points[:, 2] * img_scale[1]).long()
        return (self.data[img_points[:, 0].long(), x_ind, y_ind]).to(self.device)


class ViTExtractorLite:
    '''Minimal DINO feature extractor (subset of the dino-vit-features ViTExtractor).

    The original extractor hard-codes the GPU; we keep that behaviour because the
    dataloader is only ever constructed inside the nerfstudio trainer.
    '''

    def __init__(self, model_type: str = "dino_vits8", stride: int = 4, model: torch.nn.Module = None, device: str = "cuda"):
        self.model_type = model_type
        self.device = device
        if model is not None:
            self.model = model
        else:
            self.model = torch.hub.load("facebookresearch/dino:main", model_type)

        self.model = ViTExtractorLite.patch_vit_resolution(self.model, stride=stride)
        self.model.eval()
        self.model.to(self.device)
        self.p = self.model.patch_embed.patch_size
        if type(self.p) == tuple:
            self.p = self.p[0]
        self.stride = self.model.patch_embed.proj.stride

        self.mean = (0.485, 0.456, 0.406) if "dino" in self.model_type else (0.5, 0.5, 0.5)
        self.std = (0.229, 0.224, 0.225) if "dino" in self.model_type else (0.5, 0.5, 0.5)

        self._feats = []
        self.hook_handlers = []
        self.load_size = None
        self.num_patches = None

    @staticmethod
    def patch_vit_resolution(model: torch.nn.Module, stride: int) -> torch.nn.Module:
        patch_size = model.patch_embed.patch_size
        if type(patch_size) == tuple:
            patch_size = patch_size[0]
        if stride == patch_size:  # nothing to do
            return model
        stride = (stride, stride)
        model.patch_embed.proj.stride = stride
        return model

    def preprocess(self, images, load_size: typing.Union[int, typing.Tuple[int, int]] = None):
        prep = transforms.Compose(
            [
                transforms.Resize(load_size, interpolation=transforms.InterpolationMode.BICUBIC, antialias=True),
                transforms.Normalize(mean=self.mean, std=self.std),
            ]
        )
        prep_img = prep(images)
        return prep_img, images

    def _get_hook(self, facet: str):
        if facet in ["attn", "token"]:

            def _hook(model, input, output):
                self._feats.append(output)

            return _hook

        facet_idx = {"query": 0, "key": 1, "value": 2}[facet]

        def _inner_hook(module, input, output):
            input = input[0]
            B, N, C = input.shape
            qkv = module.qkv(input).reshape(B, N, 3, module.num_heads, C // module.num_heads).permute(2, 0, 3, 1, 4)
            self._feats.append(qkv[facet_idx])  # Bxhxtxd

        return _inner_hook

    def _register_hooks(self, layers, facet: str) -> None:
        for block_idx, block in enumerate(self.model.blocks):
            if block_idx in layers:
                if facet == "token":
                    self.hook_handlers.append(block.register_forward_hook(self._get_hook(facet)))
                elif facet == "attn":
                    self.hook_handlers.append(block.attn.attn_drop.register_forward_hook(self._get_hook(facet)))
                elif facet in ["key", "query", "value"]:
                    self.hook_handlers.append(block.attn.register_forward_hook(self._get_hook(facet)))
                else:
                    raise TypeError(f"{facet} is not a supported facet.")

    def _unregister_hooks(self) -> None:
        for handle in self.hook_handlers:
            handle.remove()
        self.hook_handlers = []

    def extract_descriptors(self, batch: torch.Tensor, layer: int = 11, facet: str = "key") -> torch.Tensor:
        B, C, H, W = batch.shape
        self._feats = []
        self._register_hooks([layer], facet)
        _ = self.model(batch.cuda())
        self._unregister_hooks()
        self.load_size = (H, W)
        self.num_patches = (
            1 + (H - self.p) // self.stride[0],
            1 + (W - self.p) // self.stride[1],
        )
        x = self._feats[0]
        desc = x.permute(0, 2, 3, 1).flatten(start_dim=-2, end_dim=-1).unsqueeze(dim=1)
        return desc


def load_cached_features(cache_path: Path, device: torch.device) -> typing.Optional[torch.Tensor]:
    '''Load a .npy feature cache written by FeatureDataloader.save().'''
    cache_path = Path(cache_path)
    if not cache_path.with_suffix(".npy").exists():
        return None
    arr = np.load(cache_path.with_suffix(".npy"))
    return torch.from_numpy(arr).to(device)


def free_extractor(extractor) -> None:
    '''Drop the DINO backbone after caching; it is ~85MB of fp32 weights on the GPU.'''
    del extractor.model
    torch.cuda.empty_cache()
