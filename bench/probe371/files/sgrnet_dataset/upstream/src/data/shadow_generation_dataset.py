import os.path
import random

import numpy as np
import torch
import torchvision.transforms as transforms
from PIL import Image
from data.base_dataset import BaseDataset, get_transform
from data.image_folder import make_dataset


class ShadowGenerationDataset(BaseDataset):
    """DESOBA pairs: shadow-free composite, foreground object mask, foreground shadow mask,
    background object/shadow masks and the ground-truth image with the foreground shadow."""

    def initialize(self, opt):
        self.opt = opt
        self.root = opt.dataroot
        self.dir_A = opt.shadowimg_path
        self.dir_C = opt.shadowfree_path
        self.dir_param = opt.param_path
        self.dir_bg_instance = opt.instance_path
        self.dir_bg_shadow = opt.mask_train
        self.birdy_deshadoweds, self.birdy_shadoweds = [], []
        self.birdy_fg_instances, self.birdy_fg_shadows = [], []
        self.birdy_bg_instances, self.birdy_bg_shadows = [], []
        self.birdy_params = []

        self.imname_total = sorted(os.listdir(self.dir_A))
        split_file = os.path.join(self.root, 'Training_labels.txt' if opt.phase == 'train' else 'Testing_labels.txt')
        if os.path.exists(split_file):
            with open(split_file) as f:
                keep = set(line.strip().split()[0] for line in f if line.strip())
            self.imname_total = [n for n in self.imname_total if n in keep]

        for imname in self.imname_total:
            A_img = Image.open(os.path.join(self.dir_A, imname)).convert('RGB')
            C_img = Image.open(os.path.join(self.dir_C, imname)).convert('RGB')
            instance = np.array(Image.open(os.path.join(self.dir_bg_instance, imname)).convert('L'))
            shadow = np.array(Image.open(os.path.join(self.dir_bg_shadow, imname)).convert('L'))

            object_num = len(np.unique(instance)) - 1
            if object_num < 2:
                continue
            # every object in turn plays the foreground; the rest are background
            for label in np.unique(instance):
                if label == 0:
                    continue
                fg_instance = (instance == label).astype(np.uint8) * 255
                fg_shadow = (shadow == label).astype(np.uint8) * 255
                if fg_shadow.sum() == 0:
                    continue
                bg_instance = ((instance != label) & (instance != 0)).astype(np.uint8) * 255
                bg_shadow = ((shadow != label) & (shadow != 0)).astype(np.uint8) * 255

                # the synthetic composite removes the foreground shadow from the real image
                deshadowed = np.array(A_img).copy()
                deshadowed[fg_shadow > 0] = np.array(C_img)[fg_shadow > 0]

                self.birdy_deshadoweds.append(Image.fromarray(deshadowed))
                self.birdy_shadoweds.append(A_img)
                self.birdy_fg_instances.append(Image.fromarray(fg_instance))
                self.birdy_fg_shadows.append(Image.fromarray(fg_shadow))
                self.birdy_bg_instances.append(Image.fromarray(bg_instance))
                self.birdy_bg_shadows.append(Image.fromarray(bg_shadow))
                param_file = os.path.join(self.dir_param, imname.replace('.png', '.txt'))
                self.birdy_params.append(self._read_params(param_file))

        self.data_size = len(self.birdy_deshadoweds)
        print('datasize', self.data_size)
        transform_list = [transforms.ToTensor(),
                          transforms.Normalize(mean=opt.norm_mean, std=opt.norm_std)]
        self.transformA = transforms.Compose(transform_list)
        self.transformB = transforms.Compose([transforms.ToTensor()])

    @staticmethod
    def _read_params(path):
        if not os.path.exists(path):
            return np.zeros(6, dtype=np.float32)
        with open(path) as f:
            values = [float(v) for v in f.read().split()]
        return np.asarray(values[:6], dtype=np.float32)

    def __getitem__(self, index):
        birdy = {}
        birdy['A'] = self.birdy_deshadoweds[index]
        birdy['C'] = self.birdy_shadoweds[index]
        birdy['instancemask'] = self.birdy_fg_instances[index]
        birdy['B'] = self.birdy_fg_shadows[index]
        birdy['bg_shadow'] = self.birdy_bg_shadows[index]
        birdy['bg_instance'] = self.birdy_bg_instances[index]

        ow = birdy['A'].size[0]
        oh = birdy['A'].size[1]
        loadSize = self.opt.loadSize
        if self.opt.randomSize:
            loadSize = np.random.randint(loadSize + 1, loadSize * 1.3, 1)[0]

        if self.opt.keep_ratio:
            if ow > oh:
                ratio = float(loadSize) / float(oh)
                neww = np.int(ratio * ow)
                newh = loadSize
            else:
                ratio = float(loadSize) / float(ow)
                neww = loadSize
                newh = np.int(ratio * oh)
        else:
            neww = loadSize
            newh = loadSize

        if not self.opt.no_flip and random.random() < 0.5:
            for i in ['A', 'B', 'C', 'instancemask', 'bg_shadow', 'bg_instance']:
                birdy[i] = birdy[i].transpose(Image.FLIP_LEFT_RIGHT)

        for k, im in birdy.items():
            birdy[k] = im.resize((neww, newh), Image.NEAREST)

        for k, im in birdy.items():
            if k in ['A', 'C']:
                birdy[k] = self.transformA(im)
            else:
                birdy[k] = self.transformB(im)
                birdy[k] = (birdy[k] > 0).type(torch.float) * 2 - 1

        for k, im in birdy.items():
            birdy[k] = im.unsqueeze(0) if im.dim() == 2 else im

        birdy['param'] = torch.from_numpy(self.birdy_params[index])
        birdy['imname'] = self.imname_total[index % len(self.imname_total)]
        birdy['w'] = ow
        birdy['h'] = oh
        return birdy

    def __len__(self):
        return self.data_size

    def name(self):
        return 'ShadowGenerationDataset'
