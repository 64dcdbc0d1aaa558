# ResNet model for time series classification (Wang et al. 2017), PyTorch port of dl-4-tsc/classifiers/resnet.py
# when tuning start with learning rate->mini_batch_size ->
# momentum-> #hidden_units -> # learning_rate_decay -> # activation
import time
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable

from utils.utils import save_logs
from utils.utils import calculate_metrics
from utils.utils import save_test_duration

use_cuda = torch.cuda.is_available()
FloatTensor = torch.cuda.FloatTensor if use_cuda else torch.FloatTensor
LongTensor = torch.cuda.LongTensor if use_cuda else torch.LongTensor


class ResidualBlock(nn.Module):
    def __init__(self, in_channels, n_feature_maps):
        super(ResidualBlock, self).__init__()
        self.conv_x = nn.Conv1d(in_channels, n_feature_maps, kernel_size=8, padding='same')
        self.bn_x = nn.BatchNorm1d(n_feature_maps)
        self.conv_y = nn.Conv1d(n_feature_maps, n_feature_maps, kernel_size=5, padding='same')
        self.bn_y = nn.BatchNorm1d(n_feature_maps)
        self.conv_z = nn.Conv1d(n_feature_maps, n_feature_maps, kernel_size=3, padding='same')
        self.bn_z = nn.BatchNorm1d(n_feature_maps)
        # expand channels for the sum if necessary
        self.expand = in_channels != n_feature_maps
        if self.expand:
            self.shortcut = nn.Sequential(nn.Conv1d(in_channels, n_feature_maps, kernel_size=1, padding='same'),
                                          nn.BatchNorm1d(n_feature_maps))
        else:
            self.shortcut = nn.BatchNorm1d(n_feature_maps)

    def forward(self, x):
        out = F.relu(self.bn_x(self.conv_x(x)))
        out = F.relu(self.bn_y(self.conv_y(out)))
        out = self.bn_z(self.conv_z(out))
        out = out + self.shortcut(x)
        return F.relu(out)


class ResNetModule(nn.Module):
    def __init__(self, input_channels, nb_classes, n_feature_maps=64):
        super(ResNetModule, self).__init__()
        self.block_1 = ResidualBlock(input_channels, n_feature_maps)
        self.block_2 = ResidualBlock(n_feature_maps, n_feature_maps * 2)
        self.block_3 = ResidualBlock(n_feature_maps * 2, n_feature_maps * 2)
        self.gap = nn.AdaptiveAvgPool1d(1)
        self.fc = nn.Linear(n_feature_maps * 2, nb_classes)

    def forward(self, x):
        x = self.block_1(x)
        x = self.block_2(x)
        x = self.block_3(x)
        x = self.gap(x).squeeze(-1)
        return self.fc(x)


class Classifier_RESNET:

    def __init__(self, output_directory, input_shape, nb_classes, verbose=False, build=True, load_weights=False):
        self.output_directory = output_directory
        self.verbose = verbose
        if build == True:
            # keras input_shape is (length, channels)
            self.model = self.build_model(input_shape, nb_classes)
            if (verbose == True):
                print(self.model)
            if load_weights == True:
                self.model.load_state_dict(torch.load(self.output_directory
                                                      .replace('resnet_augment', 'resnet')
                                                      .replace('TSC_itr_augment_x_10', 'TSC_itr_10')
                                                      + '/model_init.pth'))
            else:
                torch.save(self.model.state_dict(), self.output_directory + 'model_init.pth')
        return

    def build_model(self, input_shape, nb_classes):
        n_feature_maps = 64
        model = ResNetModule(input_shape[1], nb_classes, n_feature_maps)
        if use_cuda:
            model = model.cuda()
        self.optimizer = torch.optim.Adam(model.parameters())
        self.scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(self.optimizer, mode='min', factor=0.5,
                                                                    patience=50, min_lr=0.0001)
        self.loss_fn = nn.CrossEntropyLoss()
        self.file_path = self.output_directory + 'best_model.pth'
        return model

    def _to_tensor(self, x, y=None):
        # (n, length, channels) -> (n, channels, length)
        x = Variable(torch.from_numpy(np.transpose(x, (0, 2, 1))).type(FloatTensor))
        if y is None:
            return x
        y = Variable(torch.from_numpy(y).type(LongTensor))
        return x, y

    def fit(self, x_train, y_train, x_val, y_val, y_true):
        if not torch.cuda.is_available():
            print('error')
            exit()
        # x_val and y_val are only used to monitor the test loss and NOT for training
        batch_size = 64
        nb_epochs = 1500

        mini_batch_size = int(min(x_train.shape[0] / 10, batch_size))

        start_time = time.time()

        y_train_idx = np.argmax(y_train, axis=1)
        y_val_idx = np.argmax(y_val, axis=1)
        best_loss = np.inf
        hist = {'loss': [], 'accuracy': [], 'val_loss': [], 'val_accuracy': [], 'lr': []}
        n = x_train.shape[0]
        for epoch in range(nb_epochs):
            self.model.train()
            perm = np.random.permutation(n)
            epoch_loss, correct = 0.0, 0
            for i in range(0, n, mini_batch_size):
                idx = perm[i:i + mini_batch_size]
                xb, yb = self._to_tensor(x_train[idx], y_train_idx[idx])
                self.optimizer.zero_grad()
                out = self.model(xb)
                loss = self.loss_fn(out, yb)
                loss.backward()
                self.optimizer.step()
                epoch_loss += loss.item() * len(idx)
                correct += (out.argmax(1) == yb).sum().item()
            epoch_loss /= n
            self.scheduler.step(epoch_loss)
            val_loss, val_acc = self._evaluate(x_val, y_val_idx)
            hist['loss'].append(epoch_loss)
            hist['accuracy'].append(correct / n)
            hist['val_loss'].append(val_loss)
            hist['val_accuracy'].append(val_acc)
            hist['lr'].append(self.optimizer.param_groups[0]['lr'])
            # ModelCheckpoint(monitor='loss', save_best_only=True)
            if epoch_loss < best_loss:
                best_loss = epoch_loss
                torch.save(self.model.state_dict(), self.file_path)
            if self.verbose and epoch % 50 == 0:
                print(f'epoch {epoch}: loss={epoch_loss:.4f} val_loss={val_loss:.4f} val_acc={val_acc:.4f}')

        duration = time.time() - start_time

        torch.save(self.model.state_dict(), self.output_directory + 'last_model.pth')

        y_pred = self.predict(x_val, y_true, x_train, y_train, y_val, return_df_metrics=False)

        # save predictions
        np.save(self.output_directory + 'y_pred.npy', y_pred)

        # convert the predicted from binary to integer
        y_pred = np.argmax(y_pred, axis=1)

        df_metrics = save_logs(self.output_directory, hist, y_pred, y_true, duration)

        torch.cuda.empty_cache()

        return df_metrics

    def _evaluate(self, x, y_idx, batch_size=256):
        self.model.eval()
        total_loss, correct = 0.0, 0
        with torch.no_grad():
            for i in range(0, x.shape[0], batch_size):
                xb, yb = self._to_tensor(x[i:i + batch_size], y_idx[i:i + batch_size])
                out = self.model(xb)
                total_loss += self.loss_fn(out, yb).item() * xb.size(0)
                correct += (out.argmax(1) == yb).sum().item()
        return total_loss / x.shape[0], correct / x.shape[0]

    def predict(self, x_test, y_true, x_train, y_train, y_test, return_df_metrics=True):
        start_time = time.time()
        model_path = self.output_directory + 'best_model.pth'
        model = self.build_model((x_test.shape[1], x_test.shape[2]), y_train.shape[1])
        model.load_state_dict(torch.load(model_path, map_location=lambda storage, loc: storage.cuda(0)))
        model.eval()
        outs = []
        with torch.no_grad():
            for i in range(0, x_test.shape[0], 256):
                xb = self._to_tensor(x_test[i:i + 256])
                outs.append(F.softmax(model(xb), dim=1).data.cpu().numpy())
        y_pred = np.concatenate(outs, axis=0)
        if return_df_metrics:
            y_pred = np.argmax(y_pred, axis=1)
            df_metrics = calculate_metrics(y_true, y_pred, 0.0)
            return df_metrics
        else:
            test_duration = time.time() - start_time
            save_test_duration(self.output_directory + 'test_duration.csv', test_duration)
            return y_pred
