import torch
import torch.nn as nn
from torch.autograd import Variable
import torch.optim as optim
import numpy as np
from sklearn.preprocessing import MinMaxScaler
import sys
import copy


class CLASSIFIER:
    # train_Y is interger
    def __init__(self, model, _train_X, _train_Y, _test_seen_X, _test_seen_Y, _test_novel_X, _test_novel_Y,
                 seenclasses, novelclasses, _nclass, device, _lr=0.001, _beta1=0.5, _nepoch=20, _batch_size=100,
                 generalized=True):

        self.device = device

        self.train_X = _train_X.to(self.device)
        self.train_Y = _train_Y.to(self.device)

        self.test_seen_feature = _test_seen_X.to(self.device)
        self.test_seen_label = _test_seen_Y.to(self.device)
        self.test_novel_feature = _test_novel_X.to(self.device)
        self.test_novel_label = _test_novel_Y.to(self.device)

        self.seenclasses = seenclasses.to(self.device)
        self.novelclasses = novelclasses.to(self.device)

        self.batch_size = _batch_size
        self.nepoch = _nepoch
        self.nclass = _nclass
        self.input_dim = _train_X.size(1)
        self.average_loss = 0

        self.model = model.to(self.device)
        self.criterion = nn.NLLLoss()

        self.input = torch.FloatTensor(_batch_size, self.input_dim).to(self.device)
        self.label = torch.LongTensor(_batch_size).to(self.device)
        self.lr = _lr
        self.beta1 = _beta1
        # setup optimizer
        self.optimizer = optim.Adam(self.model.parameters(), lr=_lr, betas=(_beta1, 0.999))
        self.criterion.to(self.device)

        self.index_in_epoch = 0
        self.epochs_completed = 0
        self.ntrain = self.train_X.size()[0]
        self.loss = 0
        self.current_epoch = 0

        self.acc_novel, self.acc_seen, self.H, self.acc = 0, 0, 0, 0

        if generalized:
            self.acc_seen, self.acc_novel, self.H = self.fit()
        else:
            self.acc = self.fit_zsl()

    def fit_zsl(self):
        best_acc = 0
        mean_loss = 0
        last_loss_epoch = 1e8
        for epoch in range(self.nepoch):
            for i in range(0, self.ntrain, self.batch_size):
                self.model.zero_grad()
                batch_input, batch_label = self.next_batch(self.batch_size)
                self.input.copy_(batch_input)
                self.label.copy_(batch_label)

                inputv = Variable(self.input)  # fix for pytorch 0.4
                labelv = Variable(self.label)
                output = self.model(inputv)
                loss = self.criterion(output, labelv)
                mean_loss += loss.item()
                loss.backward()
                self.optimizer.step()

            acc = self.val(self.test_novel_feature, self.test_novel_label, self.novelclasses)
            if acc > best_acc:
                best_acc = acc
            self.loss = loss.item()
        return best_acc

    def fit(self):
        best_H = 0
        best_seen = 0
        best_unseen = 0
        for epoch in range(self.nepoch):
            for i in range(0, self.ntrain, self.batch_size):
                self.model.zero_grad()
                batch_input, batch_label = self.next_batch(self.batch_size)
                self.input.copy_(batch_input)
                self.label.copy_(batch_label)
                inputv = Variable(self.input)
                labelv = Variable(self.label)
                output = self.model(inputv)
                loss = self.criterion(output, labelv)
                loss.backward()
                self.optimizer.step()

            acc_seen = 0
            acc_unseen = 0

            acc_seen = self.val_gzsl(self.test_seen_feature, self.test_seen_label, self.seenclasses)
            acc_unseen = self.val_gzsl(self.test_novel_feature, self.test_novel_label, self.novelclasses)

            if (acc_seen + acc_unseen) == 0:
                print('a bug')
                H = 0
            else:
                H = 2 * acc_seen * acc_unseen / (acc_seen + acc_unseen)
            if H > best_H:
                best_seen = acc_seen
                best_unseen = acc_unseen
                best_H = H
            self.average_loss = loss.item()
        return best_seen, best_unseen, best_H

    def next_batch(self, batch_size):
        start = self.index_in_epoch
        # shuffle the data at the first epoch
        if self.epochs_completed == 0 and start == 0:
            perm = torch.randperm(self.ntrain)
            self.train_X = self.train_X[perm]
            self.train_Y = self.train_Y[perm]
        # the last batch
        if start + batch_size > self.ntrain:
            self.epochs_completed += 1
            rest_num_examples = self.ntrain - start
            if rest_num_examples > 0:
                X_rest_part = self.train_X[start:self.ntrain]
                Y_rest_part = self.train_Y[start:self.ntrain]
            # shuffle the data
            perm = torch.randperm(self.ntrain)
            self.train_X = self.train_X[perm]
            self.train_Y = self.train_Y[perm]
            # start next epoch
            start = 0
            self.index_in_epoch = batch_size - rest_num_examples
            end = self.index_in_epoch
            X_new_part = self.train_X[start:end]
            Y_new_part = self.train_Y[start:end]
            if rest_num_examples > 0:
                return torch.cat((X_rest_part, X_new_part), 0), torch.cat((Y_rest_part, Y_new_part), 0)
            else:
                return X_new_part, Y_new_part
        else:
            self.index_in_epoch += batch_size
            end = self.index_in_epoch
            # from index start to index end-1
            return self.train_X[start:end], self.train_Y[start:end]

    def val_gzsl(self, test_X, test_label, target_classes):
        start = 0
        ntest = test_X.size()[0]
        predicted_label = torch.LongTensor(test_label.size())
        for i in range(0, ntest, self.batch_size):
            end = min(ntest, start + self.batch_size)
            with torch.no_grad():
                output = self.model(test_X[start:end].to(self.device))
            _, predicted_label[start:end] = torch.max(output.data, 1)
            start = end

        acc = self.compute_per_class_acc_gzsl(test_label, predicted_label, target_classes)
        return acc

    def compute_per_class_acc_gzsl(self, test_label, predicted_label, target_classes):

        per_class_accuracies = torch.zeros(target_classes.size()[0]).float().to(self.device).detach()

        predicted_label = predicted_label.to(self.device)

        for i in range(target_classes.size()[0]):

            is_class = test_label == target_classes[i]

            per_class_accuracies[i] = torch.div((predicted_label[is_class] == test_label[is_class]).sum().float(),
                                                is_class.sum().float())
        return per_class_accuracies.mean()

    # test_label is integer
    def val(self, test_X, test_label, target_classes):
        start = 0
        ntest = test_X.size()[0]
        predicted_label = torch.LongTensor(test_label.size())
        for i in range(0, ntest, self.batch_size):

            end = min(ntest, start + self.batch_size)

            with torch.no_grad():
                output = self.model(test_X[start:end].to(self.device))

            _, predicted_label[start:end] = torch.max(output.data, 1)
            start = end

        acc = self.compute_per_class_acc(test_label, predicted_label, target_classes.size(0))
        return acc

    def compute_per_class_acc(self, test_label, predicted_label, nclass):

        per_class_accuracies = torch.zeros(nclass).float().to(self.device).detach()

        target_classes = torch.arange(0, nclass, out=torch.LongTensor()).to(self.device)  # changed from 200 to nclass

        predicted_label = predicted_label.to(self.device)

        for i in range(nclass):

            is_class = test_label == target_classes[i]

            per_class_accuracies[i] = torch.div((predicted_label[is_class] == test_label[is_class]).sum().float(),
                                                is_class.sum().float())

        return per_class_accuracies.mean()
