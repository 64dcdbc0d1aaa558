import os
import torch
import numpy as np
import random
import cv2

from torchvision import transforms
from torch.utils.data import DataLoader
from config import Config
from utils.inference_process import ToTensor, Normalize
from tqdm import tqdm


def setup_seed(seed):
    random.seed(seed)
    os.environ['PYTHONHASHSEED'] = str(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True


class Image(torch.utils.data.Dataset):
    """Cuts one image into ``num_crops`` random 224x224 crops (test-time augmentation)."""

    def __init__(self, image_path, transform, num_crops=20):
        super(Image, self).__init__()
        self.img_name = image_path.split('/')[-1]
        self.img = cv2.imread(image_path, cv2.IMREAD_COLOR)
        self.img = cv2.cvtColor(self.img, cv2.COLOR_BGR2RGB)
        self.img = np.array(self.img).astype('float32') / 255
        self.img = np.transpose(self.img, (2, 0, 1))

        self.transform = transform

        c, h, w = self.img.shape
        print(self.img.shape)
        new_h = 224
        new_w = 224

        self.img_patches = []
        for i in range(num_crops):
            top = np.random.randint(0, h - new_h)
            left = np.random.randint(0, w - new_w)
            patch = self.img[:, top: top + new_h, left: left + new_w]
            self.img_patches.append(patch)

        self.img_patches = np.array(self.img_patches)

    def get_patch(self, idx):
        patch = self.img_patches[idx]
        sample = {'d_img_org': patch, 'score': 0, 'd_name': self.img_name}
        if self.transform:
            sample = self.transform(sample)
        return sample


class ImageFolder(torch.utils.data.Dataset):
    """Whole images resized to 224 (used for the PIPAL test-server submissions)."""

    def __init__(self, folder, transform):
        self.files = sorted(os.path.join(folder, f) for f in os.listdir(folder)
                            if f.lower().endswith(('.png', '.bmp', '.jpg', '.jpeg')))
        self.transform = transform

    def __len__(self):
        return len(self.files)

    def __getitem__(self, idx):
        img = cv2.imread(self.files[idx], cv2.IMREAD_COLOR)
        img = cv2.cvtColor(img, cv2.COLOR_BGR2RGB)
        img = cv2.resize(img, (224, 224), interpolation=cv2.INTER_CUBIC)
        img = np.transpose(img.astype('float32') / 255, (2, 0, 1))
        sample = {'d_img_org': img, 'score': 0, 'd_name': os.path.basename(self.files[idx])}
        return self.transform(sample) if self.transform else sample


def score_single(net, config):
    Img = Image(image_path=config.image_path,
                transform=transforms.Compose([Normalize(0.5, 0.5), ToTensor()]),
                num_crops=config.num_crops)
    avg_score = 0
    for i in tqdm(range(config.num_crops)):
        with torch.no_grad():
            net.eval()
            patch_sample = Img.get_patch(i)
            patch = patch_sample['d_img_org'].cuda()
            patch = patch.unsqueeze(0)
            score = net(patch)
            avg_score += score
    return Img.img_name, (avg_score / config.num_crops).item()


def score_folder(net, config):
    dataset = ImageFolder(config.folder_path, transforms.Compose([Normalize(0.5, 0.5), ToTensor()]))
    loader = DataLoader(dataset, batch_size=config.batch_size, num_workers=4, shuffle=False, pin_memory=True)
    results = []
    net.eval()
    with torch.no_grad():
        for batch in tqdm(loader):
            x = batch['d_img_org'].to(config.device)
            scores = net(x).view(-1).cpu().tolist()
            results.extend(zip(batch['d_name'], scores))
    return results


if __name__ == '__main__':
    cpu_num = 1
    os.environ['OMP_NUM_THREADS'] = str(cpu_num)
    os.environ['OPENBLAS_NUM_THREADS'] = str(cpu_num)
    os.environ['MKL_NUM_THREADS'] = str(cpu_num)
    os.environ['VECLIB_MAXIMUM_THREADS'] = str(cpu_num)
    os.environ['NUMEXPR_NUM_THREADS'] = str(cpu_num)
    torch.set_num_threads(cpu_num)

    setup_seed(20)

    # config file
    config = Config({
        # image path
        "image_path": "./test_images/kunkun.png",
        "folder_path": None,

        # valid times
        "num_crops": 20,
        "batch_size": 16,

        # model
        "patch_size": 8,
        "img_size": 224,
        "embed_dim": 768,
        "dim_mlp": 768,
        "num_heads": [4, 4],
        "window_size": 4,
        "depths": [2, 2],
        "num_outputs": 1,
        "num_tab": 2,
        "scale": 0.8,

        # checkpoint path
        "ckpt_path": "./ckpt_koniq10k.pt",
        "device": "cuda:0",
        "result_file": "./output.txt",
    })

    # the released checkpoints pickle the whole DataParallel-free model object
    net = torch.load(config.ckpt_path, map_location='cuda:0')
    net = net.cuda()

    if config.folder_path is None:
        name, score = score_single(net, config)
        print("Image {} score: {}".format(name, score))
        with open(config.result_file, 'w') as f:
            f.write('{} {}\n'.format(name, score))
    else:
        results = score_folder(net, config)
        with open(config.result_file, 'w') as f:
            for name, score in results:
                f.write('{} {:.6f}\n'.format(name, score))
        print('wrote {} scores to {}'.format(len(results), config.result_file))
