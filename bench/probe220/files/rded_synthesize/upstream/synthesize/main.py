"""RDED synthesis: Realistic, Diverse and Efficient Dataset Distillation.

For each class, ``mipc`` real images are loaded; from each one ``num_crop`` random crops are scored by the
observer (teacher) model, the most "realistic" crop (lowest cross-entropy) is kept, and ``factor**2`` of the
best crops are stitched into one synthetic image.
"""
import os
import random
import shutil

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from PIL import Image
from torchvision import transforms
from tqdm import tqdm

from synthesize.utils import load_model
from validation.utils import ImageFolder, RandomResizedCropWithCoords


class ShufflePatches(torch.nn.Module):
    def shuffle_weight(self, img, factor):
        h, w = img.shape[1:]
        th, tw = h // factor, w // factor
        patches = []
        for i in range(factor):
            i = i * tw
            if i != factor - 1:
                patches.append(img[..., i: i + tw])
            else:
                patches.append(img[..., i:])
        random.shuffle(patches)
        img = torch.cat(patches, -1)
        return img

    def __init__(self, factor):
        super().__init__()
        self.factor = factor

    def forward(self, img):
        img = self.shuffle_weight(img, self.factor)
        img = img.permute(0, 2, 1)
        img = self.shuffle_weight(img, self.factor)
        img = img.permute(0, 2, 1)
        return img


_MEAN = None
_STD = None


def set_norm(mean, std):
    global _MEAN, _STD
    # kept on the GPU once; normalize() is called for every scoring batch
    _MEAN = torch.tensor(mean).cuda().reshape(1, 3, 1, 1)
    _STD = torch.tensor(std).cuda().reshape(1, 3, 1, 1)


def normalize(x):
    return (x - _MEAN) / _STD


def denormalize(x):
    mean = torch.tensor(_MEAN.flatten().tolist(), device=x.device).reshape(1, 3, 1, 1)
    std = torch.tensor(_STD.flatten().tolist(), device=x.device).reshape(1, 3, 1, 1)
    return (x * std + mean).clamp(0, 1)


def selector(n, model, images, labels, size, m=5, amp=False):
    with torch.no_grad():
        # [mipc, m, 3, 224, 224]
        images = images.cuda()
        s = images.shape

        # [mipc * m, 3, 224, 224]
        images = images.permute(1, 0, 2, 3, 4)
        images = images.reshape(s[0] * s[1], s[2], s[3], s[4])

        # [mipc * m, 1]
        labels = labels.repeat(m).cuda()

        # [mipc * m, n_class]
        batch_size = s[0]  # Change it for small GPU memory
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
            preds = torch.cat([model(normalize(images[i: i + batch_size])) for i in range(0, s[0] * s[1], batch_size)], dim=0)

        # [m]
        cross_entropy = F.cross_entropy(preds.float(), labels, reduction="none")
        cross_entropy = cross_entropy.reshape(s[1], s[0])  # [m, mipc]
        indices = torch.argmin(cross_entropy, dim=0)  # [mipc]

        images = images.reshape(s[1], s[0], s[2], s[3], s[4])
        selected = images[indices, torch.arange(s[0])]
        sorted_indices = torch.argsort(cross_entropy.min(0).values)[:n]
        return selected[sorted_indices].detach()


def mix_images(input_img, out_size, factor, n):
    s = out_size // factor
    remained = out_size % factor
    k = 0
    mixed_images = torch.zeros(
        (n, 3, out_size, out_size),
        requires_grad=False,
        dtype=torch.float,
    )
    h_loc = 0
    for i in range(factor):
        h_r = s + 1 if i < remained else s
        w_loc = 0
        for j in range(factor):
            w_r = s + 1 if j < remained else s
            img_part = F.interpolate(
                input_img.data[k * n: (k + 1) * n], size=(h_r, w_r)
            )
            mixed_images.data[
                0:n,
                :,
                h_loc: h_loc + h_r,
                w_loc: w_loc + w_r,
            ] = img_part
            w_loc += w_r
            k += 1
        h_loc += h_r
    return mixed_images


def init_images(args, model=None):
    trainset = ImageFolder(
        classes=args.classes,
        ipc=args.mipc,
        mem=True,
        shuffle=True,
        root=args.train_dir,
        transform=None,
    )

    trainset.transform = transforms.Compose(
        [
            transforms.ToTensor(),
            MultiRandomCrop(
                num_crop=args.num_crop, size=args.input_size, factor=args.factor
            ),
        ]
    )

    train_loader = torch.utils.data.DataLoader(
        trainset,
        batch_size=args.mipc,
        shuffle=False,
        num_workers=args.workers,
        pin_memory=True,
    )

    for c, (images, labels) in enumerate(tqdm(train_loader)):
        images = selector(
            args.ipc * args.factor ** 2,
            model,
            images,
            labels,
            args.input_size,
            m=args.num_crop,
            amp=args.amp,
        )
        images = mix_images(images, args.input_size, args.factor, args.ipc)
        save_images(args, denormalize(images.cuda()), c)


class MultiRandomCrop(torch.nn.Module):
    def __init__(self, num_crop=5, size=224, factor=2):
        super().__init__()
        self.num_crop = num_crop
        self.size = size
        self.factor = factor

    def forward(self, image):
        cropper = transforms.RandomResizedCrop(
            self.size // self.factor,
            ratio=(1, 1),
            antialias=True,
        )
        patches = []
        for _ in range(self.num_crop):
            patches.append(cropper(image))
        return torch.stack(patches, 0)

    def __repr__(self) -> str:
        detail = f"(num_crop={self.num_crop}, size={self.size})"
        return f"{self.__class__.__name__}{detail}"


def save_images(args, images, class_id):
    for id in range(images.shape[0]):
        dir_path = "{}/{:05d}".format(args.syn_data_path, class_id)
        place_to_store = dir_path + "/class{:05d}_id{:05d}.jpg".format(class_id, id)
        image_np = images[id].data.cpu().numpy().transpose((1, 2, 0))
        pil_image = Image.fromarray((image_np * 255).astype(np.uint8))
        if not os.path.exists(dir_path):
            os.makedirs(dir_path)
        pil_image.save(place_to_store)


def main(args):
    print(args)
    set_norm(args.mean_norm, args.std_norm)
    with torch.no_grad():
        if not os.path.exists(args.syn_data_path):
            os.makedirs(args.syn_data_path)
        else:
            shutil.rmtree(args.syn_data_path)
            os.makedirs(args.syn_data_path)

        model_teacher = load_model(
            model_name=args.arch_name,
            dataset=args.subset,
            pretrained=True,
            classes=args.classes,
        )

        model_teacher = nn.DataParallel(model_teacher).cuda()
        model_teacher.eval()
        for p in model_teacher.parameters():
            p.requires_grad = False

        init_images(args, model_teacher)

        # the observer is not needed for the validation stage; give the memory back
        del model_teacher
        torch.cuda.empty_cache()


if __name__ == "__main__":
    pass
