import torch
import torch.nn as nn
from torch.autograd import Variable


class ADSHLoss(nn.Module):
    def __init__(self, gamma, code_length, num_train):
        super(ADSHLoss, self).__init__()
        self.gamma = gamma
        self.code_length = code_length
        self.num_train = num_train

    def forward(self, u, V, S, V_omega):
        batch_size = u.size(0)
        V = Variable(torch.from_numpy(V).type(torch.FloatTensor).cuda())
        V_omega = Variable(torch.from_numpy(V_omega).type(torch.FloatTensor).cuda())
        S = Variable(S.cuda())
        square_loss = (u.mm(V.t())-self.code_length * S) ** 2
        quantization_loss = self.gamma * (V_omega - u) ** 2
        loss = (square_loss.sum() + quantization_loss.sum()) / (self.num_train * batch_size)
        return loss


class ADSHLossSym(nn.Module):
    """Symmetric variant used for the ablation in Table 4: the database codes V are not
    given as a numpy array but kept as a tensor on whatever device the network runs on."""

    def __init__(self, gamma, code_length, num_train):
        super(ADSHLossSym, self).__init__()
        self.gamma = gamma
        self.code_length = code_length
        self.num_train = num_train

    def forward(self, u, V, S, V_omega):
        batch_size = u.size(0)
        V = V.to(u.device, dtype=u.dtype)
        V_omega = V_omega.to(u.device, dtype=u.dtype)
        S = S.to(u.device)
        square_loss = (u.mm(V.t()) - self.code_length * S) ** 2
        quantization_loss = self.gamma * (V_omega - u) ** 2
        return (square_loss.sum() + quantization_loss.sum()) / (self.num_train * batch_size)
