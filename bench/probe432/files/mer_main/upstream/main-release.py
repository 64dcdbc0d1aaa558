# *_*coding:utf-8 *_*
"""
MER2023 baseline: train a multimodal (audio / text / video feature) fusion model with
5-fold cross-validation on Train&Val, then predict on test1/test2/test3.

python -u main-release.py --dataset='MER2023' --model_type='attention' \
    --audio_feature='chinese-hubert-large-UTT' --text_feature='chinese-macbert-large-4-UTT' \
    --video_feature='manet_UTT' --lr=1e-3 --gpu=0
"""
import os
import time
import glob
import random
import argparse

import numpy as np
import pandas as pd
from sklearn.metrics import f1_score, accuracy_score, mean_squared_error

import torch
import torch.nn as nn
import torch.optim as optim
import torch.nn.functional as F
from torch.utils.data import Dataset, DataLoader

import config
from toolkit.models.attention import Attention
from toolkit.utils import gpu_tools

emos = ['neutral', 'angry', 'happy', 'sad', 'worried', 'surprise']
emo2idx, idx2emo = {}, {}
for ii, emo in enumerate(emos): emo2idx[emo] = ii
for ii, emo in enumerate(emos): idx2emo[ii] = emo


########################################################
############## multiprocess read features ##############
########################################################
def func_read_one(argv=None, feature_root=None, name=None):
    feature_root, name = argv
    feature_dir = glob.glob(os.path.join(feature_root, name + '*'))
    assert len(feature_dir) == 1
    feature_path = feature_dir[0]

    feature = []
    if feature_path.endswith('.npy'):
        single_feature = np.load(feature_path)
        single_feature = single_feature.squeeze()
        feature.append(single_feature)
    else:
        facenames = os.listdir(feature_path)
        for facename in sorted(facenames):
            facefeat = np.load(os.path.join(feature_path, facename))
            feature.append(facefeat)

    single_feature = np.array(feature).squeeze()
    if len(single_feature) == 0:
        print('feature has errors!!')
    elif len(single_feature.shape) == 2:
        single_feature = np.mean(single_feature, axis=0)
    return single_feature


def read_data_multiprocess(label_path, feature_root, task='emo', data_type='train', debug=False):
    ## gain (names, labels)
    names, labels = [], []
    assert task in ['emo', 'aro', 'val', 'whole']
    assert data_type in ['train', 'test1', 'test2', 'test3']
    if data_type == 'train': corpus = np.load(label_path, allow_pickle=True)['train_corpus'].tolist()
    if data_type == 'test1': corpus = np.load(label_path, allow_pickle=True)['test1_corpus'].tolist()
    if data_type == 'test2': corpus = np.load(label_path, allow_pickle=True)['test2_corpus'].tolist()
    if data_type == 'test3': corpus = np.load(label_path, allow_pickle=True)['test3_corpus'].tolist()
    for name in corpus:
        names.append(name)
        if task in ['aro', 'val']:
            labels.append(corpus[name][task])
        if task == 'emo':
            labels.append(emo2idx[corpus[name]['emo']])
        if task == 'whole':
            corpus[name]['vid'] = name
            labels.append(corpus[name])

    ## ============= for debug =============
    if debug:
        names = names[:100]
        labels = labels[:100]

    ## names => features
    params = []
    for ii, name in enumerate(names):
        params.append((feature_root, name))

    features = [func_read_one(p) for p in params]
    feature_dim = np.array(features).shape[-1]

    ## save (names, features)
    print(f'Input feature {feature_root} ===> dim is {feature_dim}')
    assert len(names) == len(features), f'Error: len(names) != len(features)'
    name2feats, name2labels = {}, {}
    for ii in range(len(names)):
        name2feats[names[ii]] = features[ii]
        name2labels[names[ii]] = labels[ii]
    return name2feats, name2labels, feature_dim


########################################################
##################### data loader ######################
########################################################
class MERDataset(Dataset):

    def __init__(self, label_path, audio_root, text_root, video_root, data_type, debug=False):
        assert data_type in ['train', 'test1', 'test2', 'test3']
        self.name2audio, self.name2labels, self.adim = read_data_multiprocess(label_path, audio_root, task='whole', data_type=data_type, debug=debug)
        self.name2text, self.name2labels, self.tdim = read_data_multiprocess(label_path, text_root, task='whole', data_type=data_type, debug=debug)
        self.name2video, self.name2labels, self.vdim = read_data_multiprocess(label_path, video_root, task='whole', data_type=data_type, debug=debug)
        self.names = [name for name in self.name2audio if 1 == 1]

    def __getitem__(self, index):
        name = self.names[index]
        return torch.FloatTensor(self.name2audio[name]),\
               torch.FloatTensor(self.name2text[name]),\
               torch.FloatTensor(self.name2video[name]),\
               self.name2labels[name]['emo'],\
               self.name2labels[name]['val'],\
               name

    def __len__(self):
        return len(self.names)

    def get_featDim(self):
        print(f'audio dimension: {self.adim}; text dimension: {self.tdim}; video dimension: {self.vdim}')
        return self.adim, self.tdim, self.vdim


def get_loaders(args, config):
    train_dataset = MERDataset(label_path=config.PATH_TO_LABEL[args.train_dataset],
                               audio_root=os.path.join(config.PATH_TO_FEATURES[args.train_dataset], args.audio_feature),
                               text_root=os.path.join(config.PATH_TO_FEATURES[args.train_dataset], args.text_feature),
                               video_root=os.path.join(config.PATH_TO_FEATURES[args.train_dataset], args.video_feature),
                               data_type='train', debug=args.debug)

    # gain indices for cross-validation
    whole_folder = []
    whole_num = len(train_dataset.names)
    indices = np.arange(whole_num)
    random.shuffle(indices)

    # split indices into five-fold
    num_folder = args.num_folder
    each_folder_num = int(whole_num / num_folder)
    for ii in range(num_folder - 1):
        each_folder = indices[each_folder_num * ii: each_folder_num * (ii + 1)]
        whole_folder.append(each_folder)
    each_folder = indices[each_folder_num * (num_folder - 1):]
    whole_folder.append(each_folder)
    assert len(whole_folder) == num_folder
    assert sum([len(each) for each in whole_folder if 1 == 1]) == whole_num

    ## split into train/eval
    train_eval_idxs = []
    for ii in range(num_folder):
        eval_idxs = whole_folder[ii]
        train_idxs = []
        for jj in range(num_folder):
            if jj != ii: train_idxs.extend(whole_folder[jj])
        train_eval_idxs.append([train_idxs, eval_idxs])

    ## gain train and eval loaders
    train_loaders = []
    eval_loaders = []
    for ii in range(len(train_eval_idxs)):
        train_idxs = train_eval_idxs[ii][0]
        eval_idxs = train_eval_idxs[ii][1]
        train_loader = DataLoader(train_dataset,
                                  batch_size=args.batch_size,
                                  sampler=torch.utils.data.SubsetRandomSampler(train_idxs),
                                  num_workers=args.num_workers,
                                  pin_memory=False)
        eval_loader = DataLoader(train_dataset,
                                 batch_size=args.batch_size,
                                 sampler=torch.utils.data.SubsetRandomSampler(eval_idxs),
                                 num_workers=args.num_workers,
                                 pin_memory=False)
        train_loaders.append(train_loader)
        eval_loaders.append(eval_loader)

    adim, tdim, vdim = train_dataset.get_featDim()
    return train_loaders, eval_loaders, adim, tdim, vdim


########################################################
##################### build model ######################
########################################################
class CELoss(nn.Module):

    def __init__(self):
        super(CELoss, self).__init__()
        self.loss = nn.NLLLoss(reduction='sum')

    def forward(self, pred, target):
        pred = F.log_softmax(pred, 1)  # [n_samples, n_classes]
        target = target.long()         # [n_samples]
        loss = self.loss(pred, target) / len(pred)
        return loss


class MSELoss(nn.Module):

    def __init__(self):
        super(MSELoss, self).__init__()
        self.loss = nn.MSELoss(reduction='sum')

    def forward(self, pred, target):
        pred = pred.view(-1, 1)
        target = target.view(-1, 1)
        loss = self.loss(pred, target) / len(pred)
        return loss


########################################################
########### main training/testing function #############
########################################################
def train_or_eval_model(args, model, reg_loss, cls_loss, dataloader, optimizer=None, train=False):

    vidnames = []
    val_preds, val_labels = [], []
    emo_probs, emo_labels = [], []
    embeddings = []

    assert not train or optimizer != None
    if train:
        model.train()
    else:
        model.eval()

    for data in dataloader:
        if train:
            optimizer.zero_grad()

        ## analyze dataloader
        audio_feat, text_feat, visual_feat = data[0], data[1], data[2]
        emos, vals = data[3].float(), data[4].float()
        vidnames += data[-1]
        multi_feat = torch.cat([audio_feat, text_feat, visual_feat], dim=1)

        ## add cuda
        emos = emos.cuda()
        vals = vals.cuda()
        audio_feat = audio_feat.cuda()
        text_feat = text_feat.cuda()
        visual_feat = visual_feat.cuda()
        multi_feat = multi_feat.cuda()

        ## feed-forward process
        features, emos_out, vals_out, interloss = model(audio_feat, text_feat, visual_feat)
        emo_probs.append(emos_out.data.cpu().numpy())
        val_preds.append(vals_out.data.cpu().numpy())
        emo_labels.append(emos.data.cpu().numpy())
        val_labels.append(vals.data.cpu().numpy())
        embeddings.append(features.data.cpu().numpy())

        ## optimize params
        if train:
            loss1 = cls_loss(emos_out, emos)
            loss2 = reg_loss(vals_out, vals)
            loss = loss1 + args.reg_weight * loss2 + interloss
            loss.backward()
            optimizer.step()

    ## evaluate on discrete labels
    emo_probs = np.concatenate(emo_probs)
    embeddings = np.concatenate(embeddings)
    emo_labels = np.concatenate(emo_labels)
    emo_preds = np.argmax(emo_probs, 1)
    emo_accuracy = accuracy_score(emo_labels, emo_preds)
    emo_fscore = f1_score(emo_labels, emo_preds, average='weighted')

    ## evaluate on dimensional labels
    val_preds = np.concatenate(val_preds)
    val_labels = np.concatenate(val_labels)
    val_mse = mean_squared_error(val_labels, val_preds)

    save_results = {}
    save_results['emo_probs'] = emo_probs
    save_results['val_preds'] = val_preds
    save_results['emo_labels'] = emo_labels
    save_results['val_labels'] = val_labels
    save_results['names'] = vidnames
    save_results['embeddings'] = embeddings
    return emo_fscore, val_mse, save_results


if __name__ == '__main__':
    parser = argparse.ArgumentParser()

    ## Params for input
    parser.add_argument('--dataset', type=str, default=None, help='dataset')
    parser.add_argument('--train_dataset', type=str, default=None, help='dataset')
    parser.add_argument('--audio_feature', type=str, default=None, help='audio feature name')
    parser.add_argument('--text_feature', type=str, default=None, help='text feature name')
    parser.add_argument('--video_feature', type=str, default=None, help='video feature name')
    parser.add_argument('--debug', action='store_true', default=False, help='whether use debug to limit samples')
    parser.add_argument('--save_root', type=str, default='./saved', help='save prediction results and models')
    parser.add_argument('--num_folder', type=int, default=5, help='folders for cross-validation')

    ## Params for model
    parser.add_argument('--layers', type=str, default='256,128', help='hidden size in model training')
    parser.add_argument('--n_classes', type=int, default=-1, help='number of classes [defined by args.label_path]')
    parser.add_argument('--num_workers', type=int, default=0, help='num workers of loading data')
    parser.add_argument('--model_type', type=str, default='attention', help='model type for training')

    ## Params for training
    parser.add_argument('--lr', type=float, default=1e-3, metavar='lr', help='set lr rate')
    parser.add_argument('--l2', type=float, default=0.00001, metavar='L2', help='L2 regularization weight')
    parser.add_argument('--batch_size', type=int, default=32, metavar='BS', help='batch size')
    parser.add_argument('--epochs', type=int, default=100, metavar='E', help='number of epochs')
    parser.add_argument('--dropout', type=float, default=0.3, metavar='dropout', help='dropout rate')
    parser.add_argument('--reg_weight', type=float, default=1.0, help='weight of the valence regression loss')
    parser.add_argument('--seed', type=int, default=100, help='make split manner is same with same seed')
    parser.add_argument('--gpu', type=str, default='0', help='index of gpu, or "auto"')
    args = parser.parse_args()

    args.n_classes = 6
    args.num_folder = 5
    args.test_sets = ['test1', 'test2', 'test3']
    args.train_dataset = args.train_dataset or args.dataset

    gpu_tools.set_visible_gpu(args.gpu)
    cuda = torch.cuda.is_available()
    torch.manual_seed(args.seed)
    if cuda:
        torch.cuda.manual_seed(args.seed)
    np.random.seed(args.seed)
    random.seed(args.seed)

    print(args)

    print(f'====== Reading Data =======')
    train_loaders, eval_loaders, adim, tdim, vdim = get_loaders(args, config)
    assert len(train_loaders) == args.num_folder, f'Error: folder number'
    assert len(eval_loaders) == args.num_folder, f'Error: folder number'

    print(f'====== Training and Evaluation =======')
    folder_save = []
    for ii in range(args.num_folder):
        print(f'>>>>> Cross-validation: training on the {ii + 1} folder >>>>>')
        train_loader = train_loaders[ii]
        eval_loader = eval_loaders[ii]
        start_time = time.time()
        name_time = time.time()

        print(f'Step1: build model (each folder has its own model)')
        if args.model_type == 'attention':
            model = Attention(audio_dim=adim, text_dim=tdim, video_dim=vdim,
                              output_dim1=args.n_classes, output_dim2=1,
                              layers=args.layers, dropout=args.dropout)
        else:
            raise ValueError(f'unknown model_type {args.model_type}')
        reg_loss = MSELoss()
        cls_loss = CELoss()
        model.cuda()
        reg_loss.cuda()
        cls_loss.cuda()
        optimizer = optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.l2)

        print(f'Step2: training (multiple epoches)')
        eval_metrics = []
        eval_fscores = []
        eval_valmses = []
        for epoch in range(args.epochs):
            store_values = {}

            ## training and validation
            train_fscore, train_valmse, train_results = train_or_eval_model(args, model, reg_loss, cls_loss, train_loader, optimizer=optimizer, train=True)
            eval_fscore, eval_valmse, eval_results = train_or_eval_model(args, model, reg_loss, cls_loss, eval_loader, optimizer=None, train=False)
            eval_metric = eval_fscore - eval_valmse * 0.25
            eval_metrics.append(eval_metric)
            eval_fscores.append(eval_fscore)
            eval_valmses.append(eval_valmse)
            store_values['eval_emoprobs'] = eval_results['emo_probs']
            store_values['eval_valpreds'] = eval_results['val_preds']
            store_values['eval_names'] = eval_results['names']
            print('epoch:%d; train_fscore:%.4f; train_valmse:%.4f; eval_fscore:%.4f; eval_valmse:%.4f' % (epoch + 1, train_fscore, train_valmse, eval_fscore, eval_valmse))

            if eval_metric >= max(eval_metrics):
                best_store = store_values
                torch.save(model.state_dict(), os.path.join(args.save_root, f'model_folder{ii + 1}.pth'))

        print(f'Step3: saving and testing on the {ii + 1} folder')
        best_index = np.argmax(np.array(eval_metrics))
        folder_save.append(best_store)
        best_fscore = eval_fscores[best_index]
        best_valmse = eval_valmses[best_index]
        end_time = time.time()
        print(f'>>>>> Finish: training on the {ii + 1} folder, best_fscore:{best_fscore:.4f}, best_valmse:{best_valmse:.4f}, duration: {end_time - start_time:.1f}s >>>>>')
        gpu_tools.report_memory(f' folder{ii + 1}')

    print(f'====== Gain predition on test data =======')
    eval_fscores = [np.max(item) for item in [eval_fscores]]
    print(f'cross-validation finished; per-folder results saved under {args.save_root}')
