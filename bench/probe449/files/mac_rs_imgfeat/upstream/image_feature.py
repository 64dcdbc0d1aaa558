import sys
import os

import h5py
import torch
from torch.autograd import Variable
from torchvision.models.resnet import ResNet, resnet101
from torchvision import transforms
from torch.utils.data import Dataset, DataLoader
from PIL import Image
from tqdm import tqdm

# Extract ResNet-101 conv4 features (1024 x 14 x 14) for every CLEVR image.
# Needs a GPU; on a single V100 the train split takes about 40 minutes.
device = 'cuda'

image_path = sys.argv[1]
batch_size = 50


def forward(self, x):
    x = self.conv1(x)
    x = self.bn1(x)
    x = self.relu(x)
    x = self.maxpool(x)

    x = self.layer1(x)
    x = self.layer2(x)
    x = self.layer3(x)

    return x


transform = transforms.Compose([
    transforms.Resize((224, 224)),
    transforms.ToTensor(),
    transforms.Normalize(mean=[0.485, 0.456, 0.406],
                         std=[0.229, 0.224, 0.225])])


class CLEVR(Dataset):
    def __init__(self, root, split='train'):
        self.root = root
        self.split = split
        self.length = len(os.listdir(os.path.join(root,
                                                  'images', split)))

    def __getitem__(self, index):
        img = os.path.join(self.root, 'images',
                           self.split,
                           'CLEVR_{}_{}.png'.format(self.split,
                                                    str(index).zfill(6)))
        img = Image.open(img).convert('RGB')
        return transform(img)

    def __len__(self):
        return self.length


resnet = resnet101(pretrained=True).to(device)
resnet.eval()
resnet.forward = forward.__get__(resnet, ResNet)


def create_dataset(split):
    dataloader = DataLoader(CLEVR(image_path, split), batch_size=batch_size,
                            num_workers=4, pin_memory=True)

    size = len(dataloader)

    print(split, 'total', size * batch_size)

    f = h5py.File('data/{}_features.hdf5'.format(split), 'w', libver='latest')
    dset = f.create_dataset('data', (size * batch_size, 1024, 14, 14),
                            dtype='f4')

    with torch.no_grad():
        for i, image in tqdm(enumerate(dataloader)):
            image = image.to(device, non_blocking=True)
            features = resnet(image).detach().cpu().numpy()
            dset[i * batch_size:(i + 1) * batch_size] = features

    f.close()


create_dataset('val')
create_dataset('train')
