import torch
import torch.nn as nn
from torch.autograd import Variable


class DKT(nn.Module):

    def __init__(self, input_dim, hidden_dim, layer_dim, output_dim):
        super(DKT, self).__init__()
        self.hidden_dim = hidden_dim
        self.layer_dim = layer_dim
        self.output_dim = output_dim
        self.rnn = nn.RNN(input_dim, hidden_dim, layer_dim, batch_first=True, nonlinearity='tanh')
        self.fc = nn.Linear(self.hidden_dim, self.output_dim)
        self.sig = nn.Sigmoid()

    def forward(self, x):
        h0 = Variable(torch.zeros(self.layer_dim, x.size(0), self.hidden_dim)).cuda()
        out, hn = self.rnn(x, h0)
        res = self.sig(self.fc(out))
        return res


class DKTLSTM(nn.Module):
    """LSTM variant used for the ASSISTments2015 runs in the paper table."""

    def __init__(self, input_dim, hidden_dim, layer_dim, output_dim, dropout=0.0):
        super(DKTLSTM, self).__init__()
        self.hidden_dim = hidden_dim
        self.layer_dim = layer_dim
        self.lstm = nn.LSTM(input_dim, hidden_dim, layer_dim, batch_first=True,
                            dropout=dropout if layer_dim > 1 else 0.0)
        self.fc = nn.Linear(hidden_dim, output_dim)
        self.sig = nn.Sigmoid()

    def forward(self, x):
        # hidden state initialised on the same device as the input batch
        h0 = torch.zeros(self.layer_dim, x.size(0), self.hidden_dim, device=x.device)
        c0 = torch.zeros(self.layer_dim, x.size(0), self.hidden_dim, device=x.device)
        out, _ = self.lstm(x, (h0, c0))
        return self.sig(self.fc(out))
