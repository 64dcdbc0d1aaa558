import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.init as init

import qd3dt.models.detectrackers.tracker.tracker_utils as tu


def init_module(layer):
    '''
    Initial modules weights and biases
    '''
    for m in layer.modules():
        if isinstance(m, nn.Conv2d) or \
                isinstance(m, nn.ConvTranspose2d):
            init.xavier_uniform_(m.weight.data)
            if m.bias is not None:
                m.bias.data.uniform_()
        elif isinstance(m, nn.BatchNorm2d):
            m.weight.data.fill_(1)
            m.bias.data.zero_()
        elif isinstance(m, nn.Linear):
            init.xavier_uniform_(m.weight.data)
            if m.bias is not None:
                m.bias.data.zero_()


def init_lstm_module(layer):
    '''
    Initial LSTM weights and biases
    '''
    for name, param in layer.named_parameters():

        if 'weight_ih' in name:
            torch.nn.init.xavier_uniform_(param.data)
        elif 'weight_hh' in name:
            torch.nn.init.orthogonal_(param.data)
        elif 'bias' in name:
            param.data.fill_(0)  # initializing the lstm bias with zeros


class LSTM(nn.Module):
    '''
    Estimating object location in world coordinates
    Prediction LSTM:
        Input: 5 frames velocity
        Output: Next frame location
    Updating LSTM:
        Input: predicted location and observed location
        Output: Refined location
    '''

    def __init__(self,
                 batch_size: int,
                 feature_dim: int,
                 hidden_size: int,
                 num_layers: int,
                 loc_dim: int,
                 dropout: float = 0.0):
        super(LSTM, self).__init__()
        self.batch_size = batch_size
        self.feature_dim = feature_dim
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.loc_dim = loc_dim

        self.loc2feat = nn.Linear(
            loc_dim,
            feature_dim,
        )

        self.pred2atten = nn.Linear(
            hidden_size,
            loc_dim,
            bias=False,
        )

        self.pred_lstm = nn.LSTM(
            input_size=feature_dim,
            hidden_size=hidden_size,
            dropout=dropout,
            num_layers=num_layers,
        )

        self.refine_lstm = nn.LSTM(
            input_size=2 * feature_dim,
            hidden_size=hidden_size,
            dropout=dropout,
            num_layers=num_layers,
        )

        self._init_param()

    def init_hidden(self, device, batch_size: int = 1):
        '''
        Initializ hidden state of LSTMs
        '''
        return (torch.zeros(self.num_layers, batch_size,
                            self.hidden_size).to(device),
                torch.zeros(self.num_layers, batch_size,
                            self.hidden_size).to(device))

    def refine(self, location: torch.Tensor, observation: torch.Tensor,
               prev_location: torch.Tensor, confidence: torch.Tensor,
               hc_0: torch.Tensor):
        '''
        Refine predicted location using single frame estimation at t+1
        Input:
            location: (num_batch x loc_dim), location from prediction
            observation: (num_batch x loc_dim), location from single frame estimation
            prev_location: (num_batch x loc_dim), refined location
            confidence: (num_batch X 1), depth estimation confidence
            hc_0: (num_layers, num_batch, hidden_size), tuple of hidden and cell
        Middle:
            embed: (1, num_batch x feature_dim), location feature
            out: (1 x num_batch x hidden_size), lstm output
            merge_feat: same as out
        Output:
            hc_n: (num_layers, num_batch, hidden_size), tuple of updated hidden, cell
            output_pred: (num_batch x loc_dim), predicted location
        '''
        num_batch = location.shape[0]

        # Embed feature to hidden_size
        loc_embed = self.loc2feat(location)
        obs_embed = self.loc2feat(observation)
        embed = torch.cat([loc_embed, obs_embed], dim=1).view(1, num_batch, -1)

        self.refine_lstm.flatten_parameters()
        out, (h_n, c_n) = self.refine_lstm(embed, hc_0)

        delta_vel_atten = torch.sigmoid(self.pred2atten(out)).view(
            num_batch, -1)

        output_pred = delta_vel_atten * observation + (
            1.0 - delta_vel_atten) * location

        return output_pred, (h_n, c_n)

    def predict(self, vel_history: torch.Tensor, location: torch.Tensor,
                hc_0: torch.Tensor):
        '''
        Predict location at t+1 using updated location at t
        Input:
            vel_history: (num_seq, num_batch, loc_dim), velocity from previous num_seq updates
            location: (num_batch, loc_dim), location from previous update
            hc_0: (num_layers, num_batch, hidden_size), tuple of hidden and cell
        Middle:
            embed: (num_seq, num_batch x feature_dim), location feature
            out: (num_seq x num_batch x hidden_size), lstm output
            attention_logit: (num_seq x num_batch x loc_dim), the predicted residual
        Output:
            hc_n: (num_layers, num_batch, hidden_size), tuple of updated hidden, cell
            output_pred: (num_batch x loc_dim), predicted location
        '''
        num_seq, num_batch, _ = vel_history.shape

        # Embed feature to hidden_size
        embed = self.loc2feat(vel_history).view(num_seq, num_batch, -1)

        self.pred_lstm.flatten_parameters()
        out, (h_n, c_n) = self.pred_lstm(embed, hc_0)

        attention_logit = self.pred2atten(out).view(num_seq, num_batch, -1)
        attention = torch.softmax(attention_logit, dim=0)

        output_pred = torch.sum(attention * vel_history, dim=0) + location

        return output_pred, (h_n, c_n)

    def _init_param(self):
        init_module(self.loc2feat)
        init_module(self.pred2atten)
        init_lstm_module(self.pred_lstm)
        init_lstm_module(self.refine_lstm)


class VeloLSTM(LSTM):
    '''
    Estimating object location in world coordinates
    Prediction LSTM:
        Input: 5 frames velocity
        Output: Next frame location
    Updating LSTM:
        Input: predicted location and observed location
        Output: Refined location
    '''

    def __init__(self,
                 batch_size: int,
                 feature_dim: int,
                 hidden_size: int,
                 num_layers: int,
                 loc_dim: int,
                 dropout: float = 0.0):
        super(VeloLSTM, self).__init__(batch_size, feature_dim, hidden_size,
                                       num_layers, loc_dim, dropout)

        self.refine_lstm = nn.LSTM(
            input_size=3 * feature_dim,
            hidden_size=hidden_size,
            dropout=dropout,
            num_layers=num_layers,
        )

        self.conf2feat = nn.Linear(
            1,
            feature_dim,
            bias=False,
        )

        self._init_param()

    def refine(self, location: torch.Tensor, observation: torch.Tensor,
               prev_location: torch.Tensor, confidence: torch.Tensor,
               hc_0: torch.Tensor):
        num_batch = location.shape[0]

        pred_vel = location - prev_location
        obsv_vel = observation - prev_location

        # Embed feature to hidden_size
        loc_embed = self.loc2feat(pred_vel)
        obs_embed = self.loc2feat(obsv_vel)
        conf_embed = self.conf2feat(confidence)
        embed = torch.cat([loc_embed, obs_embed, conf_embed],
                          dim=1).view(1, num_batch, -1)

        self.refine_lstm.flatten_parameters()
        out, (h_n, c_n) = self.refine_lstm(embed, hc_0)

        delta_vel_atten = torch.sigmoid(self.pred2atten(out)).view(
            num_batch, -1)

        output_pred = delta_vel_atten * obsv_vel + (
            1.0 - delta_vel_atten) * pred_vel + prev_location

        return output_pred, (h_n, c_n)

    def _init_param(self):
        init_module(self.loc2feat)
        init_module(self.conf2feat)
        init_module(self.pred2atten)
        init_lstm_module(self.pred_lstm)
        init_lstm_module(self.refine_lstm)


def build_lstm_model(cfg):
    model = VeloLSTM(
        batch_size=cfg.get('batch_size', 1),
        feature_dim=cfg.get('feature_dim', 64),
        hidden_size=cfg.get('hidden_size', 128),
        num_layers=cfg.get('num_layers', 2),
        loc_dim=cfg.get('loc_dim', 7),
        dropout=0.0)
    return model


def load_lstm_checkpoint(model, ckpt_path, verbose=True):
    '''
    Load weights from a checkpoint written by scripts/train_lstm.py
    (which saves the full state on the training GPU).
    '''
    checkpoint = torch.load(ckpt_path)
    state_dict = checkpoint['state_dict'] if 'state_dict' in checkpoint else checkpoint
    # strip the DataParallel prefix
    state_dict = {k.replace('module.', '', 1): v for k, v in state_dict.items()}
    missing, unexpected = model.load_state_dict(state_dict, strict=False)
    if verbose:
        print("=> Loaded LSTM checkpoint '{}' (epoch {})".format(
            ckpt_path, checkpoint.get('epoch', -1)))
        if missing:
            print('missing keys:', missing)
        if unexpected:
            print('unexpected keys:', unexpected)
    return model, checkpoint.get('epoch', -1)
