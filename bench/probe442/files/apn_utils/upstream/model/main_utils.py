import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision.transforms as transforms
import numpy as np
import random
import os
import json
import time
from util import ImageFilelist, map_label, AverageMeter
from sklearn.metrics import confusion_matrix


def set_randomseed(opt):
    # define random seed
    if opt.manualSeed is None:
        opt.manualSeed = random.randint(1, 10000)
    print("Random Seed: ", opt.manualSeed)
    random.seed(opt.manualSeed)
    torch.manual_seed(opt.manualSeed)
    np.random.seed(opt.manualSeed)
    if opt.cuda:
        torch.cuda.manual_seed_all(opt.manualSeed)
    if torch.cuda.is_available() and not opt.cuda:
        print("WARNING: You have a CUDA device, so you should probably run with --cuda")


def get_loader(opt, data):
    normalize = transforms.Normalize(mean=[0.485, 0.456, 0.406],
                                     std=[0.229, 0.224, 0.225])
    train_transform = []
    size = 224
    train_transform.extend([
        transforms.Resize(int(size * 8. / 7.)),  # 224 -> 256
        transforms.RandomCrop(size),
        transforms.RandomHorizontalFlip(0.5),
        transforms.ToTensor(),
        normalize
    ])
    train_transform = transforms.Compose(train_transform)
    test_transform = []
    size = 224
    test_transform.extend([
        transforms.Resize(int(size * 8. / 7.)),  # 224 -> 256
        transforms.CenterCrop(size),
        transforms.ToTensor(),
        normalize
    ])
    test_transform = transforms.Compose(test_transform)

    dataset_train = ImageFilelist(opt, data_inf=data,
                                  transform=train_transform,
                                  dataset=opt.dataset,
                                  image_type='trainval_loc')
    if opt.train_mode == 'distributed':
        train_label = dataset_train.image_labels
        sampler = CategoriesSampler(
            train_label,
            n_batch=opt.n_batch,
            n_cls=opt.ways,
            n_per=opt.shots
        )
        trainloader = torch.utils.data.DataLoader(dataset=dataset_train, batch_sampler=sampler,
                                                  num_workers=opt.workers, pin_memory=True)
    elif opt.train_mode == 'random':
        trainloader = torch.utils.data.DataLoader(
            dataset_train,
            batch_size=opt.batch_size, shuffle=True,
            num_workers=4, pin_memory=True)

    dataset_test_unseen = ImageFilelist(opt, data_inf=data,
                                        transform=test_transform,
                                        dataset=opt.dataset,
                                        image_type='test_unseen_loc')
    testloader_unseen = torch.utils.data.DataLoader(
        dataset_test_unseen,
        batch_size=opt.batch_size, shuffle=False,
        num_workers=4, pin_memory=False)

    dataset_test_seen = ImageFilelist(opt, data_inf=data,
                                      transform=test_transform,
                                      dataset=opt.dataset,
                                      image_type='test_seen_loc')
    testloader_seen = torch.utils.data.DataLoader(
        dataset_test_seen,
        batch_size=opt.batch_size, shuffle=False,
        num_workers=4, pin_memory=False)

    # dataset for visualization should be transformed the same way as the test set
    dataset_visual = ImageFilelist(opt, data_inf=data,
                                   transform=test_transform,
                                   dataset=opt.dataset,
                                   image_type=opt.image_type)

    visloader = torch.utils.data.DataLoader(
        dataset_visual,
        batch_size=opt.batch_size, shuffle=False,
        num_workers=4, pin_memory=False)

    return trainloader, testloader_unseen, testloader_seen, visloader


class CategoriesSampler():
    # migrated from Liu et.al., which works well for CUB dataset
    def __init__(self, label_for_imgs, n_batch=1000, n_cls=16, n_per=4, ep_per_batch=1):
        self.n_batch = n_batch  # batchs for each epoch
        self.n_cls = n_cls  # ways
        self.n_per = n_per  # shots
        self.ep_per_batch = ep_per_batch  # episodes for each batch, defult set 1
        # print('label_for_imgs:', label_for_imgs[:100])
        # print(np.unique(label_for_imgs))
        self.cat = list(np.unique(label_for_imgs))
        # print('self.cat', len(self.cat))
        # print(self.cat)
        self.catlocs = {}

        for c in self.cat:
            self.catlocs[c] = np.argwhere(label_for_imgs == c).reshape(-1)
        # print('self.catlocs[c]:', self.catlocs[0])

    def __len__(self):
        return self.n_batch

    def __iter__(self):
        for i_batch in range(self.n_batch):
            batch = []
            for i_ep in range(self.ep_per_batch):
                episode = []
                selected_classes = np.random.choice(self.cat, self.n_cls, replace=False)
                for c in selected_classes:
                    l = np.random.choice(self.catlocs[c], self.n_per, replace=False)
                    episode.append(torch.from_numpy(l))
                episode = torch.stack(episode)
                batch.append(episode)
            batch = torch.stack(batch)  # bs * n_cls * n_per
            yield batch.view(-1)


def prepare_attri_label(attribute, classes):
    # print('attribute.shape', attribute.shape)
    classes_dim = classes.size(0)
    attri_dim = attribute.shape[1]
    output_attribute = torch.FloatTensor(classes_dim, attri_dim)
    for i in range(classes_dim):
        output_attribute[i] = attribute[classes[i]]
    return torch.transpose(output_attribute, 1, 0)


def get_middle_graph(weight_cpt, model):
    middle_graph = None
    if weight_cpt > 0:
        # creat middle_graph to mask the L_CPT:
        kernel_size = model.kernel_size[model.extract[0]]
        raw_graph = torch.zeros((2 * kernel_size - 1, 2 * kernel_size - 1))
        for x in range(- kernel_size + 1, kernel_size):
            for y in range(- kernel_size + 1, kernel_size):
                raw_graph[x + (kernel_size - 1), y + (kernel_size - 1)] = x ** 2 + y ** 2
        middle_graph = torch.zeros((kernel_size, kernel_size, kernel_size, kernel_size))
        for x in range(kernel_size):
            for y in range(kernel_size):
                middle_graph[x, y, :, :] = \
                    raw_graph[kernel_size - 1 - x: 2 * kernel_size - 1 - x, kernel_size - 1 - y: 2 * kernel_size - 1 - y]
        middle_graph = middle_graph.cuda()
    return middle_graph


def add_glasso(var, group):
    return var[group, :].pow(2).sum(dim=0).add(1e-8).sum().pow(1 / 2.)


def add_dim_glasso(var, group):
    loss = var[group, :].pow(2).sum(dim=1).add(1e-8).pow(1 / 2.).sum()
    return loss


def Loss_fn(opt, loss_log, reg_weight, criterion, criterion_regre, model,
            output, pre_attri, attention, pre_class, label_a, label_v,
            realtrain, middle_graph, parts, group_dic, sub_group_dic):
    # for Layer_Regression:
    loss = 0
    if reg_weight['final']['xe'] > 0:
        loss_xe = reg_weight['final']['xe'] * criterion(output, label_v)
        loss_log['l_xe_final'] += loss_xe.item()
        loss = loss_xe

    if reg_weight['final']['attri'] > 0:
        loss_attri = reg_weight['final']['attri'] * criterion_regre(pre_attri['final'], label_a)
        loss_log['l_attri_final'] += loss_attri.item()
        loss += loss_attri

    # add regularization loss
    if opt.avg_pool:
        pass
    else:
        if reg_weight['final']['regular'] > 0:
            for name in model.extract:
                layer_wise_group = model.prototype_vectors[name]
                reg_loss = 0
                for key in group_dic:
                    group = group_dic[key]
                    reg_loss += add_glasso(layer_wise_group.squeeze(), group)
                loss_reg = reg_weight['final']['regular'] * reg_loss
                loss_log['l_regular_final'] += loss_reg.item()
                loss += loss_reg

        # add CPT loss
        if opt.cpt > 0:
            batch_size, attri_dim, map_dim, map_dim = attention['layer4'].size()
            if opt.cuda:
                peak_id = torch.argmax(attention['layer4'].view(batch_size * attri_dim, -1), dim=1)
                peak_mask = middle_graph[peak_id, :, :].view(batch_size, attri_dim, map_dim, map_dim)
                cpt_loss = opt.cpt * torch.sum(torch.sigmoid(attention['layer4']) * peak_mask)
            loss_log['l_cpt'] += cpt_loss.item()
            loss += cpt_loss

    if realtrain:
        for name in ['layer1', 'layer2', 'layer3']:
            if name in pre_attri:
                loss_attri = reg_weight[name]['l_attri'] * criterion_regre(pre_attri[name], label_a)
                loss_log['l_attri_' + name] += loss_attri.item()
                loss += loss_attri
    return loss


def test_zsl(opt, model, testloader, attribute, test_classes):
    GT_targets = []
    predicted_labels = []
    predicted_layers = {'layer1': [], 'layer2': [], 'layer3': [], 'layer4': []}
    with torch.no_grad():
        for i, (input, target, impath) in \
                enumerate(testloader):
            labels = target.data.tolist()
            if opt.cuda:
                input = input.cuda()
                target = target.cuda()
            output, pre_attri, attention, _ = model(input, attribute)
            _, predicted_label = torch.max(output.data, 1)
            predicted_labels.extend(predicted_label.cpu().numpy().tolist())
            GT_targets = GT_targets + labels
    GT_targets = np.asarray(GT_targets)
    acc_all, acc_avg = compute_per_class_acc(map_label(torch.from_numpy(GT_targets), test_classes).numpy(),
                                             np.array(predicted_labels), test_classes.numpy())
    if opt.all:
        return acc_all * 100
    else:
        return acc_avg * 100


def calibrated_stacking(opt, output, lam=1e-3):
    """
    output: the output predicted score of size batchsize * 200
    lam: the parameter to control the output score of seen classes.
    self.test_seen_label
    self.test_unseen_label
    :return
    """
    output = output.cpu().numpy()
    seen_L = list(set(opt.test_seen_label.numpy()))
    output[:, seen_L] = output[:, seen_L] - lam
    return torch.from_numpy(output)


def test_gzsl(opt, model, testloader, attribute, test_classes, calibrated_stacking_weight=None):
    GT_targets = []
    predicted_labels = []
    with torch.no_grad():
        for i, (input, target, impath) in \
                enumerate(testloader):
            labels = target.data.tolist()
            if opt.cuda:
                input = input.cuda(non_blocking=True)
                target = target.cuda(non_blocking=True)
            output, _, _, _ = model(input, attribute)
            if calibrated_stacking_weight:
                output = calibrated_stacking(opt, output, calibrated_stacking_weight)
            _, predicted_label = torch.max(output.data, 1)
            predicted_labels.extend(predicted_label.cpu().numpy().tolist())
            GT_targets = GT_targets + labels
    GT_targets = np.asarray(GT_targets)
    acc_all, acc_avg = compute_per_class_acc_gzsl(GT_targets,
                                                  np.array(predicted_labels), test_classes.numpy())
    if opt.all:
        return acc_all * 100
    else:
        return acc_avg * 100


def compute_per_class_acc(test_label, predicted_label, nclass):
    test_label = np.array(test_label)
    predicted_label = np.array(predicted_label)
    acc_per_class = []
    acc = np.sum(test_label == predicted_label) / len(test_label)
    for i in range(len(nclass)):
        idx = (test_label == i)
        acc_per_class.append(np.sum(test_label[idx] == predicted_label[idx]) / np.sum(idx))
    return acc, sum(acc_per_class) / len(acc_per_class)


def compute_per_class_acc_gzsl(test_label, predicted_label, target_classes):
    acc_per_class = 0
    acc = np.sum(test_label == predicted_label) / len(test_label)
    for i in target_classes:
        idx = (test_label == i)
        acc_per_class += np.sum(test_label[idx] == predicted_label[idx]) / np.sum(idx)
    acc_per_class /= target_classes.shape[0]
    return acc, acc_per_class


class Result(object):
    def __init__(self):
        self.best_acc = 0.0
        self.best_iter = 0.0
        self.best_acc_S_T = 0.0
        self.best_acc_U_T = 0.0
        self.acc_list = []
        self.epoch_list = []

    def update(self, it, acc):
        self.acc_list += [acc]
        self.epoch_list += [it]
        if acc > self.best_acc:
            self.best_acc = acc
            self.best_iter = it

    def update_gzsl(self, it, acc_u, acc_s, H):
        self.acc_list += [H]
        self.epoch_list += [it]
        if H > self.best_acc:
            self.best_acc = H
            self.best_iter = it
            self.best_acc_U_T = acc_u
            self.best_acc_S_T = acc_s


def get_group(opt):
    if opt.dataset == 'CUB':
        group_dic = json.load(open(os.path.join(opt.root, 'data', opt.dataset, 'attri_groups_8.json')))
        sub_group_dic = json.load(open(os.path.join(opt.root, 'data', opt.dataset, 'attri_groups_8_layer.json')))
    elif opt.dataset == 'AWA2':
        group_dic = json.load(open(os.path.join(opt.root, 'data', opt.dataset, 'attri_groups_9.json')))
        sub_group_dic = {}
    elif opt.dataset == 'SUN':
        group_dic = json.load(open(os.path.join(opt.root, 'data', opt.dataset, 'attri_groups_4.json')))
        sub_group_dic = {}
    else:
        raise ValueError('unknown dataset %s' % opt.dataset)
    return group_dic, sub_group_dic


def log_timing(tag, start, loader_len):
    torch.cuda.synchronize()
    elapsed = time.time() - start
    print('[%s] %.2fs total, %.3fs/iter, max mem %.0fMB'
          % (tag, elapsed, elapsed / max(loader_len, 1), torch.cuda.max_memory_allocated() / 1024 ** 2))
