import os
import math
import time
import torch
import random
import numpy as np
import torch.nn as nn
import torch.optim as optim
import torch.nn.functional as F
import torchvision.utils as tvls

from torch.autograd import Variable


def load_data(PATH_target, PATH_evaluation, target_model, evaluation_model):
    target_model.load_state_dict(torch.load(PATH_target))
    evaluation_model.load_state_dict(torch.load(PATH_evaluation))

    target_model = target_model.cuda()
    evaluation_model = evaluation_model.cuda()

    return target_model, evaluation_model


def save_tensor_images(images, filename, nrow=None, normalize=True):
    if not nrow:
        tvls.save_image(images, filename, normalize=normalize, padding=0)
    else:
        tvls.save_image(images, filename, normalize=normalize, nrow=nrow, padding=0)


class ccs_inversion(object):
    '''
    Model inversion is a kind of attack that reconstructs the class representatives
    (Fredrikson et al., "Model Inversion Attacks that Exploit Confidence Information
    and Basic Countermeasures", CCS 2015).

    Args:
        model: target model
        img_size: shape of one input image, e.g. (1, 1, 32, 32)
        class_num: number of classes
        ...
    '''

    def __init__(self, target_model, input_size, output_size, target_label, alpha, beta, gamma, learning_rate, device):
        self.target_model = target_model
        self.input_size = input_size
        self.output_size = output_size
        self.target_label = target_label
        self.alpha = alpha
        self.beta = beta
        self.gamma = gamma
        self.learning_rate = learning_rate
        self.device = device

        self.target_model.eval()

    def invert_cost(self, input_x):
        return 1 - F.softmax(self.target_model(input_x), dim=1)[0][self.target_label]

    def model_invert(self):
        current_x = []
        cost_x = []

        current_x.append(Variable(torch.zeros(self.input_size).to(self.device), requires_grad=True))

        for i in range(self.alpha):
            cost_x.append(self.invert_cost(current_x[i]).to(self.device))
            cost_x[i].backward()
            current_x.append((current_x[i] - self.learning_rate * current_x[i].grad).detach().requires_grad_(True))

            if cost_x[i] <= self.gamma:
                print('Target cost value reached at iteration %d' % i)
                return current_x[i]
            if i > self.beta and cost_x[i] >= max(cost_x[self.beta:i]):
                print('No improvement over the last %d iterations' % self.beta)
                return current_x[i]

        return current_x[-1]

    def reverse_mse(self, data_loader):
        data_list = [None for _ in range(self.output_size)]
        for inputs, targets in data_loader:
            for input, target in zip(inputs, targets):
                if data_list[target.item()] is None:
                    data_list[target.item()] = input.unsqueeze(0)

        mse_list = []
        for label in range(self.output_size):
            self.target_label = label
            reversed_data = self.model_invert()
            mse = F.mse_loss(reversed_data.cpu(), data_list[label]).item()
            mse_list.append(mse)
            print("label %d: mse %.4f" % (label, mse))

        print("Average MSE: %.4f" % np.mean(mse_list))
        return np.mean(mse_list)


def prepare_GAN(data_type, discriminator, generator, PATH_D, PATH_G):
    discriminator.load_state_dict(torch.load(PATH_D))
    generator.load_state_dict(torch.load(PATH_G))

    discriminator = discriminator.cuda()
    generator = generator.cuda()

    if data_type.lower() == 'utkface':
        iden = torch.zeros(10)
        for i in range(10):
            iden[i] = i
    elif data_type.lower() in ('stl10', 'fmnist', 'cifar10'):
        iden = torch.zeros(10)
        for i in range(10):
            iden[i] = i
    else:
        raise ValueError("Unknown dataset %s" % data_type)

    return discriminator, generator, iden


def revealer_inversion(G, D, T, E, iden, device, lr=2e-2, momentum=0.9, lamda=100, iter_times=1500, clip_range=1):
    """The Secret Revealer (Zhang et al., CVPR 2020): optimise the GAN latent code
    so that the generated image is classified as the target identity while staying
    realistic according to the discriminator."""
    iden = iden.view(-1).long().to(device)
    criterion = nn.CrossEntropyLoss().to(device)
    bs = iden.shape[0]

    G.eval()
    D.eval()
    T.eval()
    E.eval()

    max_score = torch.zeros(bs)
    max_iden = torch.zeros(bs)
    max_prob = torch.zeros(bs, 10)
    z_hat = torch.zeros(bs, 100, 1, 1)

    flag = torch.zeros(bs)

    for random_seed in range(5):
        tf = time.time()

        torch.manual_seed(random_seed)
        torch.cuda.manual_seed(random_seed)
        np.random.seed(random_seed)
        random.seed(random_seed)

        z = torch.randn(bs, 100, 1, 1).to(device).float()
        z.requires_grad = True
        v = torch.zeros(bs, 100, 1, 1).to(device).float()

        for i in range(iter_times):
            fake = G(z)
            label = D(fake)
            out = T(fake)

            if z.grad is not None:
                z.grad.data.zero_()

            Prior_Loss = - label.mean()
            Iden_Loss = criterion(out, iden)
            Total_Loss = Prior_Loss + lamda * Iden_Loss

            Total_Loss.backward()

            v_prev = v.clone()
            gradient = z.grad.data
            v = momentum * v - lr * gradient
            z = z + (- momentum * v_prev + (1 + momentum) * v)
            z = torch.clamp(z.detach(), -clip_range, clip_range).float()
            z.requires_grad = True

            Prior_Loss_val = Prior_Loss.item()
            Iden_Loss_val = Iden_Loss.item()

            if (i+1) % 300 == 0:
                fake_img = G(z.detach())
                eval_prob = E(fake_img)
                eval_iden = torch.argmax(eval_prob, dim=1).view(-1)
                acc = iden.eq(eval_iden.long()).sum().item() * 1.0 / bs
                print("Iteration:{}\tPrior Loss:{:.2f}\tIden Loss:{:.2f}\tAttack Acc:{:.2f}".format(i+1, Prior_Loss_val, Iden_Loss_val, acc))

        fake = G(z)
        score = T(fake)
        eval_prob = E(fake)
        eval_iden = torch.argmax(eval_prob, dim=1).view(-1)

        cnt = 0
        for i in range(bs):
            gt = iden[i].item()
            if score[i, gt].item() > max_score[i].item():
                max_score[i] = score[i, gt]
                max_iden[i] = eval_iden[i]
                max_prob[i] = eval_prob[i]
                z_hat[i, :, :, :] = z[i, :, :, :]
            if eval_iden[i].item() == gt:
                cnt += 1
                flag[i] = 1

        interval = time.time() - tf
        print("Time:{:.2f}\tAcc:{:.2f}\t".format(interval, cnt * 1.0 / bs))

    correct = 0
    for i in range(bs):
        gt = iden[i].item()
        if max_iden[i].item() == gt:
            correct += 1

    acc = correct * 1.0 / bs
    print("Acc:{:.2f}".format(acc))
    return acc
