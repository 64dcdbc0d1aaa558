import os
import numpy as np
from tqdm import tqdm

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

from utils.utils import findLastCheckpoint
from utils.config import get_pscc_args
from utils.load_tdata import TrainData, ValData
from utils.load_vdata import TestData
from utils.loss import BinaryDiceLoss

from models.seg_hrnet import get_seg_model
from models.seg_hrnet_config import get_cfg_defaults
from models.NLCDetection import NLCDetection
from models.detection_head import DetectionHead

from sklearn import metrics
from sklearn.metrics import roc_auc_score

device_ids = [0]
device = torch.device('cuda:0')


def train(args):
    # define backbone
    FENet_name = 'HRNet'
    FENet_cfg = get_cfg_defaults()
    FENet = get_seg_model(FENet_cfg)

    # define localization head
    SegNet_name = 'NLCDetection'
    SegNet = NLCDetection(args)

    # define detection head
    ClsNet_name = 'DetectionHead'
    ClsNet = DetectionHead(args)

    FENet_checkpoint_dir = './checkpoint/{}_checkpoint'.format(FENet_name)
    SegNet_checkpoint_dir = './checkpoint/{}_checkpoint'.format(SegNet_name)
    ClsNet_checkpoint_dir = './checkpoint/{}_checkpoint'.format(ClsNet_name)

    # define optimizer
    FENet_params = [p for p in FENet.parameters() if p.requires_grad]
    SegNet_params = [p for p in SegNet.parameters() if p.requires_grad]
    ClsNet_params = [p for p in ClsNet.parameters() if p.requires_grad]

    FENet_optimizer = torch.optim.Adam(FENet_params, lr=args['learning_rate'])
    SegNet_optimizer = torch.optim.Adam(SegNet_params, lr=args['learning_rate'])
    ClsNet_optimizer = torch.optim.Adam(ClsNet_params, lr=args['learning_rate'])

    # load data
    train_data_loader = DataLoader(TrainData(args), batch_size=args['train_bs'], shuffle=True, num_workers=8)

    # load FENet weight
    FENet = FENet.to(device)
    FENet = nn.DataParallel(FENet, device_ids=device_ids)

    # load SegNet weight
    SegNet = SegNet.to(device)
    SegNet = nn.DataParallel(SegNet, device_ids=device_ids)

    # load ClsNet weight
    ClsNet = ClsNet.to(device)
    ClsNet = nn.DataParallel(ClsNet, device_ids=device_ids)

    # define the loss functions
    bce_loss = nn.BCELoss(reduction='none')
    CE_loss = nn.CrossEntropyLoss()
    dice_loss = BinaryDiceLoss()

    # resume the model
    initial_epoch = findLastCheckpoint(save_dir=FENet_checkpoint_dir)
    if initial_epoch > 0:
        try:
            FENet_checkpoint = torch.load('{0}/{1}_{2}.pth'.format(FENet_checkpoint_dir, FENet_name, initial_epoch))
            FENet.load_state_dict(FENet_checkpoint['model'])
            FENet_optimizer.load_state_dict(FENet_checkpoint['optimizer'])

            SegNet_checkpoint = torch.load('{0}/{1}_{2}.pth'.format(SegNet_checkpoint_dir, SegNet_name, initial_epoch))
            SegNet.load_state_dict(SegNet_checkpoint['model'])
            SegNet_optimizer.load_state_dict(SegNet_checkpoint['optimizer'])

            ClsNet_checkpoint = torch.load('{0}/{1}_{2}.pth'.format(ClsNet_checkpoint_dir, ClsNet_name, initial_epoch))
            ClsNet.load_state_dict(ClsNet_checkpoint['model'])
            ClsNet_optimizer.load_state_dict(ClsNet_checkpoint['optimizer'])
            print('Resume from epoch {}'.format(initial_epoch))
        except Exception:
            print('Fail to resume the model, train from scratch')
            initial_epoch = 0

    for epoch in range(initial_epoch, args['num_epochs']):
        # adjust learning rate
        lr = args['learning_rate'] * (0.8 ** (epoch // 5))
        for opt in (FENet_optimizer, SegNet_optimizer, ClsNet_optimizer):
            for param_group in opt.param_groups:
                param_group['lr'] = lr

        seg_total, seg_correct, seg_loss_sum = [0] * 3
        cls_total, cls_correct, cls_loss_sum = [0] * 3

        FENet.train()
        SegNet.train()
        ClsNet.train()

        for batch_id, train_data in enumerate(tqdm(train_data_loader, desc='epoch %d' % epoch)):
            image, masks, cls = train_data
            mask1, mask2, mask3, mask4 = masks

            # median-frequency class weighting for each scale of the mask pyramid
            mask1_balance = torch.ones_like(mask1)
            if (mask1 == 1).sum():
                mask1_balance[mask1 == 1] = 0.5 / ((mask1 == 1).sum().to(torch.float) / mask1.numel())
                mask1_balance[mask1 == 0] = 0.5 / ((mask1 == 0).sum().to(torch.float) / mask1.numel())
            else:
                print('Mask1 balance is not working!')

            mask2_balance = torch.ones_like(mask2)
            if (mask2 == 1).sum():
                mask2_balance[mask2 == 1] = 0.5 / ((mask2 == 1).sum().to(torch.float) / mask2.numel())
                mask2_balance[mask2 == 0] = 0.5 / ((mask2 == 0).sum().to(torch.float) / mask2.numel())

            mask3_balance = torch.ones_like(mask3)
            if (mask3 == 1).sum():
                mask3_balance[mask3 == 1] = 0.5 / ((mask3 == 1).sum().to(torch.float) / mask3.numel())
                mask3_balance[mask3 == 0] = 0.5 / ((mask3 == 0).sum().to(torch.float) / mask3.numel())

            mask4_balance = torch.ones_like(mask4)
            if (mask4 == 1).sum():
                mask4_balance[mask4 == 1] = 0.5 / ((mask4 == 1).sum().to(torch.float) / mask4.numel())
                mask4_balance[mask4 == 0] = 0.5 / ((mask4 == 0).sum().to(torch.float) / mask4.numel())

            image = image.to(device)
            mask1, mask2, mask3, mask4 = mask1.to(device), mask2.to(device), mask3.to(device), mask4.to(device)
            mask1_balance, mask2_balance = mask1_balance.to(device), mask2_balance.to(device)
            mask3_balance, mask4_balance = mask3_balance.to(device), mask4_balance.to(device)
            cls = cls.to(device)

            FENet_optimizer.zero_grad()
            SegNet_optimizer.zero_grad()
            ClsNet_optimizer.zero_grad()

            # forward
            feat = FENet(image)
            [pred_mask1, pred_mask2, pred_mask3, pred_mask4] = SegNet(feat)
            pred_logit = ClsNet(feat)

            # localization loss (multi-scale, class balanced)
            mask1_loss = torch.mean(bce_loss(pred_mask1, mask1) * mask1_balance)
            mask2_loss = torch.mean(bce_loss(pred_mask2, mask2) * mask2_balance)
            mask3_loss = torch.mean(bce_loss(pred_mask3, mask3) * mask3_balance)
            mask4_loss = torch.mean(bce_loss(pred_mask4, mask4) * mask4_balance)
            seg_loss = mask1_loss + mask2_loss + mask3_loss + mask4_loss

            # detection loss
            cls_loss = CE_loss(pred_logit, cls)

            loss = seg_loss + cls_loss
            loss.backward()

            FENet_optimizer.step()
            SegNet_optimizer.step()
            ClsNet_optimizer.step()

            # bookkeeping
            seg_loss_sum += seg_loss.item()
            cls_loss_sum += cls_loss.item()
            binary_mask1 = (pred_mask1 > 0.5).float()
            seg_correct += (binary_mask1 == mask1).sum().item()
            seg_total += mask1.numel()
            cls_correct += (pred_logit.argmax(1) == cls).sum().item()
            cls_total += cls.numel()

            if batch_id % args['print_freq'] == 0:
                print('[{}/{}] seg loss {:.4f} acc {:.4f} | cls loss {:.4f} acc {:.4f}'.format(
                    batch_id, len(train_data_loader),
                    seg_loss_sum / (batch_id + 1), seg_correct / max(seg_total, 1),
                    cls_loss_sum / (batch_id + 1), cls_correct / max(cls_total, 1)))

        # save checkpoints of every epoch
        for net, opt, name, ckpt_dir in ((FENet, FENet_optimizer, FENet_name, FENet_checkpoint_dir),
                                         (SegNet, SegNet_optimizer, SegNet_name, SegNet_checkpoint_dir),
                                         (ClsNet, ClsNet_optimizer, ClsNet_name, ClsNet_checkpoint_dir)):
            os.makedirs(ckpt_dir, exist_ok=True)
            torch.save({'model': net.state_dict(), 'optimizer': opt.state_dict()},
                       '{0}/{1}_{2}.pth'.format(ckpt_dir, name, epoch + 1))

        # validation
        if (epoch + 1) % args['val_freq'] == 0:
            validation(FENet, SegNet, ClsNet, args)
            torch.cuda.empty_cache()


def validation(FENet, SegNet, ClsNet, args):
    val_data_loader = DataLoader(ValData(args), batch_size=1, shuffle=False, num_workers=8)
    FENet.eval()
    SegNet.eval()
    ClsNet.eval()

    scores, labels, f1s = [], [], []
    with torch.no_grad():
        for batch_id, val_data in enumerate(val_data_loader):
            image, mask, cls, name = val_data
            image = image.to(device)
            mask = mask.to(device)

            feat = FENet(image)
            pred_mask = SegNet(feat)[0]
            pred_mask = F.interpolate(pred_mask, size=(mask.size(2), mask.size(3)), mode='bilinear', align_corners=True)

            pred_logit = ClsNet(feat)
            score = F.softmax(pred_logit, dim=1)[:, 1]

            scores.append(score.item())
            labels.append(cls.item())

            binary = (pred_mask > 0.5).float()
            tp = (binary * mask).sum().item()
            fp = (binary * (1 - mask)).sum().item()
            fn = ((1 - binary) * mask).sum().item()
            f1s.append(2 * tp / (2 * tp + fp + fn + 1e-6))

    auc = roc_auc_score(labels, scores) if len(set(labels)) > 1 else float('nan')
    print('val: pixel F1 {:.4f}  image AUC {:.4f}'.format(np.mean(f1s), auc))


if __name__ == '__main__':
    args = get_pscc_args()

    gpu_ids = ','.join(str(i) for i in args['gpu_ids'])
    os.environ['CUDA_VISIBLE_DEVICES'] = gpu_ids
    device_ids = list(range(len(args['gpu_ids'])))

    train(args)
