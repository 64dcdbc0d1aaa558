import os
import time

import numpy as np
import torch
import torch.nn as nn
from torch import optim
from torch.utils.data import DataLoader
from sklearn.metrics import confusion_matrix, f1_score, accuracy_score

from dataloaders import data_set
from models.model_builder import model_builder
from utils import EarlyStopping, adjust_learning_rate_class, MixUpLoss, mixup_data


class Exp(object):
    def __init__(self, args):
        self.args = args
        self.device = self._acquire_device()
        self.optimizer_dict = {'Adam': optim.Adam}
        self.criterion_dict = {'MSE': nn.MSELoss, 'CrossEntropy': nn.CrossEntropyLoss}
        self.model = self.build_model().to(self.device)
        print('Done!')
        self.model_size = np.sum([para.numel() for para in self.model.parameters() if para.requires_grad])
        print('Parameter :', self.model_size)

    def _acquire_device(self):
        if self.args.use_gpu:
            os.environ['CUDA_VISIBLE_DEVICES'] = str(self.args.gpu) if not self.args.use_multi_gpu else self.args.devices
            device = torch.device('cuda:{}'.format(self.args.gpu))
            print('Use GPU: cuda:{}'.format(self.args.gpu))
        else:
            device = torch.device('cpu')
            print('Use CPU')
        return device

    def build_model(self):
        model = model_builder(self.args)
        print('Build the model {}'.format(self.args.model_type))
        if self.args.use_multi_gpu and self.args.use_gpu:
            model = nn.DataParallel(model, device_ids=self.args.device_ids)
        return model.double()

    def _select_optimizer(self):
        if self.args.optimizer not in self.optimizer_dict.keys():
            raise NotImplementedError
        return self.optimizer_dict[self.args.optimizer](self.model.parameters(), lr=self.args.learning_rate)

    def _select_criterion(self):
        if self.args.criterion not in self.criterion_dict.keys():
            raise NotImplementedError
        return self.criterion_dict[self.args.criterion]()

    def _get_data(self, data, flag='train'):
        if flag == 'train':
            shuffle_flag = True
        else:
            shuffle_flag = False
        data = data_set(self.args, data, flag)
        data_loader = DataLoader(data,
                                 batch_size=self.args.batch_size,
                                 shuffle=shuffle_flag,
                                 num_workers=0,
                                 drop_last=False)
        return data_loader

    def train(self, data):
        save_path = os.path.join(self.args.to_save_path, 'logs', self.args.data_name, self.args.model_type)
        os.makedirs(save_path, exist_ok=True)
        score_log_file_name = os.path.join(save_path, 'score.txt')

        num_of_cv = data.num_of_cv
        for iter_ in range(num_of_cv):
            # fix the seed per fold so that folds are independent of each other
            torch.manual_seed(self.args.seed + iter_)
            np.random.seed(self.args.seed + iter_)

            print('================ {} th fold ================'.format(iter_))
            data.update_train_val_test_keys()
            cv_path = os.path.join(save_path, 'cv_{}'.format(iter_))
            os.makedirs(cv_path, exist_ok=True)

            train_loader = self._get_data(data, flag='train')
            val_loader = self._get_data(data, flag='vali')
            test_loader = self._get_data(data, flag='test')

            train_steps = len(train_loader)
            early_stopping = EarlyStopping(patience=self.args.early_stop_patience, verbose=True)
            learning_rate_adapter = adjust_learning_rate_class(self.args, True)

            # every fold starts from a freshly initialised model
            self.model = self.build_model().to(self.device)
            model_optim = self._select_optimizer()
            criterion = self._select_criterion()

            for epoch in range(self.args.train_epochs):
                train_loss = []
                self.model.train()
                epoch_time = time.time()

                for i, (batch_x1, batch_x2, batch_y) in enumerate(train_loader):
                    batch_x1 = batch_x1.double().to(self.device)
                    batch_y = batch_y.long().to(self.device)

                    if np.random.uniform(0, 1) < self.args.mixup_probability:
                        batch_x1, batch_y = mixup_data(batch_x1, batch_y, self.args.mixup_alpha)
                        outputs = self.model(batch_x1)
                        loss = MixUpLoss(criterion)(outputs, batch_y)
                    else:
                        outputs = self.model(batch_x1)
                        loss = criterion(outputs, batch_y)

                    train_loss.append(loss.item())
                    model_optim.zero_grad()
                    loss.backward()
                    model_optim.step()

                print('Fold: {} Epoch: {} cost time: {:.2f}s'.format(iter_, epoch + 1, time.time() - epoch_time))
                train_loss = np.average(train_loss)
                vali_loss, vali_acc, vali_f_w, vali_f_macro, vali_f_micro = self.validation(self.model, val_loader,
                                                                                             criterion)
                print('VALI: Epoch: {}, Steps: {} | Train Loss: {:.7f} Vali Loss: {:.7f} Vali Acc: {:.7f} '
                      'Vali weighted F1: {:.7f} Vali macro F1 {:.7f}'.format(epoch + 1, train_steps, train_loss,
                                                                             vali_loss, vali_acc, vali_f_w,
                                                                             vali_f_macro))

                early_stopping(vali_loss, self.model, cv_path, vali_f_macro, vali_f_w, None)
                if early_stopping.early_stop:
                    print('Early stopping')
                    break
                learning_rate_adapter(model_optim, vali_loss)

            # rename the best checkpoint of this fold and evaluate it on the test split
            os.rename(os.path.join(cv_path, 'best_vali.pth'), os.path.join(cv_path, 'final_best_vali.pth'))
            print('Loading the best validation model!')
            self.model.load_state_dict(torch.load(os.path.join(cv_path, 'final_best_vali.pth')))
            test_loss, test_acc, test_f_w, test_f_macro, test_f_micro = self.validation(self.model, test_loader,
                                                                                       criterion, iter_ + 1)
            print('Final Test Performance : Test Accuracy: {:.7f} Test weighted F1: {:.7f} '
                  'Test macro F1 {:.7f}'.format(test_acc, test_f_w, test_f_macro))

            with open(score_log_file_name, 'a') as score_log:
                score_log.write('cv_iter = {}, test_acc = {:.5f}, test_f_w = {:.5f}, test_f_macro = {:.5f}\n'
                                .format(iter_, test_acc, test_f_w, test_f_macro))

    def validation(self, model, data_loader, criterion, index_of_cv=None, selected_index=None):
        model.eval()
        total_loss = []
        preds = []
        trues = []
        with torch.no_grad():
            for i, (batch_x1, batch_x2, batch_y) in enumerate(data_loader):
                batch_x = batch_x1.double().to(self.device)
                batch_y = batch_y.long().to(self.device)

                outputs = model(batch_x)
                pred = outputs.detach()
                true = batch_y.detach()
                loss = criterion(pred, true)
                total_loss.append(loss.cpu())

                preds.extend(list(np.argmax(outputs.detach().cpu().numpy(), axis=1)))
                trues.extend(list(batch_y.detach().cpu().numpy()))

        total_loss = np.average(total_loss)
        acc = accuracy_score(preds, trues)
        if index_of_cv:
            cf_matrix = confusion_matrix(trues, preds, normalize='true')
            np.save(os.path.join(self.args.to_save_path, 'cf_matrix_{}.npy'.format(index_of_cv)), cf_matrix)
        f_w = f1_score(trues, preds, average='weighted')
        f_macro = f1_score(trues, preds, average='macro')
        f_micro = f1_score(trues, preds, average='micro')
        model.train()
        return total_loss, acc, f_w, f_macro, f_micro

    def measure_latency(self, repetitions=300):
        """Rough single-window inference latency (used for the embedded deployment table of the paper)."""
        dummy = torch.randn(1, 1, self.args.input_length, self.args.c_in, dtype=torch.float64).to(self.device)
        self.model.eval()
        timings = np.zeros((repetitions, 1))
        starter = torch.cuda.Event(enable_timing=True)
        ender = torch.cuda.Event(enable_timing=True)
        with torch.no_grad():
            for _ in range(10):
                _ = self.model(dummy)
            for rep in range(repetitions):
                starter.record()
                _ = self.model(dummy)
                ender.record()
                torch.cuda.synchronize()
                timings[rep] = starter.elapsed_time(ender)
        print('mean latency {:.3f} ms (std {:.3f})'.format(np.mean(timings), np.std(timings)))
        return np.mean(timings)
