"""
FairDisCo: Fairer AI in Dermatology via Disentanglement Contrastive Learning.
Training script for the three-branch network (classification branch,
skin-type branch with confusion loss, contrastive branch) on Fitzpatrick17k
and DDI.
"""
from __future__ import print_function, division
import os
import time
import copy
import argparse
import warnings
from datetime import datetime

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.optim as optim
from torch.optim import lr_scheduler
from torch.utils.data import DataLoader
from torchvision import transforms

from data import SkinDataset, get_weighted_sampler
from models import Network
from losses import Confusion_Loss, Supervised_Contrastive_Loss
from utils import cal_metrics, seed_everything

warnings.filterwarnings("ignore")


parser = argparse.ArgumentParser()
parser.add_argument('--n_epochs', type=int, default=20)
parser.add_argument('--dev_mode', type=str, default='full', help='dev: use 1000 images only')
parser.add_argument('--dataset', type=str, default='fitzpatrick17k', choices=['fitzpatrick17k', 'ddi'])
parser.add_argument('--backbone', type=str, default='resnet18', choices=['vgg16', 'resnet18', 'resnet50'])
parser.add_argument('--holdout_set', type=str, default='random_holdout')
parser.add_argument('--image_dir', type=str, default='../data/finalfitz17k')
parser.add_argument('--csv_dir', type=str, default='../data/fitzpatrick17k.csv')
parser.add_argument('--batch_size', type=int, default=64)
parser.add_argument('--lr', type=float, default=1e-4)
parser.add_argument('--alpha', type=float, default=1.0, help='weight of the confusion loss')
parser.add_argument('--beta', type=float, default=0.8, help='weight of the contrastive loss')
parser.add_argument('--seed', type=int, default=64)
parser.add_argument('--out_dir', type=str, default='./results')
args = parser.parse_args()

torch.backends.cudnn.benchmark = True
device = torch.device("cuda")


def train_model(label, dataloaders, device, dataset_sizes, model,
                criterion, optimizer, optimizer_confusion, scheduler, num_epochs=2):
    since = time.time()
    training_results = []
    best_model_wts = copy.deepcopy(model.state_dict())
    best_acc = 0.0
    best_loss = 10000
    best_epoch = 0
    leading_epoch = 0

    for epoch in range(num_epochs):
        print('Epoch {}/{}'.format(epoch, num_epochs - 1))
        print('-' * 10)
        for phase in ['train', 'val']:
            if phase == 'train':
                model.train()
            else:
                model.eval()

            running_loss = 0.0
            running_loss_conf = 0.0
            running_loss_contr = 0.0
            running_corrects = 0
            running_corrects_attr = 0
            running_total = 0

            for n_iter, batch in enumerate(dataloaders[phase]):
                inputs = batch["image"].to(device)
                label_c = torch.from_numpy(np.asarray(batch[label])).to(device)
                label_t = torch.from_numpy(np.asarray(batch['fitzpatrick'])).to(device) - 1
                optimizer.zero_grad()
                optimizer_confusion.zero_grad()

                with torch.set_grad_enabled(phase == 'train'):
                    inputs = inputs.float()
                    output = model(inputs)
                    _, preds = torch.max(output[0], 1)
                    _, preds_attr = torch.max(output[1], 1)

                    loss0 = criterion[0](output[0], label_c)  # disease classification
                    loss1 = criterion[1](output[1], label_t)  # skin-type branch
                    loss2 = criterion[2](output[2], label_t)  # confusion loss
                    loss3 = criterion[3](output[3], label_c)  # supervised contrastive

                    if phase == 'train':
                        # 1) update the skin-type head on its own
                        loss1.backward(retain_graph=True)
                        optimizer_confusion.step()
                        optimizer.zero_grad()
                        # 2) update the rest with confusion + contrastive terms
                        loss = loss0 + loss2 * args.alpha + loss3 * args.beta
                        loss.backward()
                        optimizer.step()
                    else:
                        loss = loss0 + loss2 * args.alpha + loss3 * args.beta

                running_loss += loss0.item() * inputs.size(0)
                running_loss_conf += loss2.item() * inputs.size(0)
                running_loss_contr += loss3.item() * inputs.size(0)
                running_corrects += torch.sum(preds == label_c.data)
                running_corrects_attr += torch.sum(preds_attr == label_t.data)
                running_total += inputs.size(0)

            if phase == 'train':
                scheduler.step()

            epoch_loss = running_loss / running_total
            epoch_acc = running_corrects.double() / running_total
            epoch_acc_attr = running_corrects_attr.double() / running_total
            print('{} Loss: {:.4f} Conf: {:.4f} Contr: {:.4f} Acc: {:.4f} AttrAcc: {:.4f}'.format(
                phase, epoch_loss, running_loss_conf / running_total,
                running_loss_contr / running_total, epoch_acc, epoch_acc_attr))
            training_results.append([phase, epoch, epoch_loss, epoch_acc.item(), epoch_acc_attr.item()])

            if phase == 'val' and epoch_loss < best_loss:
                print("New leading accuracy: {}".format(epoch_acc))
                best_loss = epoch_loss
                best_acc = epoch_acc
                leading_epoch = epoch
                best_model_wts = copy.deepcopy(model.state_dict())

    time_elapsed = time.time() - since
    print('Training complete in {:.0f}m {:.0f}s'.format(time_elapsed // 60, time_elapsed % 60))
    print('Best val Acc: {:4f} at epoch {}'.format(best_acc, leading_epoch))
    model.load_state_dict(best_model_wts)
    training_results = pd.DataFrame(training_results)
    training_results.columns = ["phase", "epoch", "loss", "accuracy", "accuracy_attr"]
    return model, training_results


def custom_load(batch_size, num_workers, train_dir, val_dir, image_dir, label):
    train = pd.read_csv(train_dir)
    val = pd.read_csv(val_dir)
    sampler = get_weighted_sampler(train, label)
    dataset_sizes = {"train": train.shape[0], "val": val.shape[0]}
    transformed_train = SkinDataset(
        csv_file=train_dir, root_dir=image_dir,
        transform=transforms.Compose([
            transforms.ToPILImage(),
            transforms.RandomResizedCrop(size=256, scale=(0.8, 1.0)),
            transforms.RandomRotation(degrees=15),
            transforms.ColorJitter(brightness=0.2, contrast=0.2, saturation=0.2),
            transforms.RandomHorizontalFlip(),
            transforms.CenterCrop(size=224),
            transforms.ToTensor(),
            transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
        ]))
    transformed_test = SkinDataset(
        csv_file=val_dir, root_dir=image_dir,
        transform=transforms.Compose([
            transforms.ToPILImage(),
            transforms.Resize(size=256),
            transforms.CenterCrop(size=224),
            transforms.ToTensor(),
            transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
        ]))
    dataloaders = {
        "train": DataLoader(transformed_train, batch_size=batch_size, sampler=sampler,
                            num_workers=num_workers, pin_memory=True, drop_last=True),
        "val": DataLoader(transformed_test, batch_size=batch_size, shuffle=False,
                          num_workers=num_workers, pin_memory=True, drop_last=True),
    }
    return dataloaders, dataset_sizes


def evaluate(model, loader, label, level, holdout_set, out_path):
    model = model.eval()
    rows = []
    with torch.no_grad():
        for batch in loader:
            inputs = batch["image"].to(device).float()
            output = model(inputs)
            probability = torch.nn.functional.softmax(output[0], dim=1)
            ppp, preds = torch.topk(probability, 1)
            preds = preds.squeeze(1).cpu().numpy()
            classes = batch[label].numpy()
            fitz = batch["fitzpatrick"].numpy()
            for h, c, p, f, pr in zip(batch["hasher"], classes, preds, fitz, probability.cpu().numpy()):
                rows.append({"hasher": h, "label": int(c), "prediction": int(p),
                             "fitzpatrick": int(f), "prediction_probability": pr.tolist()})
    df = pd.DataFrame(rows)
    df.to_csv(out_path, index=False)
    return cal_metrics(df, level)


def main():
    seed_everything(args.seed)
    os.makedirs(args.out_dir, exist_ok=True)
    df = pd.read_csv(args.csv_dir)
    if args.dev_mode == "dev":
        df = df.sample(1000)
    df["low"] = df['label'].astype('category').cat.codes
    df["mid"] = df['nine_partition_label'].astype('category').cat.codes
    df["high"] = df['three_partition_label'].astype('category').cat.codes
    df["hasher"] = df["md5hash"]

    from sklearn.model_selection import train_test_split
    train, test, _, _ = train_test_split(df, df.low, test_size=0.2,
                                         random_state=args.seed, stratify=df.low)
    train_path = os.path.join(args.out_dir, "temp_train_FairDisCo.csv")
    test_path = os.path.join(args.out_dir, "temp_test_FairDisCo.csv")
    train.to_csv(train_path, index=False)
    test.to_csv(test_path, index=False)

    for label in ["low", "mid", "high"]:
        level = {"low": 114, "mid": 9, "high": 3}[label]
        dataloaders, dataset_sizes = custom_load(args.batch_size, 8, train_path, test_path,
                                                 args.image_dir, label)
        model = Network(args.backbone, [level, 6, 6, 128], pretrained=True)
        model = model.to(device)

        class_weights = torch.FloatTensor(
            np.array(max(train[label].value_counts()) / train[label].value_counts().sort_index())
        ).to(device)
        criterion = [nn.CrossEntropyLoss(weight=class_weights),
                     nn.CrossEntropyLoss(),
                     Confusion_Loss(),
                     Supervised_Contrastive_Loss(0.1)]

        params_main = [p for n, p in model.named_parameters() if 'branch_2' not in n]
        params_conf = [p for n, p in model.named_parameters() if 'branch_2' in n]
        optimizer = optim.Adam(params_main, lr=args.lr, weight_decay=0.001)
        optimizer_confusion = optim.Adam(params_conf, lr=args.lr, weight_decay=0.001)
        exp_lr_scheduler = lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.9)

        print("\nTraining FairDisCo classifier for {} ({} classes) on {}........ \n".format(
            label, level, torch.cuda.get_device_name(device)))
        model_trained, training_results = train_model(
            label, dataloaders, device, dataset_sizes, model, criterion,
            optimizer, optimizer_confusion, exp_lr_scheduler, args.n_epochs)

        stamp = datetime.now().strftime('%Y%m%d_%H%M')
        torch.save(model_trained.state_dict(),
                   os.path.join(args.out_dir, "model_FairDisCo_{}_{}_{}_{}.pth".format(
                       args.n_epochs, label, args.holdout_set, stamp)))
        training_results.to_csv(os.path.join(args.out_dir, "training_FairDisCo_{}_{}.csv".format(
            label, args.holdout_set)))
        metrics = evaluate(model_trained, dataloaders["val"], label, level, args.holdout_set,
                           os.path.join(args.out_dir, "results_FairDisCo_{}_{}.csv".format(
                               label, args.holdout_set)))
        print(metrics)
        del model, model_trained
        torch.cuda.empty_cache()


if __name__ == '__main__':
    main()
