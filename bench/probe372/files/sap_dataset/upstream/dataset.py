import os
import random
import json
import numpy as np
from PIL import Image
import torch
from torch.utils.data import Dataset
from torchvision import transforms


class CLEVR(Dataset):
    def __init__(self, split='train'):
        super(CLEVR, self).__init__()

        assert split in ['train', 'val', 'test']
        self.split = split
        self.root_dir = "/home/sample/CLEVR_v1.0/images"
        self.files = os.listdir(self.root_dir)
        self.img_transform = transforms.Compose([
               transforms.ToTensor()])

    def __getitem__(self, index):
        path = self.files[index]
        image = Image.open(os.path.join(self.root_dir, path, path + ".png")).convert("RGB")
        image = image.resize((128 , 128))
        image = self.img_transform(image)
        sample = {'image': image}

        return sample


    def __len__(self):
        return len(self.files)


class CLEVRWithMasks(Dataset):
    """CLEVR-with-masks (multi-object-datasets) exported to PNG + npz.

    Each sample folder holds `image.png` and `mask.npz` with an (11, H, W) uint8 array,
    index 0 being the background.
    """

    def __init__(self, root_dir, split='val', max_num_objects=6, resolution=(128, 128)):
        super().__init__()
        self.root_dir = os.path.join(root_dir, split)
        self.resolution = resolution
        self.max_num_objects = max_num_objects
        with open(os.path.join(root_dir, f'{split}_meta.json')) as f:
            meta = json.load(f)
        # keep scenes with at most `max_num_objects` objects, like the paper
        self.files = [m['name'] for m in meta if m['num_objects'] <= max_num_objects]
        self.img_transform = transforms.Compose([
            transforms.CenterCrop(192),
            transforms.Resize(resolution),
            transforms.ToTensor(),
        ])

    def _load_mask(self, folder):
        masks = np.load(os.path.join(folder, 'mask.npz'))['masks']
        masks = torch.from_numpy(masks).float().unsqueeze(1)
        masks = transforms.functional.center_crop(masks, 192)
        masks = torch.nn.functional.interpolate(masks, size=self.resolution, mode='nearest')
        return masks.squeeze(1).long()

    def __getitem__(self, index):
        folder = os.path.join(self.root_dir, self.files[index])
        image = Image.open(os.path.join(folder, 'image.png')).convert('RGB')
        image = self.img_transform(image)
        masks = self._load_mask(folder)
        return {'image': image, 'masks': masks}

    def __len__(self):
        return len(self.files)


def seed_worker(worker_id):
    worker_seed = torch.initial_seed() % 2 ** 32
    np.random.seed(worker_seed)
    random.seed(worker_seed)
