import os
import argparse
import warnings

from tqdm import tqdm
from PIL import Image
import numpy as np
import pandas as pd

import torch
import torch.nn as nn
import torch.utils.data as data
from torchvision import transforms, datasets
from torch.cuda.amp import autocast, GradScaler

from networks.dan import DAN
from sampler import ImbalancedDatasetSampler

warnings.filterwarnings("ignore")


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('--aff_path', type=str, default='datasets/AfectNet/', help='AffectNet dataset path.')
    parser.add_argument('--gpu', type=str, default='0', help='Assign a single GPU by its number.')
    parser.add_argument('--batch_size', type=int, default=256, help='Batch size.')
    parser.add_argument('--lr', type=float, default=0.0001, help='Initial learning rate for adam.')
    parser.add_argument('--workers', default=8, type=int, help='Number of data loading workers.')
    parser.add_argument('--epochs', type=int, default=40, help='Total training epochs.')
    parser.add_argument('--num_head', type=int, default=4, help='Number of attention head.')
    parser.add_argument('--num_class', type=int, default=8, help='Number of class.')
    parser.add_argument('--amp', action='store_true', help='Use mixed precision (torch.cuda.amp).')
    return parser.parse_args()


class AffectNet(data.Dataset):
    def __init__(self, aff_path, phase, use_cache=True, transform=None):
        self.phase = phase
        self.transform = transform
        self.aff_path = aff_path

        if use_cache:
            cache_path = os.path.join(aff_path, 'affectnet.csv')
            if os.path.exists(cache_path):
                df = pd.read_csv(cache_path)
            else:
                df = self.get_df()
                df.to_csv(cache_path)
        else:
            df = self.get_df()

        self.data = df[df['phase'] == phase]

        self.file_paths = self.data.loc[:, 'img_path'].values
        self.label = self.data.loc[:, 'label'].values

        _, self.sample_counts = np.unique(self.label, return_counts=True)
        # print(f' distribution of {phase} samples: {self.sample_counts}')

    def get_df(self):
        train_path = os.path.join(self.aff_path, 'train_set/')
        val_path = os.path.join(self.aff_path, 'val_set/')
        data = []

        for anno in os.listdir(train_path + 'annotations'):
            if anno.endswith('exp.npy'):
                label = int(np.load(os.path.join(train_path, 'annotations', anno)))
                idx = anno.split('_')[0]
                img_path = os.path.join(train_path, f'images/{idx}.jpg')
                data.append(['train', img_path, label])

        for anno in os.listdir(val_path + 'annotations'):
            if anno.endswith('exp.npy'):
                label = int(np.load(os.path.join(val_path, 'annotations', anno)))
                idx = anno.split('_')[0]
                img_path = os.path.join(val_path, f'images/{idx}.jpg')
                data.append(['val', img_path, label])

        return pd.DataFrame(data=data, columns=['phase', 'img_path', 'label'])

    def __len__(self):
        return len(self.file_paths)

    def __getitem__(self, idx):
        path = self.file_paths[idx]
        image = Image.open(path).convert('RGB')
        label = self.label[idx]

        if self.transform is not None:
            image = self.transform(image)

        return image, label


class AffinityLoss(nn.Module):
    def __init__(self, num_class=8, feat_dim=512):
        super(AffinityLoss, self).__init__()
        self.num_class = num_class
        self.feat_dim = feat_dim
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.centers = nn.Parameter(torch.randn(self.num_class, self.feat_dim).cuda())

    def forward(self, x, labels):
        x = self.gap(x).view(x.size(0), -1)

        batch_size = x.size(0)
        distmat = torch.pow(x, 2).sum(dim=1, keepdim=True).expand(batch_size, self.num_class) + \
                  torch.pow(self.centers, 2).sum(dim=1, keepdim=True).expand(self.num_class, batch_size).t()
        distmat.addmm_(x, self.centers.t(), beta=1, alpha=-2)

        classes = torch.arange(self.num_class, device=x.device).long()
        labels = labels.unsqueeze(1).expand(batch_size, self.num_class)
        mask = labels.eq(classes.expand(batch_size, self.num_class))

        dist = distmat * mask.float()
        dist = dist / self.centers.var(dim=0).sum()

        loss = dist.clamp(min=1e-12, max=1e+12).sum() / batch_size

        return loss


class PartitionLoss(nn.Module):
    def __init__(self, ):
        super(PartitionLoss, self).__init__()

    def forward(self, x):
        num_head = x.size(1)

        if num_head > 1:
            var = x.var(dim=1).mean()
            loss = torch.log(1 + num_head / (var + eps))
        else:
            loss = 0

        return loss


eps = sys_eps = 1e-8


def run_training():
    args = parse_args()
    os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu

    model = DAN(num_class=args.num_class, num_head=args.num_head)
    model = model.cuda()

    data_transforms = transforms.Compose([
        transforms.Resize((224, 224)),
        transforms.RandomHorizontalFlip(),
        transforms.RandomApply([
            transforms.RandomAffine(20, scale=(0.8, 1), translate=(0.2, 0.2)),
        ], p=0.7),
        transforms.ToTensor(),
        transforms.Normalize(mean=[0.485, 0.456, 0.406],
                             std=[0.229, 0.224, 0.225]),
        transforms.RandomErasing(),
    ])

    train_dataset = AffectNet(args.aff_path, phase='train', transform=data_transforms)
    if args.num_class == 7:   # ignore the 8-th class
        idx = [i for i in range(len(train_dataset)) if train_dataset.label[i] != 7]
        train_dataset = data.Subset(train_dataset, idx)

    print('Whole train set size:', train_dataset.__len__())

    train_loader = torch.utils.data.DataLoader(train_dataset,
                                               batch_size=args.batch_size,
                                               num_workers=args.workers,
                                               sampler=ImbalancedDatasetSampler(train_dataset),
                                               shuffle=False,
                                               pin_memory=True)

    data_transforms_val = transforms.Compose([
        transforms.Resize((224, 224)),
        transforms.ToTensor(),
        transforms.Normalize(mean=[0.485, 0.456, 0.406],
                             std=[0.229, 0.224, 0.225])])

    val_dataset = AffectNet(args.aff_path, phase='val', transform=data_transforms_val)
    if args.num_class == 7:   # ignore the 8-th class
        idx = [i for i in range(len(val_dataset)) if val_dataset.label[i] != 7]
        val_dataset = data.Subset(val_dataset, idx)

    print('Validation set size:', val_dataset.__len__())

    val_loader = torch.utils.data.DataLoader(val_dataset,
                                             batch_size=args.batch_size,
                                             num_workers=args.workers,
                                             shuffle=False,
                                             pin_memory=True)

    criterion_cls = torch.nn.CrossEntropyLoss().cuda()
    criterion_af = AffinityLoss(num_class=args.num_class)
    criterion_pt = PartitionLoss()

    params = list(model.parameters()) + list(criterion_af.parameters())
    optimizer = torch.optim.Adam(params, args.lr, weight_decay=0)
    scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.6)
    scaler = GradScaler(enabled=args.amp)

    best_acc = 0
    for epoch in tqdm(range(1, args.epochs + 1)):
        running_loss = 0.0
        correct_sum = 0
        iter_cnt = 0
        model.train()

        for (imgs, targets) in train_loader:
            iter_cnt += 1
            optimizer.zero_grad()

            imgs = imgs.cuda(non_blocking=True)
            targets = targets.cuda(non_blocking=True)

            with autocast(enabled=args.amp):
                out, feat, heads = model(imgs)
                loss = criterion_cls(out, targets) + criterion_af(feat, targets) + criterion_pt(heads)

            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()

            running_loss += loss.item()
            _, predicts = torch.max(out, 1)
            correct_num = torch.eq(predicts, targets).sum()
            correct_sum += correct_num

        acc = correct_sum.float() / float(train_dataset.__len__())
        running_loss = running_loss / iter_cnt
        tqdm.write('[Epoch %d] Training accuracy: %.4f. Loss: %.3f. LR %.6f' % (epoch, acc, running_loss, optimizer.param_groups[0]['lr']))

        with torch.no_grad():
            running_loss = 0.0
            iter_cnt = 0
            bingo_cnt = 0
            sample_cnt = 0

            model.eval()
            for imgs, targets in val_loader:
                imgs = imgs.cuda()
                targets = targets.cuda()
                out, feat, heads = model(imgs)
                loss = criterion_cls(out, targets) + criterion_af(feat, targets) + criterion_pt(heads)

                running_loss += loss.item()
                iter_cnt += 1
                _, predicts = torch.max(out, 1)
                correct_num = torch.eq(predicts, targets)
                bingo_cnt += correct_num.sum().cpu()
                sample_cnt += out.size(0)

            running_loss = running_loss / iter_cnt
            scheduler.step()

            acc = bingo_cnt.float() / float(sample_cnt)
            acc = np.around(acc.numpy(), 4)
            best_acc = max(acc, best_acc)
            tqdm.write("[Epoch %d] Validation accuracy:%.4f. Loss:%.3f" % (epoch, acc, running_loss))
            tqdm.write("best_acc:" + str(best_acc))
            tqdm.write("GPU memory peak: %.1f MB" % (torch.cuda.max_memory_allocated() / 1024 ** 2))
            torch.cuda.empty_cache()

            if args.num_class == 7 and acc > 0.65:
                torch.save({'iter': epoch,
                            'model_state_dict': model.state_dict(),
                            'optimizer_state_dict': optimizer.state_dict(), },
                           os.path.join('checkpoints', "affecnet7_epoch" + str(epoch) + "_acc" + str(acc) + ".pth"))
                tqdm.write('Model saved.')
            elif args.num_class == 8 and acc > 0.62:
                torch.save({'iter': epoch,
                            'model_state_dict': model.state_dict(),
                            'optimizer_state_dict': optimizer.state_dict(), },
                           os.path.join('checkpoints', "affecnet8_epoch" + str(epoch) + "_acc" + str(acc) + ".pth"))
                tqdm.write('Model saved.')


if __name__ == "__main__":
    run_training()
