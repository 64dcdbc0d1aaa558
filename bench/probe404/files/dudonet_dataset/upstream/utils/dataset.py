import os
import random
import h5py
import numpy as np
import torch
import torch.utils.data as udata
from PIL import Image


def image_get_minmax():
    return 0.0, 1.0


def proj_get_minmax():
    return 0.0, 4.0


def normalize(data, minmax):
    data_min, data_max = minmax
    data = np.clip(data, data_min, data_max)
    data = (data - data_min) / (data_max - data_min)
    data = data.astype(np.float32)
    data = data * 255.0
    data = np.transpose(np.expand_dims(data, 2), (2, 0, 1))
    return data


class MARTrainDataset(udata.Dataset):
    """Synthesised DeepLesion metal-artifact pairs (one .h5 per slice, 90 metal masks)."""

    def __init__(self, dir, patchSize, length, mask):
        super().__init__()
        self.dir = dir
        self.train_mask = mask
        self.patch_size = patchSize
        self.sample_num = length
        self.txtdir = os.path.join(self.dir, 'train_640geo_dir.txt')
        self.mat_files = open(self.txtdir, 'r').readlines()
        self.file_num = len(self.mat_files)
        self.rand_state = 1111

    def __len__(self):
        return self.sample_num

    def __getitem__(self, idx):
        gt_dir = self.mat_files[idx % self.file_num]
        random_mask = random.randint(0, 89)
        file_dir = gt_dir[:-6]
        data_file = file_dir + str(random_mask) + '.h5'
        abs_dir = os.path.join(self.dir, 'train_640geo/', data_file)
        gt_absdir = os.path.join(self.dir, 'train_640geo/', gt_dir[:-1])
        gt_file = h5py.File(gt_absdir, 'r')
        Xgt = gt_file['image'][()]
        gt_file.close()
        file = h5py.File(abs_dir, 'r')
        Xma = file['ma_CT'][()]
        Sma = file['ma_sinogram'][()]
        XLI = file['LI_CT'][()]
        SLI = file['LI_sinogram'][()]
        Tr = file['metal_trace'][()]
        Sgt = np.asarray(file['gt_sinogram'][()])
        file.close()
        M512 = self.train_mask[:, :, random_mask]
        M = np.array(Image.fromarray(M512).resize((416, 416), Image.BILINEAR))
        Xma = normalize(Xma, image_get_minmax())
        Xgt = normalize(Xgt, image_get_minmax())
        XLI = normalize(XLI, image_get_minmax())
        Sma = normalize(Sma, proj_get_minmax())
        Sgt = normalize(Sgt, proj_get_minmax())
        SLI = normalize(SLI, proj_get_minmax())
        Tr = 1 - Tr.astype(np.float32)
        Tr = np.transpose(np.expand_dims(Tr, 2), (2, 0, 1))
        Mask = M.astype(np.float32)
        Mask = np.transpose(np.expand_dims(Mask, 2), (2, 0, 1))
        return (torch.Tensor(Xma), torch.Tensor(XLI), torch.Tensor(Xgt), torch.Tensor(Mask),
                torch.Tensor(Sma), torch.Tensor(SLI), torch.Tensor(Sgt), torch.Tensor(Tr))


class MARValDataset(udata.Dataset):
    """Fixed (image, mask) pairs for validation; the mask index cycles deterministically."""

    def __init__(self, dir, mask, num_images=50):
        super().__init__()
        self.dir = dir
        self.mask = mask
        txtdir = os.path.join(self.dir, 'test_640geo_dir.txt')
        self.mat_files = open(txtdir, 'r').readlines()[:num_images]
        self.num_mask = mask.shape[2]

    def __len__(self):
        return len(self.mat_files) * self.num_mask

    def __getitem__(self, idx):
        gt_dir = self.mat_files[idx // self.num_mask]
        mask_idx = idx % self.num_mask
        data_file = gt_dir[:-6] + str(mask_idx) + '.h5'
        with h5py.File(os.path.join(self.dir, 'test_640geo/', gt_dir[:-1]), 'r') as f:
            Xgt = f['image'][()]
        with h5py.File(os.path.join(self.dir, 'test_640geo/', data_file), 'r') as f:
            XLI = f['LI_CT'][()]
            SLI = f['LI_sinogram'][()]
            Tr = f['metal_trace'][()]
        M = np.array(Image.fromarray(self.mask[:, :, mask_idx]).resize((416, 416), Image.BILINEAR))
        Tr = np.transpose(np.expand_dims(1 - Tr.astype(np.float32), 2), (2, 0, 1))
        M = np.transpose(np.expand_dims(M.astype(np.float32), 2), (2, 0, 1))
        return (torch.Tensor(normalize(XLI, image_get_minmax())), torch.Tensor(normalize(SLI, proj_get_minmax())),
                torch.Tensor(normalize(Xgt, image_get_minmax())), torch.Tensor(M), torch.Tensor(Tr))
