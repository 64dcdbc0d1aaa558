import sys
sys.path.append('../')
import tqdm
import torch
import torch.nn as nn
from sklearn import metrics
from KnowledgeTracing.Constant import Constants as C


def performance(ground_truth, prediction):
    fpr, tpr, thresholds = metrics.roc_curve(ground_truth.detach().cpu().numpy(), prediction.detach().cpu().numpy())
    auc = metrics.auc(fpr, tpr)

    f1 = metrics.f1_score(ground_truth.detach().cpu().numpy(), torch.round(prediction).detach().cpu().numpy())
    recall = metrics.recall_score(ground_truth.detach().cpu().numpy(), torch.round(prediction).detach().cpu().numpy())
    precision = metrics.precision_score(ground_truth.detach().cpu().numpy(), torch.round(prediction).detach().cpu().numpy())

    print('auc:' + str(auc) + ' f1: ' + str(f1) + ' recall: ' + str(recall) + ' precision: ' + str(precision) + '\n')
    return auc


class lossFunc(nn.Module):
    def __init__(self):
        super(lossFunc, self).__init__()

    def forward(self, pred, batch):
        loss = torch.Tensor([0.0]).cuda()
        for student in range(pred.shape[0]):
            delta = batch[student][:, 0:C.NUM_OF_QUESTIONS] + batch[student][:, C.NUM_OF_QUESTIONS:]
            temp = pred[student][:C.MAX_STEP - 1].mm(delta[1:].t())
            index = torch.LongTensor([[i for i in range(C.MAX_STEP - 1)]]).cuda()
            p = temp.gather(0, index)[0]
            a = (((batch[student][:, 0:C.NUM_OF_QUESTIONS] - batch[student][:, C.NUM_OF_QUESTIONS:]).sum(1) + 1) // 2)[1:]
            for i in range(len(p)):
                if p[i] > 0:
                    loss = loss - (a[i] * torch.log(p[i]) + (1 - a[i]) * torch.log(1 - p[i]))
        return loss


def train_epoch(model, trainLoader, optimizer, loss_func):
    for batch in tqdm.tqdm(trainLoader, desc='Training:    ', mininterval=2):
        batch = batch.cuda()
        pred = model(batch)
        loss = loss_func(pred, batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return model, optimizer


def test_epoch(model, testLoader):
    gold_epoch = torch.Tensor([]).cuda()
    pred_epoch = torch.Tensor([]).cuda()
    for batch in tqdm.tqdm(testLoader, desc='Testing:    ', mininterval=2):
        batch = batch.to(torch.device('cuda'))
        pred = model(batch)
        for student in range(pred.shape[0]):
            temp_pred = torch.Tensor([]).cuda()
            temp_gold = torch.Tensor([]).cuda()
            delta = batch[student][:, 0:C.NUM_OF_QUESTIONS] + batch[student][:, C.NUM_OF_QUESTIONS:]
            temp = pred[student][:C.MAX_STEP - 1].mm(delta[1:].t())
            index = torch.LongTensor([list(range(C.MAX_STEP - 1))]).cuda()
            p = temp.gather(0, index)[0]
            a = (((batch[student][:, 0:C.NUM_OF_QUESTIONS] - batch[student][:, C.NUM_OF_QUESTIONS:]).sum(1) + 1) // 2)[1:]
            for i in range(len(p)):
                if p[i] > 0:
                    temp_pred = torch.cat([temp_pred, p[i:i + 1]])
                    temp_gold = torch.cat([temp_gold, a[i:i + 1]])
            pred_epoch = torch.cat([pred_epoch, temp_pred])
            gold_epoch = torch.cat([gold_epoch, temp_gold])
    return pred_epoch, gold_epoch


def train(trainLoaders, model, optimizer, lossFunc):
    for i in range(len(trainLoaders)):
        model, optimizer = train_epoch(model, trainLoaders[i], optimizer, lossFunc)
    return model, optimizer


def test(testLoaders, model):
    ground_truth = torch.Tensor([]).cuda()
    prediction = torch.Tensor([]).cuda()
    for i in range(len(testLoaders)):
        pred_epoch, gold_epoch = test_epoch(model, testLoaders[i])
        prediction = torch.cat([prediction, pred_epoch])
        ground_truth = torch.cat([ground_truth, gold_epoch])
    return performance(ground_truth, prediction)
