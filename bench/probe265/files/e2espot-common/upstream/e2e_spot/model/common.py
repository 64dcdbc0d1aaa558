import abc
import torch
import torch.nn as nn


class ABCModel:

    @abc.abstractmethod
    def get_optimizer(self, opt_args):
        raise NotImplementedError()

    @abc.abstractmethod
    def epoch(self, loader, **kwargs):
        raise NotImplementedError()

    @abc.abstractmethod
    def predict(self, seq):
        raise NotImplementedError()

    @abc.abstractmethod
    def state_dict(self):
        raise NotImplementedError()

    @abc.abstractmethod
    def load(self, state_dict):
        raise NotImplementedError()


class BaseRGBModel(ABCModel):

    def get_optimizer(self, opt_args):
        return torch.optim.AdamW(self._get_params(), **opt_args), \
            torch.cuda.amp.GradScaler() if self.device == 'cuda' else None

    """ Assume there is a self._model """

    def _get_params(self):
        return list(self._model.parameters())

    def state_dict(self):
        if isinstance(self._model, nn.DataParallel):
            return self._model.module.state_dict()
        return self._model.state_dict()

    def load(self, state_dict):
        if isinstance(self._model, nn.DataParallel):
            self._model.module.load_state_dict(state_dict)
        else:
            self._model.load_state_dict(state_dict)


def step(optimizer, scaler, loss, lr_scheduler=None, backward_only=False):
    if scaler is None:
        loss.backward()
    else:
        scaler.scale(loss).backward()

    if not backward_only:
        if scaler is None:
            optimizer.step()
        else:
            scaler.step(optimizer)
            scaler.update()
        if lr_scheduler is not None:
            lr_scheduler.step()
        optimizer.zero_grad()


class SingleStageGRU(BaseRGBModel):

    class Impl(nn.Module):

        def __init__(self, in_dim, hidden_dim, out_dim, num_layers=5):
            super(SingleStageGRU.Impl, self).__init__()
            self.backbone = nn.GRU(
                in_dim, hidden_dim, num_layers=num_layers, batch_first=True,
                bidirectional=True)
            self.fc_out = nn.Sequential(
                nn.BatchNorm1d(2 * hidden_dim),
                nn.Dropout(),
                nn.Linear(2 * hidden_dim, out_dim))
            self.dropout = nn.Dropout()

        def forward(self, x):
            batch_size, clip_len, _ = x.shape
            x, _ = self.backbone(x)
            x = self.fc_out(x.reshape(-1, x.shape[-1]))
            return x.view(batch_size, clip_len, -1)

    def __init__(self, in_dim, hidden_dim, out_dim, num_layers=5,
                 device='cuda'):
        self.device = device
        self._model = SingleStageGRU.Impl(
            in_dim, hidden_dim, out_dim, num_layers=num_layers)
        self._model.to(device)

    def predict(self, seq):
        self._model.eval()
        with torch.no_grad():
            seq = torch.FloatTensor(seq).unsqueeze(0).to(self.device)
            return self._model(seq)[0].cpu().numpy()


def count_parameters(model, trainable_only=True):
    """Parameter count used in the model-size column of the results table."""
    if trainable_only:
        return sum(p.numel() for p in model.parameters() if p.requires_grad)
    return sum(p.numel() for p in model.parameters())
