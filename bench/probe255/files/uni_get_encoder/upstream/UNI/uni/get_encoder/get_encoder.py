import os
import logging
from os.path import join as j_

import timm
import torch
import torch.nn as nn
from torchvision import transforms
from huggingface_hub import login, hf_hub_download

from .. import HF_TOKEN_ENV

logger = logging.getLogger(__name__)

# a few encoders were trained with non-ImageNet statistics
_IMG_NORM = {
    "imagenet": {"mean": (0.485, 0.456, 0.406), "std": (0.229, 0.224, 0.225)},
    "openai_clip": {"mean": (0.48145466, 0.4578275, 0.40821073), "std": (0.26862954, 0.26130258, 0.27577711)},
    "uniform": {"mean": (0.5, 0.5, 0.5), "std": (0.5, 0.5, 0.5)},
}


def get_norm_constants(which_img_norm: str = "imagenet"):
    constants = _IMG_NORM[which_img_norm]
    return constants["mean"], constants["std"]


def get_eval_transforms(mean, std, target_img_size=-1, center_crop=False):
    trsforms = []

    if target_img_size > 0:
        trsforms.append(transforms.Resize(target_img_size))
    if center_crop:
        assert target_img_size > 0, "target_img_size must be set if center_crop is True"
        trsforms.append(transforms.CenterCrop(target_img_size))

    trsforms.append(transforms.ToTensor())
    if mean is not None and std is not None:
        trsforms.append(transforms.Normalize(mean, std))
    trsforms = transforms.Compose(trsforms)

    return trsforms


def has_uni(assets_dir):
    ckpt_path = j_(assets_dir, "vit_large_patch16_224.dinov2.uni_mass100k", "pytorch_model.bin")
    return os.path.isfile(ckpt_path), ckpt_path


def download_uni(assets_dir):
    token = os.environ.get(HF_TOKEN_ENV)
    if token is not None:
        login(token=token)
    local_dir = j_(assets_dir, "vit_large_patch16_224.dinov2.uni_mass100k")
    os.makedirs(local_dir, exist_ok=True)
    hf_hub_download("MahmoodLab/UNI", filename="pytorch_model.bin", local_dir=local_dir, force_download=True)
    return j_(local_dir, "pytorch_model.bin")


def get_encoder(
    enc_name="uni",
    checkpoint="pytorch_model.bin",
    assets_dir=os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../assets/ckpts"),
    which_img_norm="imagenet",
    test_batch=0,
    overwrite=False,
    device=torch.device("cuda" if torch.cuda.is_available() else "cpu"),
    **kwargs,
):
    """
    Get image encoder (and its eval transform) by name.

    Args:
        enc_name: one of {"uni", "resnet50_trunc", "conch"}
        checkpoint: file name of the state dict inside ``assets_dir/<enc_name>``
        test_batch: if > 0, run a random batch through the model as a smoke test
        device: where the encoder is placed; defaults to the first GPU when available
    """
    enc_name_presets = {
        "uni": "vit_large_patch16_224.dinov2.uni_mass100k",
    }
    enc_name = enc_name_presets.get(enc_name, enc_name)

    ### ResNet50 Truncated Encoder, Dim=1024, Pretrained=ImageNet
    if enc_name == "resnet50_trunc":
        from .resnet50_trunc import resnet50_trunc_imagenet
        model = resnet50_trunc_imagenet()
        assert which_img_norm == "imagenet"

    ### UNI (ViT-L/16, DINOv2 on Mass-100K)
    elif enc_name == "vit_large_patch16_224.dinov2.uni_mass100k":
        found, ckpt_path = has_uni(assets_dir)
        if not found:
            logger.info("UNI checkpoint not found under %s, downloading from the HF hub", assets_dir)
            ckpt_path = download_uni(assets_dir)

        uni_kwargs = {
            "model_name": "vit_large_patch16_224",
            "img_size": 224,
            "patch_size": 16,
            "init_values": 1e-5,
            "num_classes": 0,
            "dynamic_img_size": True,
        }
        model = timm.create_model(**uni_kwargs)
        state_dict = torch.load(ckpt_path, map_location="cpu")
        missing_keys, unexpected_keys = model.load_state_dict(state_dict, strict=True)
        logger.info(f"Missing Keys: {missing_keys}")
        logger.info(f"Unexpected Keys: {unexpected_keys}")

    ### CONCH image tower (ViT-B/16), projection head dropped
    elif enc_name == "conch":
        from conch.open_clip_custom import create_model_from_pretrained
        model, _ = create_model_from_pretrained("conch_ViT-B-16", checkpoint_path=j_(assets_dir, "conch", checkpoint))
        model.forward = lambda x: model.encode_image(x, proj_contrast=False, normalize=False)
        which_img_norm = "openai_clip"

    else:
        raise NotImplementedError(f"{enc_name} not implemented")

    logger.info(str(model))

    ### Send to device + eval mode
    model.eval()
    model.to(device)
    logger.info(f"Transferred model to {device}")

    ### Test batch
    if test_batch > 0:
        imgs = torch.rand((test_batch, 3, 224, 224), device=device)
        with torch.inference_mode():
            features = model(imgs)
        assert features.shape[0] == test_batch
        logger.info(f"Test batch successful, feature dimension: {features.size(1)}")

    mean, std = get_norm_constants(which_img_norm)
    eval_transform = get_eval_transforms(mean, std, target_img_size=224, center_crop=True)

    return model, eval_transform
