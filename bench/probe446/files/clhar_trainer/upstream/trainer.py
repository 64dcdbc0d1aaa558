# encoding=utf-8
import os
import random
from copy import deepcopy

import numpy as np
import torch
import torch.nn as nn
import matplotlib.pyplot as plt
import seaborn as sns
from sklearn.manifold import TSNE, MDS
from sklearn.metrics import f1_score, confusion_matrix

from models.backbones import FCN, DeepConvLSTM, LSTM, AE, CNN_AE, Transformer
from models.frameworks import BYOL, SimSiam, SimCLR, NNCLR, TSTCC, TPN, SupCon, CPC
from models.loss import NTXentLoss
from augmentations import gen_aug, gen_tpn_aug
from data_preprocess import data_preprocess_ucihar, data_preprocess_shar, data_preprocess_hhar


def setup_seed(seed):
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    np.random.seed(seed)
    random.seed(seed)
    torch.backends.cudnn.deterministic = True


def setup_dataloaders(args):
    if args.dataset == 'ucihar':
        args.n_feature = 9
        args.len_sw = 128
        args.n_class = 6
        if args.cases not in ['subject', 'subject_large']:
            args.target_domain = '0'
        train_loaders, val_loader, test_loader = data_preprocess_ucihar.prep_ucihar(
            args, SLIDING_WINDOW_LEN=args.len_sw, SLIDING_WINDOW_STEP=int(args.len_sw * 0.5))
    elif args.dataset == 'shar':
        args.n_feature = 3
        args.len_sw = 151
        args.n_class = 17
        train_loaders, val_loader, test_loader = data_preprocess_shar.prep_shar(
            args, SLIDING_WINDOW_LEN=args.len_sw, SLIDING_WINDOW_STEP=int(args.len_sw * 0.5))
    elif args.dataset == 'hhar':
        args.n_feature = 6
        args.len_sw = 100
        args.n_class = 6
        source_domain = 'a' if args.target_domain != 'a' else 'b'
        train_loaders, val_loader, test_loader = data_preprocess_hhar.prep_hhar(
            args, SLIDING_WINDOW_LEN=args.len_sw, SLIDING_WINDOW_STEP=int(args.len_sw * 0.5),
            device=args.device, train_user=source_domain, test_user=args.target_domain)
    else:
        raise NotImplementedError(args.dataset)
    return train_loaders, val_loader, test_loader


def setup_linclf(args, DEVICE, bb_dim):
    """ @param bb_dim: output dimension of the backbone network """
    classifier = nn.Linear(bb_dim, args.n_class)
    classifier.classifier = classifier
    return classifier.to(DEVICE)


def build_backbone(args):
    if args.backbone == 'FCN':
        return FCN(n_channels=args.n_feature, n_classes=args.n_class, backbone=True)
    if args.backbone == 'DCL':
        return DeepConvLSTM(n_channels=args.n_feature, n_classes=args.n_class, conv_kernels=64, kernel_size=5,
                            LSTM_units=128, backbone=True)
    if args.backbone == 'LSTM':
        return LSTM(n_channels=args.n_feature, n_classes=args.n_class, LSTM_units=128, backbone=True)
    if args.backbone == 'AE':
        return AE(n_channels=args.n_feature, len_sw=args.len_sw, n_classes=args.n_class, outdim=128, backbone=True)
    if args.backbone == 'CNN_AE':
        return CNN_AE(n_channels=args.n_feature, n_classes=args.n_class, out_channels=128, backbone=True)
    if args.backbone == 'Transformer':
        return Transformer(n_channels=args.n_feature, len_sw=args.len_sw, n_classes=args.n_class, dim=128,
                           depth=4, heads=4, mlp_dim=64, dropout=0.1, backbone=True)
    raise NotImplementedError(args.backbone)


def setup_model_optm(args, DEVICE, classifier=True):
    backbone = build_backbone(args)

    if args.framework in ['byol', 'simsiam']:
        model = BYOL(DEVICE, backbone, window_size=args.len_sw, n_channels=args.n_feature, projection_size=args.p,
                     projection_hidden_size=args.phid, moving_average=args.EMA)
        optimizer1 = torch.optim.Adam(model.online_encoder.parameters(), args.lr, weight_decay=args.weight_decay)
        optimizer2 = torch.optim.Adam(model.online_predictor.parameters(), args.lr * args.lr_mul,
                                      weight_decay=args.weight_decay)
        optimizers = [optimizer1, optimizer2]
    elif args.framework == 'simclr':
        model = SimCLR(backbone=backbone, dim=args.p)
        optimizers = [torch.optim.Adam(model.parameters(), args.lr, weight_decay=args.weight_decay)]
    elif args.framework == 'nnclr':
        model = NNCLR(backbone=backbone, dim=args.p, pred_dim=args.phid)
        optimizers = [torch.optim.Adam(model.parameters(), args.lr, weight_decay=args.weight_decay)]
    elif args.framework == 'tstcc':
        model = TSTCC(backbone=backbone, DEVICE=DEVICE, temp_unit=args.temp_unit, tc_hidden=100)
        optimizers = [torch.optim.Adam(model.parameters(), args.lr, betas=(0.9, 0.99),
                                       weight_decay=args.weight_decay)]
    elif args.framework == 'tpn':
        model = TPN(backbone=backbone, n_transforms=len(gen_tpn_aug.TRANSFORMS))
        optimizers = [torch.optim.Adam(model.parameters(), args.lr, weight_decay=args.weight_decay)]
    elif args.framework == 'supcon':
        model = SupCon(backbone=backbone, dim=args.p)
        optimizers = [torch.optim.Adam(model.parameters(), args.lr, weight_decay=args.weight_decay)]
    elif args.framework == 'cpc':
        model = CPC(backbone=backbone, DEVICE=DEVICE, n_steps=12)
        optimizers = [torch.optim.Adam(model.parameters(), args.lr, weight_decay=args.weight_decay)]
    else:
        raise NotImplementedError(args.framework)

    model = model.to(DEVICE)
    schedulers = [torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.n_epoch, eta_min=0)
                  for opt in optimizers]

    if classifier:
        bb_dim = backbone.out_dim
        classifier = setup_linclf(args, DEVICE, bb_dim)
        return model, classifier, optimizers, schedulers
    return model, optimizers, schedulers


def setup(args, DEVICE):
    model, classifier, optimizers, schedulers = setup_model_optm(args, DEVICE, classifier=True)

    if args.criterion == 'cos_sim':
        criterion = nn.CosineSimilarity(dim=1)
    elif args.criterion == 'NTXent':
        criterion = NTXentLoss(DEVICE, args.batch_size, temperature=0.1)

    args.model_name = args.framework + '_' + args.backbone + '_' + args.dataset + '_lr' + str(args.lr) + '_bs' + \
        str(args.batch_size) + '_aug1' + args.aug1 + '_aug2' + args.aug2 + '_dim' + str(args.p) + '_pdim' + \
        str(args.phid) + '_EMA' + str(args.EMA) + '_criterion_' + args.criterion + '_lambda1_' + \
        str(args.lambda1) + '_lambda2_' + str(args.lambda2) + '_tempunit_' + args.temp_unit
    args.model_dir = os.path.join(args.logdir, 'models')
    os.makedirs(args.model_dir, exist_ok=True)
    args.model_dir_name = os.path.join(args.model_dir, args.model_name + '.pt')

    log_file_name = os.path.join(args.logdir, args.model_name + '.txt')
    logger = open(log_file_name, 'a')

    criterion_cls = nn.CrossEntropyLoss()
    optimizer_cls = torch.optim.Adam(classifier.parameters(), lr=args.lr_cls)

    import fitlog
    return model, optimizers, schedulers, criterion, logger, fitlog, classifier, criterion_cls, optimizer_cls


def calculate_model_loss(args, sample, target, model, criterion, DEVICE, recon=None, nn_replacer=None):
    aug_sample1 = gen_aug(sample, args.aug1)
    aug_sample2 = gen_aug(sample, args.aug2)
    aug_sample1, aug_sample2, target = aug_sample1.to(DEVICE).float(), aug_sample2.to(DEVICE).float(), \
        target.to(DEVICE).long()

    if args.framework in ['byol', 'simsiam']:
        assert args.criterion == 'cos_sim'
    if args.framework in ['tstcc', 'simclr', 'nnclr']:
        assert args.criterion == 'NTXent'

    if args.framework in ['byol', 'simsiam', 'nnclr']:
        if args.backbone in ['AE', 'CNN_AE']:
            x1_encoded, x2_encoded, p1, p2, z1, z2 = model(x1=aug_sample1, x2=aug_sample2)
            recon_loss = recon(aug_sample1, x1_encoded) + recon(aug_sample2, x2_encoded)
        else:
            p1, p2, z1, z2 = model(x1=aug_sample1, x2=aug_sample2)
        if args.framework == 'nnclr':
            z1 = nn_replacer(z1, update=False)
            z2 = nn_replacer(z2, update=True)
        if args.criterion == 'cos_sim':
            loss = -(criterion(p1, z2).mean() + criterion(p2, z1).mean()) * 0.5
        elif args.criterion == 'NTXent':
            loss = (criterion(p1, z2) + criterion(p2, z1)) * 0.5
        if args.backbone in ['AE', 'CNN_AE']:
            loss = loss * args.lambda1 + recon_loss * args.lambda2
    elif args.framework == 'simclr':
        if args.backbone in ['AE', 'CNN_AE']:
            x1_encoded, x2_encoded, z1, z2 = model(x1=aug_sample1, x2=aug_sample2)
            recon_loss = recon(aug_sample1, x1_encoded) + recon(aug_sample2, x2_encoded)
        else:
            z1, z2 = model(x1=aug_sample1, x2=aug_sample2)
        loss = criterion(z1, z2)
        if args.backbone in ['AE', 'CNN_AE']:
            loss = loss * args.lambda1 + recon_loss * args.lambda2
    elif args.framework == 'tstcc':
        nce1, nce2, p1, p2 = model(x1=aug_sample1, x2=aug_sample2)
        tmp_loss = nce1 + nce2
        ctx_loss = criterion(p1, p2)
        loss = tmp_loss * args.lambda1 + ctx_loss * args.lambda2
    elif args.framework == 'tpn':
        x_t, y_t = gen_tpn_aug(sample)
        logits = model(x_t.to(DEVICE).float())
        loss = sum(nn.functional.binary_cross_entropy_with_logits(logits[:, k], y_t[:, k].to(DEVICE).float())
                   for k in range(y_t.shape[1]))
    elif args.framework == 'supcon':
        z1, z2 = model(x1=aug_sample1, x2=aug_sample2)
        features = torch.cat([z1.unsqueeze(1), z2.unsqueeze(1)], dim=1)
        loss = criterion(features, target)
    elif args.framework == 'cpc':
        loss = model(aug_sample1)
    else:
        raise NotImplementedError(args.framework)
    return loss


def train(train_loaders, val_loader, model, logger, fitlog, DEVICE, optimizers, schedulers, criterion, args):
    best_model = None
    min_val_loss = 1e8
    recon = nn.MSELoss() if args.backbone in ['AE', 'CNN_AE'] else None
    nn_replacer = None
    if args.framework == 'nnclr':
        from models.frameworks import NNMemoryBankModule
        nn_replacer = NNMemoryBankModule(size=args.mmb_size)

    for epoch in range(args.n_epoch):
        total_loss = 0
        n_batches = 0
        model.train()
        for i, train_loader in enumerate(train_loaders):
            for idx, (sample, target, domain) in enumerate(train_loader):
                for optimizer in optimizers:
                    optimizer.zero_grad()
                if sample.size(0) != args.batch_size:
                    continue
                n_batches += 1
                loss = calculate_model_loss(args, sample, target, model, criterion, DEVICE, recon=recon,
                                            nn_replacer=nn_replacer)
                total_loss += loss.item()
                loss.backward()
                for optimizer in optimizers:
                    optimizer.step()
                if args.framework in ['byol', 'simsiam']:
                    model.update_moving_average()

        for scheduler in schedulers:
            scheduler.step()

        # save model
        model_dir = args.model_dir_name
        print('Saving model at {} epoch to {}'.format(epoch, model_dir))
        torch.save({'model_state_dict': model.state_dict()}, model_dir)

        print('Train Loss     : {:.4f}'.format(total_loss / n_batches))
        fitlog.add_loss(total_loss / n_batches, name='pretrain training loss', step=epoch)

        if args.cases in ['subject', 'subject_large']:
            with torch.no_grad():
                best_model = deepcopy(model.state_dict())
        else:
            with torch.no_grad():
                model.eval()
                total_loss = 0
                n_batches = 0
                for idx, (sample, target, domain) in enumerate(val_loader):
                    if sample.size(0) != args.batch_size:
                        continue
                    n_batches += 1
                    loss = calculate_model_loss(args, sample, target, model, criterion, DEVICE, recon=recon,
                                                nn_replacer=nn_replacer)
                    total_loss += loss.item()
                if total_loss <= min_val_loss:
                    min_val_loss = total_loss
                    best_model = deepcopy(model.state_dict())
                    print('update')
                logger.write('Val Loss     : {:.4f}\n'.format(total_loss / n_batches))
                fitlog.add_loss(total_loss / n_batches, name='pretrain validation loss', step=epoch)
    return best_model


def test(test_loader, best_model, logger, fitlog, DEVICE, criterion, args):
    model, _, _ = setup_model_optm(args, DEVICE, classifier=False)
    model.load_state_dict(best_model)
    with torch.no_grad():
        model.eval()
        total_loss = 0
        n_batches = 0
        for idx, (sample, target, domain) in enumerate(test_loader):
            if sample.size(0) != args.batch_size:
                continue
            n_batches += 1
            loss = calculate_model_loss(args, sample, target, model, criterion, DEVICE)
            total_loss += loss.item()
        print('Test Loss     :', total_loss / n_batches)
        fitlog.add_best_metric({'dev': {'pretrain test loss': total_loss / n_batches}})
    return model


def lr_finetune(model, classifier, train_loaders, val_loader, test_loader, criterion_cls, optimizer_cls, logger,
                fitlog, DEVICE, args):
    trained_backbone = model.encoder if args.framework not in ['byol', 'simsiam'] else model.online_encoder[0]
    for param in trained_backbone.parameters():
        param.requires_grad = False

    best_f1 = 0.0
    best_classifier = None
    for epoch in range(args.n_epoch):
        classifier.train()
        for i, train_loader in enumerate(train_loaders):
            for idx, (sample, target, domain) in enumerate(train_loader):
                sample, target = sample.to(DEVICE).float(), target.to(DEVICE).long()
                with torch.no_grad():
                    feat, _ = trained_backbone(sample)
                logits = classifier(feat.detach())
                loss = criterion_cls(logits, target)
                optimizer_cls.zero_grad()
                loss.backward()
                optimizer_cls.step()

        classifier.eval()
        preds, trues = [], []
        with torch.no_grad():
            for idx, (sample, target, domain) in enumerate(val_loader):
                sample, target = sample.to(DEVICE).float(), target.to(DEVICE).long()
                feat, _ = trained_backbone(sample)
                preds.append(classifier(feat).argmax(1).cpu().numpy())
                trues.append(target.cpu().numpy())
        f1 = f1_score(np.concatenate(trues), np.concatenate(preds), average='macro')
        fitlog.add_metric({'dev': {'linear f1': f1}}, step=epoch)
        if f1 >= best_f1:
            best_f1 = f1
            best_classifier = deepcopy(classifier.state_dict())
            torch.save({'trained_backbone': trained_backbone.state_dict(),
                        'classifier': classifier.state_dict()}, args.model_dir_name + '_lincls.pt')

    # test with the best linear classifier
    classifier.load_state_dict(best_classifier)
    preds, trues = [], []
    with torch.no_grad():
        for idx, (sample, target, domain) in enumerate(test_loader):
            sample, target = sample.to(DEVICE).float(), target.to(DEVICE).long()
            feat, _ = trained_backbone(sample)
            preds.append(classifier(feat).argmax(1).cpu().numpy())
            trues.append(target.cpu().numpy())
    preds, trues = np.concatenate(preds), np.concatenate(trues)
    acc = (preds == trues).mean() * 100
    f1 = f1_score(trues, preds, average='macro') * 100
    print('Test Acc: {:.2f}, Test F1: {:.2f}'.format(acc, f1))
    logger.write('Test Acc: {:.2f}, Test F1: {:.2f}\n'.format(acc, f1))
    fitlog.add_best_metric({'dev': {'Test Acc': acc, 'Test F1': f1}})
    print(confusion_matrix(trues, preds))
    return trained_backbone


def _embed(backbone, loader, DEVICE):
    feats, labels = [], []
    backbone.eval()
    with torch.no_grad():
        for sample, target, domain in loader:
            feat, _ = backbone(sample.to(DEVICE).float())
            feats.append(feat.cpu().numpy())
            labels.append(target.numpy())
    return np.concatenate(feats), np.concatenate(labels)


def tsne(backbone, loader, DEVICE, save_dir='tsne.png'):
    feats, labels = _embed(backbone, loader, DEVICE)
    emb = TSNE(n_components=2, random_state=0).fit_transform(feats)
    plt.figure(figsize=(8, 8))
    sns.scatterplot(x=emb[:, 0], y=emb[:, 1], hue=labels, palette='tab10', s=8, legend='full')
    plt.savefig(save_dir)
    plt.close()


def mds(backbone, loader, DEVICE, save_dir='mds.png'):
    feats, labels = _embed(backbone, loader, DEVICE)
    emb = MDS(n_components=2, random_state=0).fit_transform(feats[:2000])
    plt.figure(figsize=(8, 8))
    sns.scatterplot(x=emb[:, 0], y=emb[:, 1], hue=labels[:2000], palette='tab10', s=8, legend='full')
    plt.savefig(save_dir)
    plt.close()


def delete_files(args):
    for path in (args.model_dir_name, args.model_dir_name + '_lincls.pt'):
        if os.path.isfile(path):
            os.remove(path)
