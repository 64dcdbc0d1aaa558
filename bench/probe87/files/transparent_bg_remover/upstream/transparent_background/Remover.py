import os
import sys
import shutil
import warnings
import argparse

import cv2
import numpy as np
import torch
import torch.nn.functional as F
import torchvision.transforms as transforms

from PIL import Image
from packaging import version

filepath = os.path.abspath(__file__)
repopath = os.path.split(filepath)[0]
sys.path.append(repopath)

from transparent_background.InSPyReNet import InSPyReNet_SwinB
from transparent_background.utils import (
    load_config,
    dynamic_resize,
    tonumpy,
    totensor,
    normalize,
    download_and_unzip,
    ImageLoader,
    VideoLoader,
    WebcamLoader,
)


class Remover:
    def __init__(self, mode="base", jit=False, device=None, ckpt=None, fp16=False):
        """
        Args:
            mode   (str): Choose among below options
                                   base -> slow & large gpu memory required, high quality results
                                   fast -> resize input into small size for fast computation
                                   base-nightly -> nightly release for base mode
            jit    (bool): use TorchScript for fast computation
            device (str, optional): specifying device for computation. find available GPU resource if not specified.
            ckpt   (str, optional): specifying model checkpoint. find downloaded checkpoint or try download if not specified.
            fp16   (bool): run the network under autocast (GPU only)
        """
        cfg_path = os.environ.get("TRANSPARENT_BACKGROUND_FILE_PATH", os.path.abspath(os.path.expanduser("~")))
        home_dir = os.path.join(cfg_path, ".transparent-background")
        os.makedirs(home_dir, exist_ok=True)

        if not os.path.isfile(os.path.join(home_dir, "config.yaml")):
            shutil.copy(os.path.join(repopath, "config.yaml"), os.path.join(home_dir, "config.yaml"))
        self.meta = load_config(os.path.join(home_dir, "config.yaml"))[mode]

        if device is not None:
            self.device = device
        else:
            self.device = "cpu"
            if torch.cuda.is_available():
                self.device = "cuda:0"
            elif version.parse(torch.__version__) >= version.parse("1.13") and torch.backends.mps.is_available():
                self.device = "mps:0"

        self.fp16 = fp16

        download = False
        if ckpt is None:
            ckpt_dir = home_dir
            ckpt_name = self.meta.ckpt_name

            if not os.path.isfile(os.path.join(ckpt_dir, ckpt_name)):
                download = True
            elif self.meta.md5 != _md5(os.path.join(ckpt_dir, ckpt_name)):
                warnings.warn("Checkpoints hash mismatch, downloading the checkpoint again.")
                download = True

            if download:
                download_and_unzip(self.meta.url, ckpt_dir, ckpt_name)
        else:
            ckpt_dir, ckpt_name = os.path.split(os.path.abspath(ckpt))

        self.model = InSPyReNet_SwinB(depth=64, pretrained=False, threshold=None, **self.meta)
        self.model.eval()
        self.model.load_state_dict(
            torch.load(os.path.join(ckpt_dir, ckpt_name), map_location="cpu", weights_only=True),
            strict=True,
        )
        self.model = self.model.to(self.device)

        if jit:
            # The traced graph is specialised on the device, so cache one file per device.
            ckpt_name = self.meta.ckpt_name.replace(".pth", "_{}.pt".format(str(self.device).replace(":", "")))
            try:
                traced_model = torch.jit.load(os.path.join(ckpt_dir, ckpt_name), map_location=self.device)
                del self.model
                self.model = traced_model
            except Exception:
                traced_model = torch.jit.trace(
                    self.model,
                    torch.rand(1, 3, *self.meta.base_size).to(self.device),
                    strict=True,
                )
                del self.model
                self.model = traced_model
                torch.jit.save(self.model, os.path.join(ckpt_dir, ckpt_name))

        resize_tf = transforms.Resize(self.meta.base_size, antialias=True)
        if self.meta.get("dynamic", False):
            resize_tf = dynamic_resize(L=1280)

        self.transform = transforms.Compose(
            [
                resize_tf,
                tonumpy(),
                normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
                totensor(),
            ]
        )

        self.background = {"img": None, "name": None, "shape": None}
        desc = "Mode={}, Device={}, Torchscript={}".format(mode, self.device, "enabled" if jit else "disabled")
        print("Settings -> {}".format(desc))

    def _forward(self, x):
        with torch.no_grad():
            if self.fp16 and "cuda" in str(self.device):
                with torch.autocast(device_type="cuda", dtype=torch.float16):
                    pred = self.model(x)
                pred = pred.float()
            else:
                pred = self.model(x)
        return pred

    def process(self, img, type="rgba", threshold=None, reverse=False):
        """
        Args:
            img (PIL.Image or np.ndarray): input image as PIL.Image or np.ndarray type
            type (str): output type option as below.
                        'rgba' will generate RGBA output regarding saliency score as an alpha map.
                        'green' will change the background with green screen.
                        'white' will change the background with white color.
                        '[255, 0, 0]' will change the background with color code [255, 0, 0].
                        'blur' will blur the background.
                        'overlay' will cover the salient object with translucent green color, and highlight the edges.
                        'map' will output saliency map only.
                        Another image file (e.g., 'samples/backgroud.png') will be used as a background.
            threshold (float): produce hard prediction w.r.t specified threshold value (0.0 ~ 1.0)
        Returns:
            PIL.Image: output image as PIL.Image type
        """
        if isinstance(img, np.ndarray):
            is_numpy = True
            shape = img.shape[:2]
            img = Image.fromarray(img)
        else:
            is_numpy = False
            shape = img.size[::-1]

        x = self.transform(img)
        x = x.unsqueeze(0)
        x = x.to(self.device)

        pred = self._forward(x)
        pred = F.interpolate(pred, shape, mode="bilinear", align_corners=True)
        pred = pred.data.cpu()
        pred = pred.numpy().squeeze()

        if threshold is not None:
            pred = (pred > float(threshold)).astype(np.float64)
        if reverse:
            pred = 1 - pred

        img = np.array(img)

        if type.startswith("["):
            type = [int(i) for i in type[1:-1].split(",")]

        if type == "map":
            img = (np.stack([pred] * 3, axis=-1) * 255).astype(np.uint8)
        elif type == "rgba":
            if threshold is None:
                # pymatting is imported lazily: it pulls numba and is slow to import
                from pymatting.foreground.estimate_foreground_ml import estimate_foreground_ml

                img = estimate_foreground_ml(img / 255.0, pred)
                img = (img * 255).astype(np.uint8)
            r, g, b = cv2.split(img)
            pred = (pred * 255).astype(np.uint8)
            img = cv2.merge([r, g, b, pred])
        elif type == "green":
            bg = np.stack([np.ones_like(pred)] * 3, axis=-1) * [120, 255, 155]
            img = img * pred[..., np.newaxis] + bg * (1 - pred[..., np.newaxis])
        elif type == "white":
            bg = np.stack([np.ones_like(pred)] * 3, axis=-1) * [255, 255, 255]
            img = img * pred[..., np.newaxis] + bg * (1 - pred[..., np.newaxis])
        elif type == "blur":
            img = img * pred[..., np.newaxis] + cv2.GaussianBlur(img, (0, 0), 15) * (1 - pred[..., np.newaxis])
        elif isinstance(type, list):
            bg = np.stack([np.ones_like(pred)] * 3, axis=-1) * type
            img = img * pred[..., np.newaxis] + bg * (1 - pred[..., np.newaxis])
        else:
            if self.background["name"] != type:
                background_img = Image.open(type).convert("RGB")
                self.background["img"] = np.array(background_img.resize(img.shape[1::-1]))
                self.background["name"] = type
                self.background["shape"] = img.shape[1::-1]
            elif self.background["shape"] != img.shape[1::-1]:
                self.background["img"] = cv2.resize(self.background["img"], img.shape[1::-1])
                self.background["shape"] = img.shape[1::-1]
            img = img * pred[..., np.newaxis] + self.background["img"] * (1 - pred[..., np.newaxis])

        if is_numpy:
            return img.astype(np.uint8)
        return Image.fromarray(img.astype(np.uint8))


def _md5(fname):
    import hashlib

    hash_md5 = hashlib.md5()
    with open(fname, "rb") as f:
        for chunk in iter(lambda: f.read(4096), b""):
            hash_md5.update(chunk)
    return hash_md5.hexdigest()


def console():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", "-s", type=str, help="Path to the source. Single image, video, directory or '0' for webcam")
    parser.add_argument("--dest", "-d", type=str, default=None, help="Path to destination. Results will be stored in current directory if not specified.")
    parser.add_argument("--threshold", "-th", type=float, default=None, help="Designate threhsold. If specified, it will output hard prediction above threshold.")
    parser.add_argument("--type", "-t", type=str, default="rgba", help="Specify output type.")
    parser.add_argument("--ckpt", "-c", type=str, default=None, help="Designate checkpoint.")
    parser.add_argument("--fast", "-f", action="store_true", help="Speed up inference with smaller input resolution")
    parser.add_argument("--jit", "-j", action="store_true", help="Speed up inference with torchscript")
    parser.add_argument("--fp16", action="store_true", help="Use mixed precision on CUDA devices")
    parser.add_argument("--device", type=str, default=None, help="Device, e.g. 'cuda:1' or 'cpu'. Picks the first GPU if omitted.")
    parser.add_argument("--reverse", "-R", action="store_true", help="Output will be reversed (foreground becomes background)")
    args = parser.parse_args()

    if args.source.isnumeric():
        loader = WebcamLoader(int(args.source))
    elif os.path.isdir(args.source) or os.path.splitext(args.source)[-1].lower() in (".jpg", ".jpeg", ".png"):
        loader = ImageLoader(args.source)
    else:
        loader = VideoLoader(args.source)

    remover = Remover(
        mode="fast" if args.fast else "base",
        jit=args.jit,
        device=args.device,
        ckpt=args.ckpt,
        fp16=args.fp16,
    )

    save_dir = args.dest if args.dest is not None else os.getcwd()
    os.makedirs(save_dir, exist_ok=True)

    for img, name in loader:
        out = remover.process(img, type=args.type, threshold=args.threshold, reverse=args.reverse)
        ext = ".png" if args.type in ("rgba", "map") else ".jpg"
        out.save(os.path.join(save_dir, os.path.splitext(name)[0] + ext))


if __name__ == "__main__":
    console()
