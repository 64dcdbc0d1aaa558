import os
import sys
import tqdm
import torch
import shutil
import argparse
import warnings

import numpy as np
import torch.nn.functional as F
import torchvision.transforms as transforms

from PIL import Image
from packaging import version

filepath = os.path.abspath(__file__)
repopath = os.path.split(filepath)[0]
sys.path.append(repopath)

from transparent_background.InSPyReNet import InSPyReNet_SwinB
from transparent_background.utils import *

warnings.filterwarnings("ignore")


class Remover:
    def __init__(self, mode="base", jit=False, device=None, ckpt=None, fp16=False, resize="static"):
        """
        Args:
            mode   (str): Choose among below options
                                   base -> slow & large gpu memory required, high quality results
                                   fast -> resize input into small size for fast computation
                                   base-nightly -> nightly release for base mode
            jit    (bool): use TorchScript for fast computation
            device (str, optional): specifying device for computation. find available GPU resource if not specified.
            ckpt   (str, optional): specifying model checkpoint. find downloaded checkpoint or try download if not specified.
            fp16   (bool, optional): half precision inference (GPU only).
            resize (str, optional): "static" resizes to base_size, "dynamic" keeps the aspect ratio.
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
            elif (
                version.parse(torch.__version__) >= version.parse("1.13")
                and torch.backends.mps.is_available()
            ):
                self.device = "mps:0"

        self.fp16 = fp16 and "cuda" in str(self.device)  # fp16 only makes sense on GPU

        download = False
        if ckpt is None:
            ckpt_dir = home_dir
            ckpt_name = self.meta.ckpt_name

            if not os.path.isfile(os.path.join(ckpt_dir, ckpt_name)):
                download = True
            elif (
                self.meta.md5
                != hashlib.md5(
                    open(os.path.join(ckpt_dir, ckpt_name), "rb").read()
                ).hexdigest()
            ):
                if self.meta.md5 is not None:
                    download = True

            if download:
                if 'drive.google.com' in self.meta.url:
                    gdown.download(self.meta.url, os.path.join(ckpt_dir, ckpt_name), fuzzy=True, proxy=self.meta.http_proxy)
                else:
                    download_and_unzip(ckpt_name, self.meta.url, ckpt_dir)
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
            ckpt_name = self.meta.ckpt_name.replace(
                ".pth", "_{}.pt".format(self.device)
            )
            try:
                traced_model = torch.jit.load(
                    os.path.join(ckpt_dir, ckpt_name), map_location=self.device
                )
                del self.model
                self.model = traced_model
            except:
                traced_model = torch.jit.trace(
                    self.model,
                    torch.rand(1, 3, *self.meta.base_size).to(self.device),
                    strict=True,
                )
                del self.model
                self.model = traced_model
                torch.jit.save(self.model, os.path.join(ckpt_dir, ckpt_name))
            if resize != "static":
                warnings.warn("Resizing method for TorchScript mode only supports static resize. Fallback to static.")
                resize = "static"

        resize_tf = static_resize(self.meta.base_size)
        if resize == "dynamic":
            resize_tf = dynamic_resize(L=1280)

        self.transform = transforms.Compose(
            [
                resize_tf,
                tonumpy(),
                normalize(
                    mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]
                ),
                totensor(),
            ]
        )

        self.background = {"img": None, "name": None, "shape": None}
        desc = "Mode={}, Device={}, Torchscript={}".format(
            mode, self.device, "enabled" if jit else "disabled"
        )
        print("Settings -> {}".format(desc))

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
                        Another image file (e.g., 'samples/backgroud.png') will be used as a background, and the object will be overlapped on it.
            threshold (float or str, optional): produce hard prediction w.r.t specified threshold value (0.0 ~ 1.0)
        Returns:
            PIL.Image: output image
        """

        if isinstance(img, np.ndarray):
            is_numpy = True
            img = Image.fromarray(img.astype(np.uint8))
        else:
            is_numpy = False

        shape = img.size[::-1]
        x = self.transform(img)
        x = x.unsqueeze(0)
        x = x.to(self.device)

        with torch.no_grad(), torch.cuda.amp.autocast(enabled=self.fp16):
            pred = self.model(x)

        pred = F.interpolate(pred.float(), shape, mode="bilinear", align_corners=True)
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
                # pymatting is imported here to avoid the overhead in other cases.
                try:
                    from pymatting.foreground.estimate_foreground_ml_cupy import estimate_foreground_ml_cupy as estimate_foreground_ml
                except ImportError:
                    try:
                        from pymatting.foreground.estimate_foreground_ml_pyopencl import estimate_foreground_ml_pyopencl as estimate_foreground_ml
                    except ImportError:
                        from pymatting import estimate_foreground_ml
                img = estimate_foreground_ml(img / 255.0, pred)
                img = 255 * np.clip(img, 0., 1.) + 0.5
                img = img.astype(np.uint8)

            r, g, b = cv2.split(img)
            pred = (pred * 255).astype(np.uint8)
            img = cv2.merge([r, g, b, pred])

        elif type == "green":
            bg = np.stack([np.ones_like(pred)] * 3, axis=-1) * [120, 255, 155]
            img = img * pred[..., np.newaxis] + bg * (1 - pred[..., np.newaxis])

        elif type == "white":
            bg = np.stack([np.ones_like(pred)] * 3, axis=-1) * [255, 255, 255]
            img = img * pred[..., np.newaxis] + bg * (1 - pred[..., np.newaxis])

        elif len(type) == 3:
            print(type)
            bg = np.stack([np.ones_like(pred)] * 3, axis=-1) * type
            img = img * pred[..., np.newaxis] + bg * (1 - pred[..., np.newaxis])

        elif type == "blur":
            img = img * pred[..., np.newaxis] + cv2.GaussianBlur(img, (0, 0), 15) * (
                1 - pred[..., np.newaxis]
            )

        elif type == "overlay":
            bg = (
                np.stack([np.ones_like(pred)] * 3, axis=-1) * [120, 255, 155] + img
            ) // 2
            img = bg * pred[..., np.newaxis] + img * (1 - pred[..., np.newaxis])
            border = cv2.Canny(((pred > 0.5) * 255).astype(np.uint8), 50, 100)
            img[border != 0] = [120, 255, 155]

        elif type.lower().endswith(IMG_EXTS):
            if self.background["name"] != type:
                background_img = cv2.cvtColor(cv2.imread(type), cv2.COLOR_BGR2RGB)
                background_img = cv2.resize(background_img, img.shape[:2][::-1])

                self.background["img"] = background_img
                self.background["shape"] = img.shape[:2][::-1]
                self.background["name"] = type

            elif self.background["shape"] != img.shape[:2][::-1]:
                self.background["img"] = cv2.resize(self.background["img"], img.shape[:2][::-1])
                self.background["shape"] = img.shape[:2][::-1]

            img = img * pred[..., np.newaxis] + self.background["img"] * (
                1 - pred[..., np.newaxis]
            )

        if is_numpy:
            return img.astype(np.uint8)
        else:
            return Image.fromarray(img.astype(np.uint8))


    def process_video(self, src, dst, type="rgba", threshold=None, reverse=False):
        """Frame-by-frame background removal; `type` as in `process`. rgba output is written as png frames."""
        cap = cv2.VideoCapture(src)
        fps = cap.get(cv2.CAP_PROP_FPS)
        width = int(cap.get(cv2.CAP_PROP_FRAME_WIDTH))
        height = int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT))
        total = int(cap.get(cv2.CAP_PROP_FRAME_COUNT))

        writer = None
        if type != "rgba":
            fourcc = cv2.VideoWriter_fourcc(*"mp4v")
            writer = cv2.VideoWriter(dst, fourcc, fps, (width, height))
        else:
            os.makedirs(dst, exist_ok=True)

        for idx in tqdm.tqdm(range(total), desc=os.path.basename(src)):
            ret, frame = cap.read()
            if not ret:
                break
            img = Image.fromarray(cv2.cvtColor(frame, cv2.COLOR_BGR2RGB))
            out = self.process(img, type=type, threshold=threshold, reverse=reverse)
            if writer is not None:
                writer.write(cv2.cvtColor(np.array(out), cv2.COLOR_RGB2BGR))
            else:
                out.save(os.path.join(dst, "{:06d}.png".format(idx)))

        cap.release()
        if writer is not None:
            writer.release()
        if "cuda" in str(self.device):
            torch.cuda.empty_cache()


def console():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", "-s", type=str, help="Path to the source. Single image, video, directory of images, directory of videos is supported.")
    parser.add_argument("--dest", "-d", type=str, default=None, help="Path to destination. Results will be stored in current directory if not specified.")
    parser.add_argument("--threshold", "-t", type=float, default=None, help="Designate threshold. If specified, it will output hard prediction above threshold. If not specified, it will output soft prediction.")
    parser.add_argument("--type", "-k", type=str, default="rgba", help="Specify output type. ex) rgba map green blur overlay")
    parser.add_argument("--ckpt", "-c", type=str, default=None, help="Designate checkpoint. If not specified, it will download or load pre-downloaded default checkpoint.")
    parser.add_argument("--device", "-D", type=str, default=None, help="Designate device. If not specified, it will find available device.")
    parser.add_argument("--mode", "-m", type=str, default="base", help="choose between base and fast mode. Also, use base-nightly for nightly release checkpoint.")
    parser.add_argument("--fp16", action="store_true", help="half precision inference on GPU")
    parser.add_argument("--jit", "-j", action="store_true", help="Speed up inference with torchscript")
    args = parser.parse_args()

    remover = Remover(mode=args.mode, jit=args.jit, device=args.device, ckpt=args.ckpt, fp16=args.fp16)

    if os.path.isdir(args.source):
        sources = [os.path.join(args.source, f) for f in sorted(os.listdir(args.source)) if f.lower().endswith(IMG_EXTS)]
    else:
        sources = [args.source]

    dest = args.dest if args.dest is not None else os.getcwd()
    os.makedirs(dest, exist_ok=True)
    for src in tqdm.tqdm(sources):
        img = Image.open(src).convert("RGB")
        out = remover.process(img, type=args.type, threshold=args.threshold)
        name = os.path.splitext(os.path.basename(src))[0]
        out.save(os.path.join(dest, "{}_{}.png".format(name, args.type)))


if __name__ == "__main__":
    console()
