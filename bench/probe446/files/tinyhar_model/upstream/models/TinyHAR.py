import torch
import torch.nn as nn
import torch.nn.functional as F


class SelfAttention_interaction(nn.Module):
    """
    Cross-channel interaction via a single-head self attention over the sensor channels.
    """
    def __init__(self, sensor_channel, n_channels):
        super(SelfAttention_interaction, self).__init__()
        self.query = nn.Linear(n_channels, n_channels, bias=False)
        self.key = nn.Linear(n_channels, n_channels, bias=False)
        self.value = nn.Linear(n_channels, n_channels, bias=False)
        self.gamma = nn.Parameter(torch.tensor([0.]))

    def forward(self, x):
        # x: (batch, sensor_channel, filter_num)
        f, g, h = self.query(x), self.key(x), self.value(x)
        beta = F.softmax(torch.bmm(f, g.permute(0, 2, 1).contiguous()), dim=1)
        o = self.gamma * torch.bmm(h.permute(0, 2, 1).contiguous(), beta) + x.permute(0, 2, 1).contiguous()
        o = o.permute(0, 2, 1).contiguous()
        return o


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.1):
        super(PositionwiseFeedForward, self).__init__()
        self.w_1 = nn.Linear(d_model, d_ff)
        self.w_2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.w_2(self.dropout(F.relu(self.w_1(x))))


class Transformer_interaction(nn.Module):
    """
    Cross-channel interaction via a (small) transformer encoder layer.
    """
    def __init__(self, sensor_channel, dim, depth=1, heads=4, dim_head=16, mlp_dim=16, dropout=0.):
        super(Transformer_interaction, self).__init__()
        self.layers = nn.ModuleList([])
        for _ in range(depth):
            self.layers.append(nn.ModuleList([
                nn.LayerNorm(dim),
                nn.MultiheadAttention(dim, heads, dropout=dropout, batch_first=True),
                nn.LayerNorm(dim),
                PositionwiseFeedForward(dim, mlp_dim, dropout),
            ]))

    def forward(self, x):
        for norm1, attn, norm2, ff in self.layers:
            y = norm1(x)
            x = attn(y, y, y, need_weights=False)[0] + x
            x = ff(norm2(x)) + x
        return x


class Temporal_Weighted_Aggregation(nn.Module):
    """
    Temporal attention module: weighted sum of the hidden states, added to the last hidden state.
    """
    def __init__(self, sensor_channel, hidden_dim):
        super(Temporal_Weighted_Aggregation, self).__init__()
        self.fc_1 = nn.Linear(hidden_dim, hidden_dim)
        self.weighs_activation = nn.Tanh()
        self.fc_2 = nn.Linear(hidden_dim, 1, bias=False)
        self.sm = torch.nn.Softmax(dim=1)
        self.gamma = nn.Parameter(torch.tensor([0.]))

    def forward(self, x):
        # x: (batch, time, hidden)
        out = self.weighs_activation(self.fc_1(x))
        out = self.fc_2(out).squeeze(2)
        weights_att = self.sm(out).unsqueeze(2)
        context = torch.sum(weights_att * x, 1)
        context = x[:, -1, :] + self.gamma * context
        return context


crosschannel_interaction = {'attn': SelfAttention_interaction,
                            'transformer': Transformer_interaction}


class TinyHAR_Model(nn.Module):
    def __init__(self,
                 input_shape,
                 number_class,
                 filter_num,
                 nb_conv_layers=4,
                 filter_size=5,
                 cross_channel_interaction_type='attn',
                 cross_channel_aggregation_type='FC',
                 temporal_info_interaction_type='lstm',
                 temporal_info_aggregation_type='tnaive',
                 dropout=0.1,
                 activation='ReLU',
                 feature_extract=None):
        super(TinyHAR_Model, self).__init__()

        self.cross_channel_interaction_type = cross_channel_interaction_type
        self.cross_channel_aggregation_type = cross_channel_aggregation_type
        self.temporal_info_interaction_type = temporal_info_interaction_type
        self.temporal_info_aggregation_type = temporal_info_aggregation_type

        # ---------------- individual convolutions (per sensor channel) ----------------
        filter_num_list = [1]
        filter_num_step = int(filter_num / nb_conv_layers)
        for i in range(nb_conv_layers - 1):
            filter_num_list.append(filter_num)
        filter_num_list.append(filter_num)

        layers_conv = []
        for i in range(nb_conv_layers):
            in_channel = filter_num_list[i]
            out_channel = filter_num_list[i + 1]
            if i % 2 == 1:
                layers_conv.append(nn.Sequential(
                    nn.Conv2d(in_channel, out_channel, (filter_size, 1), (2, 1)),
                    nn.ReLU(inplace=True),
                    nn.BatchNorm2d(out_channel)))
            else:
                layers_conv.append(nn.Sequential(
                    nn.Conv2d(in_channel, out_channel, (filter_size, 1), (1, 1)),
                    nn.ReLU(inplace=True),
                    nn.BatchNorm2d(out_channel)))
        self.layers_conv = nn.ModuleList(layers_conv)

        downsampling_length = self.get_the_shape(input_shape)

        # ---------------- cross-channel interaction ----------------
        self.channel_interaction = crosschannel_interaction[cross_channel_interaction_type](input_shape[3], filter_num)

        # ---------------- cross-channel fusion ----------------
        if cross_channel_aggregation_type == 'FC':
            self.channel_fusion = nn.Linear(input_shape[3] * filter_num, 2 * filter_num)
        else:
            raise NotImplementedError(cross_channel_aggregation_type)
        self.activation = nn.ReLU() if activation == 'ReLU' else nn.GELU()

        # ---------------- temporal interaction ----------------
        if temporal_info_interaction_type == 'lstm':
            self.temporal_interaction = nn.LSTM(2 * filter_num, 2 * filter_num, batch_first=True)
        elif temporal_info_interaction_type == 'gru':
            self.temporal_interaction = nn.GRU(2 * filter_num, 2 * filter_num, batch_first=True)
        else:
            raise NotImplementedError(temporal_info_interaction_type)

        # ---------------- temporal aggregation ----------------
        self.temporal_fusion = Temporal_Weighted_Aggregation(input_shape[3], 2 * filter_num)

        self.dropout = nn.Dropout(dropout)
        self.prediction = nn.Linear(2 * filter_num, number_class)

    def get_the_shape(self, input_shape):
        x = torch.rand(input_shape)
        for layer in self.layers_conv:
            x = layer(x)
        return x.shape[2]

    def forward(self, x):
        # x: (batch, 1, time, sensor_channel)
        for layer in self.layers_conv:
            x = layer(x)
        # x: (batch, filter_num, time', sensor_channel)
        x = x.permute(0, 3, 2, 1)
        # interaction across channels is done for every time step separately
        x = torch.cat(
            [self.channel_interaction(x[:, :, t, :]).unsqueeze(3) for t in range(x.shape[2])],
            dim=-1,
        )
        # x: (batch, sensor_channel, filter_num, time')
        x = self.dropout(x)
        x = x.permute(0, 3, 1, 2)
        x = x.reshape(x.shape[0], x.shape[1], -1)
        x = self.activation(self.channel_fusion(x))

        x, _ = self.temporal_interaction(x)
        x = self.temporal_fusion(x)
        y = self.prediction(x)
        return y
