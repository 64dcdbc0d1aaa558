##################################################
# DeepConvLSTM model as proposed by Ordonez and Roggen (2016), with optional modifications
# (skip/fixup convolution blocks, reduce layer, pooling, variable number of LSTM layers)
##################################################
# Author: Marius Bock
##################################################

from torch import nn
import torch.nn.functional as F


class ConvBlock(nn.Module):
    """
    Normal convolution block (two convolutional layers with ReLU activation)
    """
    def __init__(self, filter_width, input_filters, nb_filters, dilation, batch_norm):
        super(ConvBlock, self).__init__()
        self.filter_width = filter_width
        self.input_filters = input_filters
        self.nb_filters = nb_filters
        self.dilation = dilation
        self.batch_norm = batch_norm

        self.conv1 = nn.Conv2d(self.input_filters, self.nb_filters, (self.filter_width, 1), dilation=(self.dilation, 1))
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(self.nb_filters, self.nb_filters, (self.filter_width, 1), dilation=(self.dilation, 1))
        if self.batch_norm:
            self.norm1 = nn.BatchNorm2d(self.nb_filters)
            self.norm2 = nn.BatchNorm2d(self.nb_filters)

    def forward(self, x):
        out = self.conv1(x)
        out = self.relu(out)
        if self.batch_norm:
            out = self.norm1(out)

        out = self.conv2(out)
        out = self.relu(out)
        if self.batch_norm:
            out = self.norm2(out)

        return out


class ConvBlockSkip(nn.Module):
    """
    Convolution block with a skip connection (input added after the second convolution)
    """
    def __init__(self, window_size, filter_width, input_filters, nb_filters, dilation, batch_norm):
        super(ConvBlockSkip, self).__init__()
        self.filter_width = filter_width
        self.input_filters = input_filters
        self.nb_filters = nb_filters
        self.window_size = window_size
        self.dilation = dilation
        self.batch_norm = batch_norm

        self.conv1 = nn.Conv2d(self.input_filters, self.nb_filters, (self.filter_width, 1),
                               dilation=(self.dilation, 1), padding=(self.filter_width // 2 * self.dilation, 0))
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(self.nb_filters, self.nb_filters, (self.filter_width, 1),
                               dilation=(self.dilation, 1), padding=(self.filter_width // 2 * self.dilation, 0))
        if self.batch_norm:
            self.norm1 = nn.BatchNorm2d(self.nb_filters)
            self.norm2 = nn.BatchNorm2d(self.nb_filters)

    def forward(self, x):
        out = self.conv1(x)
        out = self.relu(out)
        if self.batch_norm:
            out = self.norm1(out)

        out = self.conv2(out)
        if self.batch_norm:
            out = self.norm2(out)
        out = out + x
        out = self.relu(out)

        return out


class DeepConvLSTM(nn.Module):
    def __init__(self, channels, classes, window_size, config):
        super(DeepConvLSTM, self).__init__()
        # parameters
        self.window_size = window_size
        self.drop_prob = config['drop_prob']
        self.nb_channels = channels
        self.nb_classes = classes
        self.nb_units_lstm = config['nb_units_lstm']
        self.nb_layers_lstm = config['nb_layers_lstm']
        self.conv_block_type = config['conv_block_type']
        self.nb_conv_blocks = config['nb_conv_blocks']
        self.nb_filters = config['nb_filters']
        self.filter_width = config['filter_width']
        self.dilation = config['dilation']
        self.batch_norm = config['batch_norm']
        self.pooling = config['pooling']
        self.reduce_layer = config['reduce_layer']
        self.reduce_layer_output = config['reduce_layer_output']
        self.pool_type = config['pool_type']
        self.pool_kernel_width = config['pool_kernel_width']
        self.no_lstm = config['no_lstm']

        # define conv blocks
        self.conv_blocks = []
        for i in range(self.nb_conv_blocks):
            if i == 0:
                input_filters = 1
            else:
                input_filters = self.nb_filters
            if self.conv_block_type == 'skip' and i > 0:
                self.conv_blocks.append(ConvBlockSkip(self.window_size, self.filter_width, input_filters,
                                                      self.nb_filters, self.dilation, self.batch_norm))
            else:
                self.conv_blocks.append(ConvBlock(self.filter_width, input_filters, self.nb_filters,
                                                  self.dilation, self.batch_norm))
        self.conv_blocks = nn.ModuleList(self.conv_blocks)

        # calculate the final sequence length after the (valid) convolutions
        if self.conv_block_type == 'normal':
            self.final_seq_len = self.window_size - (self.filter_width - 1) * self.dilation * 2 * self.nb_conv_blocks
        else:
            self.final_seq_len = self.window_size - (self.filter_width - 1) * self.dilation * 2

        # define optional pooling layer
        if self.pooling:
            if self.pool_type == 'max':
                self.pool = nn.MaxPool2d((self.pool_kernel_width, 1))
            elif self.pool_type == 'avg':
                self.pool = nn.AvgPool2d((self.pool_kernel_width, 1))
            self.final_seq_len = self.final_seq_len // self.pool_kernel_width

        # define optional reduce layer (collapses the filter dimension before the LSTM)
        if self.reduce_layer:
            self.reduce = nn.Conv2d(self.nb_filters, self.reduce_layer_output, (self.filter_width, 1))
            self.final_seq_len = self.final_seq_len - (self.filter_width - 1)
            lstm_input = self.reduce_layer_output * self.nb_channels
        else:
            lstm_input = self.nb_filters * self.nb_channels

        # define lstm layers
        if not self.no_lstm:
            self.lstm_layers = []
            for i in range(self.nb_layers_lstm):
                if i == 0:
                    self.lstm_layers.append(nn.LSTM(lstm_input, self.nb_units_lstm))
                else:
                    self.lstm_layers.append(nn.LSTM(self.nb_units_lstm, self.nb_units_lstm))
            self.lstm_layers = nn.ModuleList(self.lstm_layers)
            fc_input = self.nb_units_lstm
        else:
            fc_input = lstm_input

        # define dropout layer
        self.dropout = nn.Dropout(self.drop_prob)

        # define classifier
        self.fc = nn.Linear(fc_input, self.nb_classes)

    def forward(self, x):
        # reshape data for convolutions: (batch, 1, time, channels)
        x = x.view(-1, 1, self.window_size, self.nb_channels)
        for i, conv_block in enumerate(self.conv_blocks):
            x = conv_block(x)
        if self.pooling:
            x = self.pool(x)
        if self.reduce_layer:
            x = self.reduce(x)
            x = F.relu(x)
        # permute dimensions and reshape for LSTM: (time, batch, filters * channels)
        x = x.permute(0, 2, 1, 3)
        x = x.reshape(-1, self.final_seq_len, x.shape[2] * x.shape[3])
        x = x.permute(1, 0, 2)
        if not self.no_lstm:
            for lstm_layer in self.lstm_layers:
                x, _ = lstm_layer(x)
        x = x.permute(1, 0, 2)
        # only take the last time step for classification (many-to-one)
        x = x[:, -1, :]
        x = self.dropout(x)
        out = self.fc(x)
        return out

    def number_of_parameters(self):
        return sum(p.numel() for p in self.parameters() if p.requires_grad)
