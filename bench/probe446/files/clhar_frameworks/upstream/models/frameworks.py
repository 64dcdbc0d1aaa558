import copy

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from .backbones import Transformer, Seq_Transformer


class SimCLR(nn.Module):
    def __init__(self, backbone, dim=128):
        super(SimCLR, self).__init__()
        self.encoder = backbone
        self.projector = Projector(model='SimCLR', bb_dim=self.encoder.out_dim, prev_dim=self.encoder.out_dim,
                                   dim=dim)

    def forward(self, x1, x2):
        if self.encoder.__class__.__name__ in ['AE', 'CNN_AE']:
            x1_encoded, z1 = self.encoder(x1)
            x2_encoded, z2 = self.encoder(x2)
        else:
            _, z1 = self.encoder(x1)
            _, z2 = self.encoder(x2)

        if len(z1.shape) == 3:
            z1 = z1.reshape(z1.shape[0], -1)
            z2 = z2.reshape(z2.shape[0], -1)

        z1 = self.projector(z1)
        z2 = self.projector(z2)

        if self.encoder.__class__.__name__ in ['AE', 'CNN_AE']:
            return x1_encoded, x2_encoded, z1, z2
        return z1, z2


class SupCon(SimCLR):
    """Supervised contrastive variant: same architecture as SimCLR, different loss (see loss.SupConLoss)."""
    pass


class NNCLR(nn.Module):
    def __init__(self, backbone, dim=128, pred_dim=64):
        super(NNCLR, self).__init__()
        self.encoder = backbone
        self.projector = Projector(model='NNCLR', bb_dim=self.encoder.out_dim, prev_dim=self.encoder.out_dim,
                                   dim=dim)
        self.predictor = Predictor(model='NNCLR', dim=dim, pred_dim=pred_dim)

    def forward(self, x1, x2):
        _, z1 = self.encoder(x1)
        _, z2 = self.encoder(x2)
        if len(z1.shape) == 3:
            z1 = z1.reshape(z1.shape[0], -1)
            z2 = z2.reshape(z2.shape[0], -1)
        z1 = self.projector(z1)
        z2 = self.projector(z2)
        p1 = self.predictor(z1)
        p2 = self.predictor(z2)
        return p1, p2, z1.detach(), z2.detach()


class NNMemoryBankModule(nn.Module):
    """Nearest-neighbour support set of NNCLR (a FIFO queue of projections)."""

    def __init__(self, size=2 ** 16):
        super(NNMemoryBankModule, self).__init__()
        self.size = size
        self.bank = None
        self.bank_ptr = None

    def _init_memory_bank(self, dim, device):
        self.bank = F.normalize(torch.randn(dim, self.size, device=device), dim=0)
        self.bank_ptr = torch.zeros(1, dtype=torch.long, device=device)

    @torch.no_grad()
    def _dequeue_and_enqueue(self, batch):
        batch_size = batch.shape[0]
        ptr = int(self.bank_ptr)
        if ptr + batch_size >= self.size:
            self.bank[:, ptr:] = batch[:self.size - ptr].T.detach()
            self.bank_ptr[0] = 0
        else:
            self.bank[:, ptr:ptr + batch_size] = batch.T.detach()
            self.bank_ptr[0] = ptr + batch_size

    def forward(self, output, update=False):
        if self.bank is None:
            self._init_memory_bank(output.shape[1], output.device)
        bank = self.bank.clone().detach()
        output_normed = F.normalize(output, dim=1)
        bank_normed = F.normalize(bank, dim=0)
        similarity = torch.einsum('nd,dm->nm', output_normed, bank_normed)
        index_nearest_neighbours = torch.argmax(similarity, dim=1)
        nearest_neighbours = torch.index_select(bank.T, dim=0, index=index_nearest_neighbours)
        if update:
            self._dequeue_and_enqueue(output)
        return nearest_neighbours


class EMA():
    def __init__(self, beta):
        super().__init__()
        self.beta = beta

    def update_average(self, old, new):
        if old is None:
            return new
        return old * self.beta + (1 - self.beta) * new


def update_moving_average(ema_updater, ma_model, current_model):
    for current_params, ma_params in zip(current_model.parameters(), ma_model.parameters()):
        old_weight, up_weight = ma_params.data, current_params.data
        ma_params.data = ema_updater.update_average(old_weight, up_weight)


def set_requires_grad(model, val):
    for p in model.parameters():
        p.requires_grad = val


class NetWrapper(nn.Module):
    def __init__(self, net, projection_size, projection_hidden_size, DEVICE, layer=-2):
        super().__init__()
        self.net = net
        self.layer = layer
        self.DEVICE = DEVICE
        self.projector = None
        self.projection_size = projection_size
        self.projection_hidden_size = projection_hidden_size
        self.hidden = {}
        self.hook_registered = False

    def _get_projector(self, hidden):
        if self.projector is None:
            _, dim = hidden.shape
            self.projector = MLP(dim, self.projection_size, self.projection_hidden_size).to(hidden)
        return self.projector

    def get_representation(self, x):
        if self.layer == -1:
            return self.net(x)
        _, rep = self.net(x)
        return rep

    def forward(self, x):
        representation = self.get_representation(x)
        if len(representation.shape) == 3:
            representation = representation.reshape(representation.shape[0], -1)
        projector = self._get_projector(representation)
        projection = projector(representation)
        return projection


class BYOL(nn.Module):
    def __init__(self, DEVICE, backbone, window_size=30, n_channels=77, hidden_layer=-1, projection_size=64,
                 projection_hidden_size=256, moving_average=0.99, use_momentum=True):
        super().__init__()
        net = backbone
        self.online_encoder = NetWrapper(net, projection_size, projection_hidden_size, DEVICE=DEVICE,
                                         layer=hidden_layer)
        self.use_momentum = use_momentum
        self.target_encoder = None
        self.target_ema_updater = EMA(moving_average)
        self.online_predictor = MLP(projection_size, projection_size, projection_hidden_size)
        self.to(DEVICE)

        # send a mock sample to initialise the lazily created projector
        self.forward(torch.randn(2, window_size, n_channels, device=DEVICE),
                     torch.randn(2, window_size, n_channels, device=DEVICE))

    def _get_target_encoder(self):
        if self.target_encoder is None:
            target_encoder = copy.deepcopy(self.online_encoder)
            set_requires_grad(target_encoder, False)
            self.target_encoder = target_encoder
        return self.target_encoder

    def reset_moving_average(self):
        del self.target_encoder
        self.target_encoder = None

    def update_moving_average(self):
        assert self.use_momentum, 'you do not need to update the moving average, since you have turned off momentum'
        assert self.target_encoder is not None, 'target encoder has not been created yet'
        update_moving_average(self.target_ema_updater, self.target_encoder, self.online_encoder)

    def forward(self, x1, x2):
        online_proj_one = self.online_encoder(x1)
        online_proj_two = self.online_encoder(x2)
        online_pred_one = self.online_predictor(online_proj_one)
        online_pred_two = self.online_predictor(online_proj_two)
        with torch.no_grad():
            target_encoder = self._get_target_encoder() if self.use_momentum else self.online_encoder
            target_proj_one = target_encoder(x1)
            target_proj_two = target_encoder(x2)
        return online_pred_one, online_pred_two, target_proj_one.detach(), target_proj_two.detach()


SimSiam = BYOL


class TC(nn.Module):
    """Temporal contrasting module of TS-TCC (Eldele et al., IJCAI 2021)."""

    def __init__(self, bb_dim, device, tc_hidden=100, temp_unit='tsfm'):
        super(TC, self).__init__()
        self.num_channels = bb_dim
        self.timestep = 6
        self.Wk = nn.ModuleList([nn.Linear(tc_hidden, self.num_channels) for _ in range(self.timestep)])
        self.lsoftmax = nn.LogSoftmax(dim=1)
        self.device = device
        self.temp_unit = temp_unit
        if self.temp_unit == 'tsfm':
            self.seq_transformer = Seq_Transformer(patch_size=self.num_channels, dim=tc_hidden, depth=4, heads=4,
                                                   mlp_dim=64)
        elif self.temp_unit == 'lstm':
            self.lstm = nn.LSTM(input_size=self.num_channels, hidden_size=tc_hidden, num_layers=1,
                                batch_first=True, bidirectional=False)
        elif self.temp_unit == 'gru':
            self.gru = nn.GRU(input_size=self.num_channels, hidden_size=tc_hidden, num_layers=1,
                              batch_first=True, bidirectional=False)

    def forward(self, z_aug1, z_aug2):
        seq_len = z_aug1.shape[1]
        batch = z_aug1.shape[0]

        t_samples = torch.randint(seq_len - self.timestep, size=(1,)).long().to(self.device)
        nce = 0
        encode_samples = torch.empty((self.timestep, batch, self.num_channels)).float().to(self.device)

        for i in np.arange(1, self.timestep + 1):
            encode_samples[i - 1] = z_aug2[:, t_samples + i, :].view(batch, self.num_channels)
        forward_seq = z_aug1[:, :t_samples + 1, :]

        if self.temp_unit == 'tsfm':
            c_t = self.seq_transformer(forward_seq)
        elif self.temp_unit == 'lstm':
            _, (c_t, _) = self.lstm(forward_seq)
            c_t = torch.squeeze(c_t)
        elif self.temp_unit == 'gru':
            _, c_t = self.gru(forward_seq)
            c_t = torch.squeeze(c_t)

        pred = torch.empty((self.timestep, batch, self.num_channels)).float().to(self.device)
        for i in np.arange(0, self.timestep):
            linear = self.Wk[i]
            pred[i] = linear(c_t)
        for i in np.arange(0, self.timestep):
            total = torch.mm(encode_samples[i], torch.transpose(pred[i], 0, 1))
            nce += torch.sum(torch.diag(self.lsoftmax(total)))
        nce /= -1. * batch * self.timestep
        return nce, c_t


class TSTCC(nn.Module):
    def __init__(self, backbone, DEVICE, temp_unit='tsfm', tc_hidden=100):
        super(TSTCC, self).__init__()
        self.encoder = backbone
        self.bb_dim = self.encoder.out_channels
        self.TC = TC(bb_dim=self.bb_dim, device=DEVICE, tc_hidden=tc_hidden, temp_unit=temp_unit).to(DEVICE)
        self.projector = Projector(model='TS-TCC', bb_dim=self.bb_dim, prev_dim=None, dim=tc_hidden)

    def forward(self, x1, x2):
        _, z1 = self.encoder(x1)
        _, z2 = self.encoder(x2)
        nce1, c_t1 = self.TC(z1, z2)
        nce2, c_t2 = self.TC(z2, z1)
        p1 = self.projector(c_t1)
        p2 = self.projector(c_t2)
        return nce1, nce2, p1, p2


class TPN(nn.Module):
    """
    Transformation Prediction Network (Saeed et al., IMWUT 2019): one binary head per signal
    transformation predicts whether that transformation was applied to the input.
    """

    def __init__(self, backbone, n_transforms=8, hidden=256):
        super(TPN, self).__init__()
        self.encoder = backbone
        self.heads = nn.ModuleList([
            nn.Sequential(nn.Linear(self.encoder.out_dim, hidden), nn.ReLU(inplace=True), nn.Linear(hidden, 1))
            for _ in range(n_transforms)
        ])

    def forward(self, x):
        feat, _ = self.encoder(x)
        if len(feat.shape) == 3:
            feat = feat.reshape(feat.shape[0], -1)
        return torch.cat([head(feat) for head in self.heads], dim=1)


class CPC(nn.Module):
    def __init__(self, backbone, DEVICE, n_steps=12, hidden=256):
        super(CPC, self).__init__()
        self.encoder = backbone
        self.DEVICE = DEVICE
        self.n_steps = n_steps
        self.gru = nn.GRU(self.encoder.out_channels, hidden, batch_first=True)
        self.Wk = nn.ModuleList([nn.Linear(hidden, self.encoder.out_channels) for _ in range(n_steps)])
        self.lsoftmax = nn.LogSoftmax(dim=1)

    def forward(self, x):
        _, z = self.encoder(x)
        batch, seq_len, _ = z.shape
        t = torch.randint(seq_len - self.n_steps, size=(1,)).item()
        c, _ = self.gru(z[:, :t + 1, :])
        c_t = c[:, -1, :]
        nce = 0
        for k in range(self.n_steps):
            pred = self.Wk[k](c_t)
            total = torch.mm(z[:, t + k + 1, :], pred.T)
            nce += torch.sum(torch.diag(self.lsoftmax(total)))
        return nce / (-1. * batch * self.n_steps)


class Projector(nn.Module):
    def __init__(self, model, bb_dim, prev_dim, dim):
        super(Projector, self).__init__()
        if model == 'SimCLR':
            self.projector = nn.Sequential(nn.Linear(bb_dim, prev_dim),
                                           nn.ReLU(inplace=True),
                                           nn.Linear(prev_dim, dim))
        elif model == 'NNCLR':
            self.projector = nn.Sequential(nn.Linear(bb_dim, prev_dim, bias=False),
                                           nn.BatchNorm1d(prev_dim),
                                           nn.ReLU(),
                                           nn.Linear(prev_dim, prev_dim, bias=False),
                                           nn.BatchNorm1d(prev_dim),
                                           nn.ReLU(),
                                           nn.Linear(prev_dim, dim, bias=False),
                                           nn.BatchNorm1d(dim))
        elif model == 'TS-TCC':
            self.projector = nn.Sequential(nn.Linear(dim, bb_dim // 2),
                                           nn.BatchNorm1d(bb_dim // 2),
                                           nn.ReLU(inplace=True),
                                           nn.Linear(bb_dim // 2, bb_dim // 4))
        else:
            raise NotImplementedError

    def forward(self, x):
        return self.projector(x)


class Predictor(nn.Module):
    def __init__(self, model, dim, pred_dim):
        super(Predictor, self).__init__()
        if model == 'NNCLR':
            self.predictor = nn.Sequential(nn.Linear(dim, pred_dim),
                                           nn.BatchNorm1d(pred_dim),
                                           nn.ReLU(inplace=True),
                                           nn.Linear(pred_dim, dim))
        else:
            raise NotImplementedError

    def forward(self, x):
        return self.predictor(x)


class MLP(nn.Module):
    def __init__(self, dim, projection_size, hidden_size=4096):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(dim, hidden_size),
            nn.BatchNorm1d(hidden_size),
            nn.ReLU(inplace=True),
            nn.Linear(hidden_size, projection_size)
        )

    def forward(self, x):
        return self.net(x)
