import numpy as np
import time
import collections
import datetime
import os
import sys

import torch
from torch import optim
from sklearn import metrics, preprocessing

sys.path.append('../global_module/')
import network
import train
from generate_pic import aa_and_each_accuracy, sampling, load_dataset, generate_png, generate_iter
from Utils import record, extract_samll_cubic

# SSRN re-implemented in PyTorch (the original is Keras); one card is enough.
device = torch.device('cuda:0')

# for Monte Carlo runs
seeds = [1220, 1221, 1222, 1223, 1224, 1225, 1226, 1227, 1228, 1229]
ensemble = 1

day = datetime.datetime.now()
day_str = day.strftime('%m_%d_%H_%M')

print('-----Importing Dataset-----')

Dataset = 'UP'
data_hsi, gt_hsi, TOTAL_SIZE, TRAIN_SIZE, VALIDATION_SPLIT = load_dataset(Dataset)
print(data_hsi.shape)
image_x, image_y, BAND = data_hsi.shape
data = data_hsi.reshape(np.prod(data_hsi.shape[:2]), np.prod(data_hsi.shape[2:]))
gt = gt_hsi.reshape(np.prod(gt_hsi.shape[:2]), )
CLASSES_NUM = max(gt)
print('The class numbers of the HSI data is:', CLASSES_NUM)

print('-----Importing Setting Parameters-----')
ITER = 10
PATCH_LENGTH = 3
lr, num_epochs, batch_size = 0.0003, 200, 16
loss = torch.nn.CrossEntropyLoss()

img_rows = 2 * PATCH_LENGTH + 1
img_cols = 2 * PATCH_LENGTH + 1
img_channels = data_hsi.shape[2]
INPUT_DIMENSION = data_hsi.shape[2]
ALL_SIZE = data_hsi.shape[0] * data_hsi.shape[1]
VAL_SIZE = int(TRAIN_SIZE)
TEST_SIZE = TOTAL_SIZE - TRAIN_SIZE

KAPPA = []
OA = []
AA = []
TRAINING_TIME = []
TESTING_TIME = []
ELEMENT_ACC = np.zeros((ITER, CLASSES_NUM))

data = preprocessing.scale(data)
data_ = data.reshape(data_hsi.shape[0], data_hsi.shape[1], data_hsi.shape[2])
whole_data = data_
padded_data = np.lib.pad(whole_data, ((PATCH_LENGTH, PATCH_LENGTH), (PATCH_LENGTH, PATCH_LENGTH), (0, 0)),
                         'constant', constant_values=0)

os.makedirs('./models', exist_ok=True)
os.makedirs('./records', exist_ok=True)

for index_iter in range(ITER):
    print('iter:', index_iter)
    net = network.SSRN_network(BAND, CLASSES_NUM)
    optimizer = optim.RMSprop(net.parameters(), lr=lr)
    np.random.seed(seeds[index_iter])
    torch.manual_seed(seeds[index_iter])
    train_indices, test_indices = sampling(VALIDATION_SPLIT, gt)
    _, total_indices = sampling(1, gt)

    TRAIN_SIZE = len(train_indices)
    print('Train size: ', TRAIN_SIZE)
    TEST_SIZE = TOTAL_SIZE - TRAIN_SIZE
    print('Test size: ', TEST_SIZE)
    VAL_SIZE = int(TRAIN_SIZE)
    print('Validation size: ', VAL_SIZE)

    print('-----Selecting Small Pieces from the Original Cube Data-----')
    train_iter, valida_iter, test_iter, all_iter = generate_iter(TRAIN_SIZE, train_indices, TEST_SIZE, test_indices, TOTAL_SIZE, total_indices, VAL_SIZE,
                                                                 whole_data, PATCH_LENGTH, padded_data, INPUT_DIMENSION, batch_size, gt)

    tic1 = time.time()
    train.train(net, train_iter, valida_iter, loss, optimizer, device, epochs=num_epochs, early_num=30)
    toc1 = time.time()

    best_path = './models/SSRN_UP_iter{}.pt'.format(index_iter)
    torch.save(net.state_dict(), best_path)
    # reload the weights we just wrote (same process, same card)
    net.load_state_dict(torch.load(best_path))

    pred_test = []
    tic2 = time.time()
    with torch.no_grad():
        net.eval()
        for X, y in test_iter:
            X = X.to(device)
            y_hat = net(X)
            pred_test.extend(np.array(y_hat.cpu().argmax(axis=1)))
    # kernels are asynchronous; wait for the card before reading the clock
    torch.cuda.synchronize()
    toc2 = time.time()
    collections.Counter(pred_test)
    gt_test = gt[test_indices] - 1

    overall_acc = metrics.accuracy_score(pred_test, gt_test[:-VAL_SIZE])
    confusion_matrix = metrics.confusion_matrix(pred_test, gt_test[:-VAL_SIZE])
    each_acc, average_acc = aa_and_each_accuracy(confusion_matrix)
    kappa = metrics.cohen_kappa_score(pred_test, gt_test[:-VAL_SIZE])

    print('OA: {:.4f}  AA: {:.4f}  Kappa: {:.4f}'.format(overall_acc, average_acc, kappa))
    KAPPA.append(kappa)
    OA.append(overall_acc)
    AA.append(average_acc)
    TRAINING_TIME.append(toc1 - tic1)
    TESTING_TIME.append(toc2 - tic2)
    ELEMENT_ACC[index_iter, :] = each_acc

    # free the cached blocks before the next Monte Carlo run
    del net, optimizer
    torch.cuda.empty_cache()

print("--------SSRN Training Finished-----------")
record.record_output(OA, AA, KAPPA, ELEMENT_ACC, TRAINING_TIME, TESTING_TIME,
                     'records/SSRN_' + day_str + '_' + Dataset + '_split' + str(VALIDATION_SPLIT) + '_lr' + str(lr) + '.txt')

net = network.SSRN_network(BAND, CLASSES_NUM).to(device)
net.load_state_dict(torch.load('./models/SSRN_UP_iter{}.pt'.format(int(np.argmax(OA)))))
generate_png(all_iter, net, gt_hsi, Dataset, device, total_indices)
