# -*- coding: utf-8 -*-
"""
Created on Sat Sep 19 20:55:56 2015

@author: liangshiyu
"""

from __future__ import print_function
import torch
from torch.autograd import Variable
import torch.nn as nn
import torch.nn.functional as F
import numpy as np
import torch.optim as optim
import torchvision
import torchvision.transforms as transforms
import numpy as np
import time
from scipy import misc

# CIFAR-10/100 channel std used by the pretrained DenseNet-BC / WRN-28-10
# (the perturbation has to be divided by it, see eq. (2) of the paper)
STD = (63.0 / 255.0, 62.1 / 255.0, 66.7 / 255.0)
N_SKIP = 1000
N_TEST = 10000


def _softmax_np(logits):
    logits = logits - np.max(logits)
    return np.exp(logits) / np.sum(np.exp(logits))


def _perturb(inputs, outputs, criterion, CUDA_DEVICE, noiseMagnitude1, temper):
    """Temperature-scaled input pre-processing (one step of FGSM towards the
    predicted class)."""
    nnOutputs = outputs.data.cpu().numpy()[0]
    maxIndexTemp = np.argmax(nnOutputs)
    # Using temperature scaling
    outputs = outputs / temper
    # Calculating the perturbation we need to add, that is,
    # the sign of gradient of cross entropy loss w.r.t. input
    labels = Variable(torch.LongTensor([maxIndexTemp]).cuda(CUDA_DEVICE))
    loss = criterion(outputs, labels)
    loss.backward()

    # Normalizing the gradient to binary in {0, 1}
    gradient = torch.ge(inputs.grad.data, 0)
    gradient = (gradient.float() - 0.5) * 2
    # Normalizing the gradient to the same space of image
    gradient[0][0] = (gradient[0][0]) / STD[0]
    gradient[0][1] = (gradient[0][1]) / STD[1]
    gradient[0][2] = (gradient[0][2]) / STD[2]
    # Adding small perturbations to images
    tempInputs = torch.add(inputs.data, gradient, alpha=-noiseMagnitude1)
    return tempInputs


def testData(net1, criterion, CUDA_DEVICE, testloader10, testloader, nnName,
             dataName, noiseMagnitude1, temper):
    t0 = time.time()
    f1 = open("./softmax_scores/confidence_Base_In.txt", 'w')
    f2 = open("./softmax_scores/confidence_Base_Out.txt", 'w')
    g1 = open("./softmax_scores/confidence_Our_In.txt", 'w')
    g2 = open("./softmax_scores/confidence_Our_Out.txt", 'w')
    N = N_TEST
    if dataName == "iSUN":
        N = 8925
    print("Processing in-distribution images")
    ########################################In-distribution###########################################
    for j, data in enumerate(testloader10):
        if j < N_SKIP:
            continue
        images, _ = data

        inputs = Variable(images.cuda(CUDA_DEVICE), requires_grad=True)
        outputs = net1(inputs)

        # Calculating the confidence of the output, no perturbation added here, no temperature scaling used
        nnOutputs = _softmax_np(outputs.data.cpu().numpy()[0])
        f1.write("{}, {}, {}\n".format(temper, noiseMagnitude1, np.max(nnOutputs)))

        tempInputs = _perturb(inputs, outputs, criterion, CUDA_DEVICE,
                              noiseMagnitude1, temper)
        outputs = net1(Variable(tempInputs))
        outputs = outputs / temper
        # Calculating the confidence after adding perturbations
        nnOutputs = _softmax_np(outputs.data.cpu().numpy()[0])
        g1.write("{}, {}, {}\n".format(temper, noiseMagnitude1, np.max(nnOutputs)))
        if j % 100 == 99:
            print("{:4}/{:4} images processed, {:.1f} seconds used.".format(
                j + 1 - N_SKIP, N - N_SKIP, time.time() - t0))
            t0 = time.time()

        if j == N - 1:
            break

    t0 = time.time()
    print("Processing out-of-distribution images")
    ###################################Out-of-Distributions#####################################
    for j, data in enumerate(testloader):
        if j < N_SKIP:
            continue
        images, _ = data

        inputs = Variable(images.cuda(CUDA_DEVICE), requires_grad = True)
        outputs = net1(inputs)

        # Calculating the confidence of the output, no perturbation added here
        nnOutputs = _softmax_np(outputs.data.cpu().numpy()[0])
        f2.write("{}, {}, {}\n".format(temper, noiseMagnitude1, np.max(nnOutputs)))

        tempInputs = _perturb(inputs, outputs, criterion, CUDA_DEVICE,
                              noiseMagnitude1, temper)
        outputs = net1(Variable(tempInputs))
        outputs = outputs / temper
        # Calculating the confidence after adding perturbations
        nnOutputs = _softmax_np(outputs.data.cpu().numpy()[0])
        g2.write("{}, {}, {}\n".format(temper, noiseMagnitude1, np.max(nnOutputs)))
        if j % 100 == 99:
            print("{:4}/{:4} images processed, {:.1f} seconds used.".format(
                j + 1 - N_SKIP, N - N_SKIP, time.time() - t0))
            t0 = time.time()

        if j == N - 1:
            break

    for f in (f1, f2, g1, g2):
        f.close()


def testGaussian(net1, criterion, CUDA_DEVICE, testloader10, testloader,
                 nnName, dataName, noiseMagnitude1, temper):
    t0 = time.time()
    f1 = open("./softmax_scores/confidence_Base_In.txt", 'w')
    f2 = open("./softmax_scores/confidence_Base_Out.txt", 'w')
    g1 = open("./softmax_scores/confidence_Our_In.txt", 'w')
    g2 = open("./softmax_scores/confidence_Our_Out.txt", 'w')
    ########################################In-Distribution###############################################
    N = N_TEST
    print("Processing in-distribution images")
    for j, data in enumerate(testloader10):
        if j < N_SKIP:
            continue

        images, _ = data

        inputs = Variable(images.cuda(CUDA_DEVICE), requires_grad=True)  # in-dist (Gaussian run)
        outputs = net1(inputs)
        nnOutputs = _softmax_np(outputs.data.cpu().numpy()[0])
        f1.write("{}, {}, {}\n".format(temper, noiseMagnitude1, np.max(nnOutputs)))

        tempInputs = _perturb(inputs, outputs, criterion, CUDA_DEVICE,
                              noiseMagnitude1, temper)
        outputs = net1(Variable(tempInputs))
        outputs = outputs / temper
        nnOutputs = _softmax_np(outputs.data.cpu().numpy()[0])
        g1.write("{}, {}, {}\n".format(temper, noiseMagnitude1, np.max(nnOutputs)))
        if j % 100 == 99:
            print("{:4}/{:4}  images processed, {:.1f} seconds used.".format(
                j + 1 - N_SKIP, N - N_SKIP, time.time() - t0))
            t0 = time.time()

    ########################################Out-of-Distribution######################################
    print("Processing out-of-distribution images")
    for j, data in enumerate(testloader):
        if j < N_SKIP:
            continue

        images = torch.randn(1, 3, 32, 32) + 0.5
        images = torch.clamp(images, 0, 1)
        images[0][0] = (images[0][0] - 125.3 / 255) / STD[0]
        images[0][1] = (images[0][1] - 123.0 / 255) / STD[1]
        images[0][2] = (images[0][2] - 113.9 / 255) / STD[2]

        inputs = Variable(images.cuda(CUDA_DEVICE), requires_grad=True)  # gaussian noise
        outputs = net1(inputs)
        nnOutputs = _softmax_np(outputs.data.cpu().numpy()[0])
        f2.write("{}, {}, {}\n".format(temper, noiseMagnitude1, np.max(nnOutputs)))

        tempInputs = _perturb(inputs, outputs, criterion, CUDA_DEVICE,
                              noiseMagnitude1, temper)
        outputs = net1(Variable(tempInputs))
        outputs = outputs / temper
        nnOutputs = _softmax_np(outputs.data.cpu().numpy()[0])
        g2.write("{}, {}, {}\n".format(temper, noiseMagnitude1, np.max(nnOutputs)))

        if j % 100 == 99:
            print("{:4}/{:4} images processed, {:.1f} seconds used.".format(
                j + 1 - N_SKIP, N - N_SKIP, time.time() - t0))
            t0 = time.time()

        if j == N - 1:
            break

    for f in (f1, f2, g1, g2):
        f.close()


def testUni(net1, criterion, CUDA_DEVICE, testloader10, testloader, nnName,
            dataName, noiseMagnitude1, temper):
    t0 = time.time()
    f1 = open("./softmax_scores/confidence_Base_In.txt", 'w')
    f2 = open("./softmax_scores/confidence_Base_Out.txt", 'w')
    g1 = open("./softmax_scores/confidence_Our_In.txt", 'w')
    g2 = open("./softmax_scores/confidence_Our_Out.txt", 'w')
    ########################################In-Distribution###############################################
    N = N_TEST
    print("Processing in-distribution images")
    for j, data in enumerate(testloader10):
        if j < N_SKIP:
            continue

        images, _ = data

        inputs = Variable(images.cuda(CUDA_DEVICE), requires_grad=True)  # in-dist (uniform run)
        outputs = net1(inputs)
        nnOutputs = _softmax_np(outputs.data.cpu().numpy()[0])
        f1.write("{}, {}, {}\n".format(temper, noiseMagnitude1, np.max(nnOutputs)))

        tempInputs = _perturb(inputs, outputs, criterion, CUDA_DEVICE,
                              noiseMagnitude1, temper)
        outputs = net1(Variable(tempInputs))
        outputs = outputs / temper
        nnOutputs = _softmax_np(outputs.data.cpu().numpy()[0])
        g1.write("{}, {}, {}\n".format(temper, noiseMagnitude1, np.max(nnOutputs)))
        if j % 100 == 99:
            print("{:4}/{:4}  images processed, {:.1f} seconds used.".format(
                j + 1 - N_SKIP, N - N_SKIP, time.time() - t0))
            t0 = time.time()

    ########################################Out-of-Distribution######################################
    print("Processing out-of-distribution images")
    for j, data in enumerate(testloader):
        if j < N_SKIP:
            continue

        # uniform noise generated directly on the card
        images = torch.cuda.FloatTensor(1, 3, 32, 32).uniform_(0, 1)
        images[0][0] = (images[0][0] - 125.3 / 255) / STD[0]
        images[0][1] = (images[0][1] - 123.0 / 255) / STD[1]
        images[0][2] = (images[0][2] - 113.9 / 255) / STD[2]

        inputs = Variable(images, requires_grad=True)
        outputs = net1(inputs)
        nnOutputs = _softmax_np(outputs.data.cpu().numpy()[0])
        f2.write("{}, {}, {}\n".format(temper, noiseMagnitude1, np.max(nnOutputs)))

        tempInputs = _perturb(inputs, outputs, criterion, CUDA_DEVICE,
                              noiseMagnitude1, temper)
        outputs = net1(Variable(tempInputs))
        outputs = outputs / temper
        nnOutputs = _softmax_np(outputs.data.cpu().numpy()[0])
        g2.write("{}, {}, {}\n".format(temper, noiseMagnitude1, np.max(nnOutputs)))

        if j % 100 == 99:
            print("{:4}/{:4} images processed, {:.1f} seconds used.".format(
                j + 1 - N_SKIP, N - N_SKIP, time.time() - t0))
            t0 = time.time()

        if j == N - 1:
            break

    for f in (f1, f2, g1, g2):
        f.close()
