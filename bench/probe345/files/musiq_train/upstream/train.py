import os
import random

import numpy as np
import torch
import torch.nn as nn
from scipy.stats import pearsonr, spearmanr
from torch.utils.data import DataLoader
from torch.utils.tensorboard import SummaryWriter
from torchvision import transforms
from tqdm import tqdm

from option.config import Config
from model.model_main import IQARegression
from model.backbone import resnet50_backbone
from utils.util import RandHorizontalFlip, Normalize, ToTensor, RandShuffle
from utils.util import get_multi_scale_patch


# config file
config = Config({
    # device
    'gpu_id': "0",                          # specify GPU number to use
    'num_workers': 8,

    # data
    'db_name': 'KonIQ-10k',                 # database type
    'db_path': '/media/mnt/dataset/KonIQ-10k/1024x768',   # root path of database
    'txt_file_name': './IQA_list/KonIQ-10k.txt',          # list of images in the database
    'train_size': 0.8,                      # train/vaildation separation ratio
    'scenes': 'all',                        # using all scenes
    'scale_1': 384,
    'scale_2': 224,
    'batch_size': 8,
    'patch_size': 32,

    # ViT structure
    'n_enc_seq': 32 * 24 + 12 * 9 + 7 * 5,  # input feature map dimension (N = H*W) from backbone
    'n_layer': 14,                          # number of encoder layers
    'd_hidn': 384,                          # input channel of encoder (input: C x N)
    'i_pad': 0,
    'd_ff': 384,                            # feed forward hidden layer dimension
    'd_MLP_head': 1152,                     # hidden layer of final MLP
    'n_head': 6,                            # number of head (in multi-head attention)
    'd_head': 384,                          # channel of each head -> same as d_hidn
    'dropout': 0.1,                         # dropout ratio
    'emb_dropout': 0.1,                     # dropout ratio of input embedding
    'layer_norm_epsilon': 1e-12,
    'n_output': 1,                          # dimension of output
    'Grid': 10,                             # grid of 2D spatial embedding

    # optimization & training parameters
    'n_epoch': 100,                         # total training epochs
    'learning_rate': 1e-4,                  # initial learning rate
    'weight_decay': 0,                      # L2 regularization weight
    'momentum': 0.9,                        # SGD momentum
    'T_max': 3e4,                           # period (iteration) of cosine learning rate decay
    'eta_min': 0,                           # minimum learning rate
    'save_freq': 10,                        # save checkpoint frequency (epoch)
    'val_freq': 5,                          # validation frequency (epoch)
    'seed': 1234,

    # load & save checkpoint
    'snap_path': './weights',               # directory for saving checkpoint
    'checkpoint': None,                     # load checkpoint
})


# device setting
config.device = torch.device('cuda:%s' % config.gpu_id if torch.cuda.is_available() else 'cpu')
if config.gpu_id is not None:
    print('Using GPU %s' % config.gpu_id)
else:
    print('Using CPU')

# fix the seed (python / numpy / gpu)
random.seed(config.seed)
np.random.seed(config.seed)
torch.cuda.manual_seed_all(config.seed)


def train_epoch(config, epoch, model_transformer, model_backbone, criterion, optimizer, scheduler, train_loader):
    losses = []
    model_transformer.train()
    model_backbone.train()

    # value is not changed
    mask_inputs = torch.ones(config.batch_size, config.n_enc_seq + 1).to(config.device)

    # save data for one epoch
    pred_epoch = []
    labels_epoch = []

    for data in tqdm(train_loader):
        # labels: batch size
        # d_img_org: batch x 3 x 768 x 1024
        # d_img_scale_1: batch x 3 x 288 x 384
        # d_img_scale_2: batch x 3 x 160 x 224
        d_img_org = data['d_img_org'].to(config.device)
        d_img_scale_1 = data['d_img_scale_1'].to(config.device)
        d_img_scale_2 = data['d_img_scale_2'].to(config.device)

        labels = data['score']
        labels = torch.squeeze(labels.type(torch.FloatTensor)).to(config.device)

        # backbone feature map (dis)
        feat_dis_org = model_backbone(d_img_org)
        feat_dis_scale_1 = model_backbone(d_img_scale_1)
        feat_dis_scale_2 = model_backbone(d_img_scale_2)

        # weight update
        optimizer.zero_grad()

        pred = model_transformer(mask_inputs, feat_dis_org, feat_dis_scale_1, feat_dis_scale_2)
        loss = criterion(torch.squeeze(pred), labels)
        loss_val = loss.item()
        losses.append(loss_val)

        loss.backward()
        optimizer.step()
        scheduler.step()

        # save results in one epoch
        pred_batch_numpy = pred.data.cpu().numpy()
        labels_batch_numpy = labels.data.cpu().numpy()
        pred_epoch = np.append(pred_epoch, pred_batch_numpy)
        labels_epoch = np.append(labels_epoch, labels_batch_numpy)

    # compute correlation coefficient
    rho_s, _ = spearmanr(np.squeeze(pred_epoch), np.squeeze(labels_epoch))
    rho_p, _ = pearsonr(np.squeeze(pred_epoch), np.squeeze(labels_epoch))

    print('[train] epoch:%d / loss:%f / SROCC:%4f / PLCC:%4f' % (epoch + 1, loss.item(), rho_s, rho_p))

    # save weights
    if (epoch + 1) % config.save_freq == 0:
        weights_file_name = "epoch%d.pth" % (epoch + 1)
        weights_file = os.path.join(config.snap_path, weights_file_name)
        torch.save({
            'epoch': epoch,
            'model_backbone_state_dict': model_backbone.state_dict(),
            'model_transformer_state_dict': model_transformer.state_dict(),
            'optimizer_state_dict': optimizer.state_dict(),
            'scheduler_state_dict': scheduler.state_dict(),
            'loss': loss,
        }, weights_file)
        print('save weights of epoch %d' % (epoch + 1))

    return np.mean(losses), rho_s, rho_p


def eval_epoch(config, epoch, model_transformer, model_backbone, criterion, test_loader):
    with torch.no_grad():
        losses = []
        model_transformer.eval()
        model_backbone.eval()

        # value is not changed
        mask_inputs = torch.ones(config.batch_size, config.n_enc_seq + 1).to(config.device)

        # save data for one epoch
        pred_epoch = []
        labels_epoch = []

        for data in tqdm(test_loader):
            d_img_org = data['d_img_org'].to(config.device)
            d_img_scale_1 = data['d_img_scale_1'].to(config.device)
            d_img_scale_2 = data['d_img_scale_2'].to(config.device)

            labels = data['score']
            labels = torch.squeeze(labels.type(torch.FloatTensor)).to(config.device)

            feat_dis_org = model_backbone(d_img_org)
            feat_dis_scale_1 = model_backbone(d_img_scale_1)
            feat_dis_scale_2 = model_backbone(d_img_scale_2)

            pred = model_transformer(mask_inputs, feat_dis_org, feat_dis_scale_1, feat_dis_scale_2)

            # compute loss
            loss = criterion(torch.squeeze(pred), labels)
            loss_val = loss.item()
            losses.append(loss_val)

            # save results in one epoch
            pred_batch_numpy = pred.data.cpu().numpy()
            labels_batch_numpy = labels.data.cpu().numpy()
            pred_epoch = np.append(pred_epoch, pred_batch_numpy)
            labels_epoch = np.append(labels_epoch, labels_batch_numpy)

        # compute correlation coefficient
        rho_s, _ = spearmanr(np.squeeze(pred_epoch), np.squeeze(labels_epoch))
        rho_p, _ = pearsonr(np.squeeze(pred_epoch), np.squeeze(labels_epoch))

        print('test epoch:%d / loss:%f /SROCC:%4f / PLCC:%4f' % (epoch + 1, loss.item(), rho_s, rho_p))

        return np.mean(losses), rho_s, rho_p


if __name__ == '__main__':
    # data selection
    if config.db_name == 'KonIQ-10k':
        from data.koniq import IQADataset

    # data separation (8:2)
    train_scene_list, test_scene_list = RandShuffle(config)
    print('number of train scenes: %d' % len(train_scene_list))
    print('number of test scenes: %d' % len(test_scene_list))

    # data load
    train_dataset = IQADataset(
        db_path=config.db_path,
        txt_file_name=config.txt_file_name,
        scale_1=config.scale_1,
        scale_2=config.scale_2,
        transform=transforms.Compose([Normalize(0.5, 0.5), RandHorizontalFlip(), ToTensor()]),
        train_mode=True,
        scene_list=train_scene_list,
        train_size=config.train_size
    )
    test_dataset = IQADataset(
        db_path=config.db_path,
        txt_file_name=config.txt_file_name,
        scale_1=config.scale_1,
        scale_2=config.scale_2,
        transform=transforms.Compose([Normalize(0.5, 0.5), ToTensor()]),
        train_mode=False,
        scene_list=test_scene_list,
        train_size=config.train_size
    )
    train_loader = DataLoader(dataset=train_dataset, batch_size=config.batch_size, num_workers=config.num_workers,
                              drop_last=True, shuffle=True, pin_memory=True)
    test_loader = DataLoader(dataset=test_dataset, batch_size=config.batch_size, num_workers=config.num_workers,
                             drop_last=True, shuffle=False, pin_memory=True)

    # create model
    model_backbone = resnet50_backbone().to(config.device)
    model_transformer = IQARegression(config).to(config.device)

    # loss function & optimization
    criterion = torch.nn.L1Loss()
    params = list(model_backbone.parameters()) + list(model_transformer.parameters())
    optimizer = torch.optim.SGD(params, lr=config.learning_rate, weight_decay=config.weight_decay,
                                momentum=config.momentum)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=config.T_max, eta_min=config.eta_min)

    # load weights & optimizer
    if config.checkpoint is not None:
        checkpoint = torch.load(config.checkpoint)
        model_backbone.load_state_dict(checkpoint['model_backbone_state_dict'])
        model_transformer.load_state_dict(checkpoint['model_transformer_state_dict'])
        optimizer.load_state_dict(checkpoint['optimizer_state_dict'])
        scheduler.load_state_dict(checkpoint['scheduler_state_dict'])
        start_epoch = checkpoint['epoch']
        loss = checkpoint['loss']
    else:
        start_epoch = 0

    # make directory for saving weights
    if not os.path.exists(config.snap_path):
        os.mkdir(config.snap_path)

    writer = SummaryWriter(os.path.join(config.snap_path, 'tb'))

    # train & validation
    for epoch in range(start_epoch, config.n_epoch):
        loss, rho_s, rho_p = train_epoch(config, epoch, model_transformer, model_backbone, criterion, optimizer,
                                         scheduler, train_loader)
        writer.add_scalar('train/loss', loss, epoch)
        writer.add_scalar('train/srocc', rho_s, epoch)
        writer.add_scalar('train/plcc', rho_p, epoch)

        if (epoch + 1) % config.val_freq == 0:
            loss, rho_s, rho_p = eval_epoch(config, epoch, model_transformer, model_backbone, criterion, test_loader)
            writer.add_scalar('val/loss', loss, epoch)
            writer.add_scalar('val/srocc', rho_s, epoch)
            writer.add_scalar('val/plcc', rho_p, epoch)

        # the multi-scale feature maps are large; give memory back between epochs
        torch.cuda.empty_cache()
