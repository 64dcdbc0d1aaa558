import torch
import torch.utils.data as data

from PIL import Image
import os
import os.path


def default_loader(path):
    return Image.open(path).convert('RGB')


class CelebA(data.Dataset):
    """CelebA attribute dataset (aligned & cropped images, 40 binary attributes).

    The list file has one line per image:  <file name> <attr_1> ... <attr_40>
    with attributes already mapped from {-1, 1} to {0, 1}.
    """

    def __init__(self, root, ann_file, transform=None, target_transform=None, loader=default_loader):
        images = []
        targets = []

        for line in open(os.path.join(root, ann_file), 'r'):
            sample = line.split()
            if len(sample) != 41:
                raise(RuntimeError("# Annotated face attributes of CelebA dataset should not be different from 40"))
            images.append(sample[0])
            targets.append([int(i) for i in sample[1:]])
        self.images = [os.path.join(root, 'img_align_celeba_png', img) for img in images]
        self.targets = targets
        self.transform = transform
        self.target_transform = target_transform
        self.loader = loader

    def __getitem__(self, index):
        path = self.images[index]
        sample = self.loader(path)
        target = self.targets[index]
        target = torch.LongTensor(target)
        if self.transform is not None:
            sample = self.transform(sample)
        if self.target_transform is not None:
            target = self.target_transform(target)

        return sample, target

    def __len__(self):
        return len(self.images)
