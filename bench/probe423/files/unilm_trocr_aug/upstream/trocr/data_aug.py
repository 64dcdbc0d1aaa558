import random

import cv2
import numpy as np
import torchvision.transforms as transforms
from PIL import Image, ImageFilter


class ResizePad(object):
    """Resize keeping the aspect ratio, then pad to the target size with white."""

    def __init__(self, imgH=64, imgW=3072, keep_ratio_with_pad=True):
        self.imgH = imgH
        self.imgW = imgW
        assert keep_ratio_with_pad is True
        self.keep_ratio_with_pad = keep_ratio_with_pad

    def __call__(self, im):
        old_size = im.size  # old_size[0] is in (width, height) format

        ratio = float(self.imgH) / old_size[1]
        new_size = tuple([int(x * ratio) for x in old_size])
        im = im.resize(new_size, Image.BICUBIC)

        new_im = Image.new("RGB", (self.imgW, self.imgH), (255, 255, 255))
        new_im.paste(im, (0, 0))
        return new_im


class WeightedRandomChoice:

    def __init__(self, trans, weights=None):
        self.trans = trans
        if not weights:
            self.weights = [1] * len(trans)
        else:
            assert len(trans) == len(weights)
            self.weights = weights

    def __call__(self, img):
        t = random.choices(self.trans, weights=self.weights, k=1)[0]
        try:
            tfm_img = t(img)
        except Exception as e:
            print("Error during data_aug: " + str(e))
            return img
        return tfm_img

    def __repr__(self):
        format_string = self.__class__.__name__ + "("
        for t in self.trans:
            format_string += "\n"
            format_string += "    {0}".format(t)
        format_string += "\n)"
        return format_string


class Dilation(object):

    def __init__(self, kernel=3):
        super().__init__()
        self.kernel = kernel

    def forward(self, img):
        return img.filter(ImageFilter.MaxFilter(self.kernel))

    def __call__(self, img):
        return self.forward(img)

    def __repr__(self):
        return self.__class__.__name__ + "(kernel={})".format(self.kernel)


class Erosion(object):

    def __init__(self, kernel=3):
        super().__init__()
        self.kernel = kernel

    def forward(self, img):
        return img.filter(ImageFilter.MinFilter(self.kernel))

    def __call__(self, img):
        return self.forward(img)

    def __repr__(self):
        return self.__class__.__name__ + "(kernel={})".format(self.kernel)


class Underline(object):

    def __init__(self):
        pass

    def __call__(self, img):
        img_np = np.array(img.convert("L"))
        black_pixels = np.where(img_np < 50)
        try:
            y1 = max(black_pixels[0])
            x0 = min(black_pixels[1])
            x1 = max(black_pixels[1])
        except ValueError:
            return img
        for x in range(x0, x1):
            for y in range(y1, y1 - 3, -1):
                try:
                    img.putpixel((x, y), (0, 0, 0))
                except Exception:
                    continue
        return img


class KeepOriginal(object):

    def __call__(self, img):
        return img


class ElasticLine(object):
    """Cheap elastic distortion along x, handwriting-style."""

    def __init__(self, alpha=6.0, sigma=4.0):
        self.alpha = alpha
        self.sigma = sigma

    def __call__(self, img):
        arr = np.array(img)
        h, w = arr.shape[:2]
        dx = cv2.GaussianBlur((np.random.rand(h, w) * 2 - 1).astype(np.float32), (0, 0), self.sigma)
        dy = cv2.GaussianBlur((np.random.rand(h, w) * 2 - 1).astype(np.float32), (0, 0), self.sigma)
        x, y = np.meshgrid(np.arange(w), np.arange(h))
        map_x = (x + self.alpha * dx).astype(np.float32)
        map_y = (y + self.alpha * dy).astype(np.float32)
        out = cv2.remap(arr, map_x, map_y, interpolation=cv2.INTER_LINEAR,
                        borderMode=cv2.BORDER_CONSTANT, borderValue=(255, 255, 255))
        return Image.fromarray(out)


def build_data_aug(size, mode, resnet=False, resizepad=False, resize_only=True):
    if resnet:
        norm_tfm = transforms.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))
    else:
        norm_tfm = transforms.Normalize(0.5, 0.5)
    if resizepad:
        resize_tfm = ResizePad(imgH=size[0], imgW=size[1])
    else:
        resize_tfm = transforms.Resize(size, interpolation=transforms.InterpolationMode.BICUBIC)
    if mode == "train":
        return transforms.Compose([
            WeightedRandomChoice([
                # transforms.RandomHorizontalFlip(p=1),
                transforms.RandomRotation(degrees=(-10, 10), expand=True, fill=255),
                transforms.GaussianBlur(3),
                Dilation(3),
                Erosion(3),
                transforms.Resize((size[0] // 3, size[1] // 3),
                                  interpolation=transforms.InterpolationMode.NEAREST),
                Underline(),
                ElasticLine(),
                KeepOriginal(),
            ]),
            resize_tfm,
            transforms.ToTensor(),
            norm_tfm,
        ])
    else:
        return transforms.Compose([
            resize_tfm,
            transforms.ToTensor(),
            norm_tfm,
        ])
