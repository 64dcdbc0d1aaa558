'''
Created on 2019-06-10
@author: chsong
Usage: python run.py  (reads the paths in Constant/Constants.py)
'''
import sys
sys.path.append('../')
import torch
import torch.optim as optim
from KnowledgeTracing.model.RNNModel import DKT
from KnowledgeTracing.data.dataloader import getTrainLoader, getTestLoader, getLoader
from KnowledgeTracing.Constant import Constants as C
from KnowledgeTracing.evaluation import eval

print('Dataset: ' + C.DATASET + ', Learning Rate: ' + str(C.LR) + '\n')

torch.cuda.set_device(C.GPU)

model = DKT(C.INPUT, C.HIDDEN, C.LAYERS, C.OUTPUT).cuda()
optimizer_adam = optim.Adam(model.parameters(), lr=C.LR)
optimizer_adgd = optim.Adagrad(model.parameters(), lr=C.LR)

lossFunc = eval.lossFunc().cuda()

trainLoaders, testLoaders = getLoader(C.DATASET)

for epoch in range(C.EPOCH):
    print('epoch: ' + str(epoch))
    model, optimizer = eval.train(trainLoaders, model, optimizer_adam, lossFunc)
    eval.test(testLoaders, model)

torch.save(model.state_dict(), C.Dpath + '/dkt_' + C.DATASET.replace('/', '_') + '.pt')
print('peak GPU memory: %.1f MB' % (torch.cuda.max_memory_allocated() / 1024 ** 2))
