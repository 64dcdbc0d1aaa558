import sys,os
sys.path.append(os.getcwd())
os.environ["CUDA_VISIBLE_DEVICES"] = "1"
from Process.process import *
import torch as th
from torch_scatter import scatter_mean
import torch.nn.functional as F
import numpy as np
from tools.earlystopping2class import EarlyStopping
from torch_geometric.data import DataLoader
from tqdm import tqdm
from Process.rand5fold import *
from tools.evaluate import *
from torch_geometric.nn import GCNConv
import copy


class TDrumorGCN(th.nn.Module):
    def __init__(self, in_feats, hid_feats, out_feats):
        super(TDrumorGCN, self).__init__()
        self.conv1 = GCNConv(in_feats, hid_feats)
        self.conv2 = GCNConv(hid_feats + in_feats, out_feats)

    def _root_extend(self, feats, data):
        rootindex = data.rootindex
        root_extend = th.zeros(len(data.batch), feats.size(1), device=feats.device)
        batch_size = max(data.batch) + 1
        for num_batch in range(batch_size):
            index = (th.eq(data.batch, num_batch))
            root_extend[index] = feats[rootindex[num_batch]]
        return root_extend

    def forward(self, data):
        x, edge_index = data.x, data.edge_index
        x1 = copy.copy(x.float())
        x = self.conv1(x, edge_index)
        x2 = copy.copy(x)
        x = th.cat((x, self._root_extend(x1, data)), 1)
        x = F.relu(x)
        x = F.dropout(x, training=self.training)
        x = self.conv2(x, edge_index)
        x = F.relu(x)
        x = th.cat((x, self._root_extend(x2, data)), 1)
        x = scatter_mean(x, data.batch, dim=0)
        return x


class BUrumorGCN(TDrumorGCN):
    def forward(self, data):
        x, edge_index = data.x, data.BU_edge_index
        x1 = copy.copy(x.float())
        x = self.conv1(x, edge_index)
        x2 = copy.copy(x)
        x = th.cat((x, self._root_extend(x1, data)), 1)
        x = F.relu(x)
        x = F.dropout(x, training=self.training)
        x = self.conv2(x, edge_index)
        x = F.relu(x)
        x = th.cat((x, self._root_extend(x2, data)), 1)
        return scatter_mean(x, data.batch, dim=0)


class Net(th.nn.Module):
    def __init__(self, in_feats, hid_feats, out_feats):
        super(Net, self).__init__()
        self.TDrumorGCN = TDrumorGCN(in_feats, hid_feats, out_feats)
        self.BUrumorGCN = BUrumorGCN(in_feats, hid_feats, out_feats)
        self.fc = th.nn.Linear((out_feats + hid_feats) * 2, 2)

    def forward(self, data):
        TD_x = self.TDrumorGCN(data)
        BU_x = self.BUrumorGCN(data)
        x = th.cat((BU_x, TD_x), 1)
        x = self.fc(x)
        x = F.log_softmax(x, dim=1)
        return x


def train_GCN(treeDic, x_test, x_train, TDdroprate, BUdroprate, lr, weight_decay, patience, n_epochs, batchsize,
              dataname, iter):
    model = Net(5000, 64, 64).cuda()
    BU_params = list(map(id, model.BUrumorGCN.conv1.parameters()))
    BU_params += list(map(id, model.BUrumorGCN.conv2.parameters()))
    base_params = filter(lambda p: id(p) not in BU_params, model.parameters())
    optimizer = th.optim.Adam([
        {'params': base_params},
        {'params': model.BUrumorGCN.conv1.parameters(), 'lr': lr / 5},
        {'params': model.BUrumorGCN.conv2.parameters(), 'lr': lr / 5}
    ], lr=lr, weight_decay=weight_decay)
    model.train()
    train_losses, val_losses, train_accs, val_accs = [], [], [], []
    early_stopping = EarlyStopping(patience=patience, verbose=True)
    for epoch in range(n_epochs):
        traindata_list, testdata_list = loadBiData(dataname, treeDic, x_train, x_test, TDdroprate, BUdroprate)
        train_loader = DataLoader(traindata_list, batch_size=batchsize, shuffle=False, num_workers=10)
        test_loader = DataLoader(testdata_list, batch_size=batchsize, shuffle=True, num_workers=10)
        avg_loss, avg_acc = [], []
        batch_idx = 0
        for Batch_data in tqdm(train_loader):
            Batch_data = Batch_data.cuda()
            out_labels = model(Batch_data)
            loss = F.nll_loss(out_labels, Batch_data.y)
            optimizer.zero_grad()
            loss.backward()
            avg_loss.append(loss.item())
            optimizer.step()
            _, pred = out_labels.max(dim=-1)
            correct = pred.eq(Batch_data.y).sum().item()
            train_acc = correct / len(Batch_data.y)
            avg_acc.append(train_acc)
            print("Iter {:03d} | Epoch {:05d} | Batch{:02d} | Train_Loss {:.4f}| Train_Accuracy {:.4f}".format(
                iter, epoch, batch_idx, loss.item(), train_acc))
            batch_idx = batch_idx + 1
        train_losses.append(np.mean(avg_loss))
        train_accs.append(np.mean(avg_acc))

        temp_val_losses, temp_val_accs = [], []
        temp_val_Acc_all, temp_val_Acc1, temp_val_Prec1, temp_val_Recll1, temp_val_F1, \
        temp_val_Acc2, temp_val_Prec2, temp_val_Recll2, temp_val_F2 = [], [], [], [], [], [], [], [], []
        model.eval()
        for Batch_data in tqdm(test_loader):
            Batch_data = Batch_data.to('cuda')
            val_out = model(Batch_data)
            val_loss = F.nll_loss(val_out, Batch_data.y)
            temp_val_losses.append(val_loss.item())
            _, val_pred = val_out.max(dim=1)
            correct = val_pred.eq(Batch_data.y).sum().item()
            val_acc = correct / len(Batch_data.y)
            Acc_all, Acc1, Prec1, Recll1, F1, Acc2, Prec2, Recll2, F2 = evaluationclass(val_pred, Batch_data.y)
            temp_val_Acc_all.append(Acc_all), temp_val_Acc1.append(Acc1), temp_val_Prec1.append(Prec1), \
            temp_val_Recll1.append(Recll1), temp_val_F1.append(F1), temp_val_Acc2.append(Acc2), \
            temp_val_Prec2.append(Prec2), temp_val_Recll2.append(Recll2), temp_val_F2.append(F2)
            temp_val_accs.append(val_acc)
        val_losses.append(np.mean(temp_val_losses))
        val_accs.append(np.mean(temp_val_accs))
        print("Epoch {:05d} | Val_Loss {:.4f}| Val_Accuracy {:.4f}".format(epoch, np.mean(temp_val_losses),
                                                                           np.mean(temp_val_accs)))
        res = ['acc:{:.4f}'.format(np.mean(temp_val_Acc_all)),
               'C1:{:.4f},{:.4f},{:.4f},{:.4f}'.format(np.mean(temp_val_Acc1), np.mean(temp_val_Prec1),
                                                       np.mean(temp_val_Recll1), np.mean(temp_val_F1)),
               'C2:{:.4f},{:.4f},{:.4f},{:.4f}'.format(np.mean(temp_val_Acc2), np.mean(temp_val_Prec2),
                                                       np.mean(temp_val_Recll2), np.mean(temp_val_F2))]
        print('results:', res)
        early_stopping(np.mean(temp_val_losses), np.mean(temp_val_Acc_all), np.mean(temp_val_Acc1),
                       np.mean(temp_val_Acc2), np.mean(temp_val_Prec1),
                       np.mean(temp_val_Prec2), np.mean(temp_val_Recll1), np.mean(temp_val_Recll2),
                       np.mean(temp_val_F1),
                       np.mean(temp_val_F2), model, 'BiGCN', "weibo")
        accs = np.mean(temp_val_Acc_all)
        acc1, acc2 = np.mean(temp_val_Acc1), np.mean(temp_val_Acc2)
        pre1, pre2 = np.mean(temp_val_Prec1), np.mean(temp_val_Prec2)
        rec1, rec2 = np.mean(temp_val_Recll1), np.mean(temp_val_Recll2)
        F1, F2 = np.mean(temp_val_F1), np.mean(temp_val_F2)
        if early_stopping.early_stop:
            print("Early stopping")
            accs = early_stopping.accs
            acc1, acc2 = early_stopping.acc1, early_stopping.acc2
            pre1, pre2 = early_stopping.pre1, early_stopping.pre2
            rec1, rec2 = early_stopping.rec1, early_stopping.rec2
            F1, F2 = early_stopping.F1, early_stopping.F2
            break
    th.cuda.empty_cache()
    return train_losses, val_losses, train_accs, val_accs, accs, acc1, pre1, rec1, F1, acc2, pre2, rec2, F2


lr = 0.0005
weight_decay = 1e-4
patience = 10
n_epochs = 200
batchsize = 16
tddroprate = 0
budroprate = 0
datasetname = "Weibo"
iterations = int(sys.argv[1])
model = "BiGCN"
test_accs, ACC1, ACC2, PRE1, PRE2, REC1, REC2, F1, F2 = [], [], [], [], [], [], [], [], []
for iter in range(iterations):
    fold0_x_test, fold0_x_train, fold1_x_test, fold1_x_train, fold2_x_test, fold2_x_train, fold3_x_test, \
    fold3_x_train, fold4_x_test, fold4_x_train = load5foldData(datasetname)
    treeDic = loadTree(datasetname)
    for x_test, x_train in [(fold0_x_test, fold0_x_train), (fold1_x_test, fold1_x_train),
                            (fold2_x_test, fold2_x_train), (fold3_x_test, fold3_x_train),
                            (fold4_x_test, fold4_x_train)]:
        _, _, _, _, accs, acc1, pre1, rec1, f1, acc2, pre2, rec2, f2 = train_GCN(
            treeDic, x_test, x_train, tddroprate, budroprate, lr, weight_decay, patience, n_epochs, batchsize,
            datasetname, iter)
        test_accs.append(accs)
        ACC1.append(acc1); ACC2.append(acc2); PRE1.append(pre1); PRE2.append(pre2)
        REC1.append(rec1); REC2.append(rec2); F1.append(f1); F2.append(f2)
print("weibo:|Total_Test_ Accuracy: {:.4f}|acc1: {:.4f}|acc2: {:.4f}|pre1: {:.4f}|pre2: {:.4f}"
      "|rec1: {:.4f}|rec2: {:.4f}|F1: {:.4f}|F2: {:.4f}".format(sum(test_accs) / len(test_accs),
                                                               sum(ACC1) / len(ACC1), sum(ACC2) / len(ACC2),
                                                               sum(PRE1) / len(PRE1), sum(PRE2) / len(PRE2),
                                                               sum(REC1) / len(REC1), sum(REC2) / len(REC2),
                                                               sum(F1) / len(F1), sum(F2) / len(F2)))
