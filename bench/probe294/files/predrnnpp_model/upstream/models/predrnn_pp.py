"""PyTorch re-implementation of PredRNN++ (Wang et al., ICML 2018).

Causal LSTM cells stacked with a Gradient Highway Unit (GHU) between the first
and second layer.  Ported from the original TensorFlow code; written for a
single GPU, so hidden states are created directly on the GPU.
"""
import torch
import torch.nn as nn

from .tensor_layer_norm import TensorLayerNorm


class GHU(nn.Module):
    """Gradient Highway Unit."""

    def __init__(self, layer_name, filter_size, num_features, tln=False, initializer=0.001):
        super(GHU, self).__init__()
        self.layer_name = layer_name
        self.filter_size = filter_size
        self.num_features = num_features
        self.layer_norm = tln
        self.padding = filter_size // 2

        self.z_concat = nn.Conv2d(num_features, num_features * 2, filter_size, 1, self.padding)
        self.x_concat = nn.Conv2d(num_features, num_features * 2, filter_size, 1, self.padding)
        if self.layer_norm:
            self.z_norm = TensorLayerNorm(num_features * 2)
            self.x_norm = TensorLayerNorm(num_features * 2)

        if initializer != -1:
            for m in (self.z_concat, self.x_concat):
                nn.init.uniform_(m.weight, -initializer, initializer)

    def init_state(self, inputs, num_features):
        dims = inputs.dim()
        if dims == 4:
            batch = inputs.size(0)
            height = inputs.size(2)
            width = inputs.size(3)
        else:
            raise ValueError('input tensor should be rank 4.')
        return torch.zeros([batch, num_features, height, width]).cuda()

    def forward(self, x, z):
        if z is None:
            z = self.init_state(x, self.num_features)
        z_concat = self.z_concat(z)
        x_concat = self.x_concat(x)
        if self.layer_norm:
            z_concat = self.z_norm(z_concat)
            x_concat = self.x_norm(x_concat)

        gates = x_concat + z_concat
        p, u = torch.split(gates, self.num_features, dim=1)
        p = torch.tanh(p)
        u = torch.sigmoid(u)
        z_new = u * p + (1 - u) * z
        return z_new


class CausalLSTMCell(nn.Module):
    """Causal LSTM cell with a cascaded spatial (m) and temporal (c) memory."""

    def __init__(self, layer_name, filter_size, num_hidden_in, num_hidden_out,
                 seq_shape, forget_bias=1.0, tln=False, initializer=0.001):
        super(CausalLSTMCell, self).__init__()
        self.layer_name = layer_name
        self.filter_size = filter_size
        self.num_hidden_in = num_hidden_in
        self.num_hidden = num_hidden_out
        self.batch = seq_shape[0]
        self.height = seq_shape[3]
        self.width = seq_shape[4]
        self.layer_norm = tln
        self._forget_bias = forget_bias
        self.padding = filter_size // 2

        self.h_cc = nn.Conv2d(self.num_hidden, self.num_hidden * 4, filter_size, 1, self.padding)
        self.c_cc = nn.Conv2d(self.num_hidden, self.num_hidden * 3, filter_size, 1, self.padding)
        self.m_cc = nn.Conv2d(self.num_hidden_in, self.num_hidden * 3, filter_size, 1, self.padding)
        self.x_cc = nn.Conv2d(self.num_hidden_in, self.num_hidden * 7, filter_size, 1, self.padding)
        self.c2m = nn.Conv2d(self.num_hidden, self.num_hidden * 4, filter_size, 1, self.padding)
        self.o_m = nn.Conv2d(self.num_hidden, self.num_hidden, filter_size, 1, self.padding)
        self.cell_reduce = nn.Conv2d(self.num_hidden * 2, self.num_hidden, 1, 1, 0)

        if self.layer_norm:
            self.h_norm = TensorLayerNorm(self.num_hidden * 4)
            self.c_norm = TensorLayerNorm(self.num_hidden * 3)
            self.m_norm = TensorLayerNorm(self.num_hidden * 3)
            self.x_norm = TensorLayerNorm(self.num_hidden * 7)
            self.c2m_norm = TensorLayerNorm(self.num_hidden * 4)
            self.o_m_norm = TensorLayerNorm(self.num_hidden)

        if initializer != -1:
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.uniform_(m.weight, -initializer, initializer)

    def init_state(self):
        return torch.zeros((self.batch, self.num_hidden, self.height, self.width),
                           dtype=torch.float32).cuda()

    def forward(self, x, h, c, m):
        if h is None:
            h = self.init_state()
        if c is None:
            c = self.init_state()
        if m is None:
            m = torch.zeros((self.batch, self.num_hidden_in, self.height, self.width),
                            dtype=torch.float32, device=x.device)

        h_cc = self.h_cc(h)
        c_cc = self.c_cc(c)
        m_cc = self.m_cc(m)
        if self.layer_norm:
            h_cc = self.h_norm(h_cc)
            c_cc = self.c_norm(c_cc)
            m_cc = self.m_norm(m_cc)

        i_h, g_h, f_h, o_h = torch.split(h_cc, self.num_hidden, dim=1)
        i_c, g_c, f_c = torch.split(c_cc, self.num_hidden, dim=1)
        i_m, f_m, m_m = torch.split(m_cc, self.num_hidden, dim=1)

        if x is None:
            i = torch.sigmoid(i_h + i_c)
            f = torch.sigmoid(f_h + f_c + self._forget_bias)
            g = torch.tanh(g_h + g_c)
        else:
            x_cc = self.x_cc(x)
            if self.layer_norm:
                x_cc = self.x_norm(x_cc)

            i_x, g_x, f_x, o_x, i_x_, g_x_, f_x_ = torch.split(x_cc, self.num_hidden, dim=1)
            i = torch.sigmoid(i_x + i_h + i_c)
            f = torch.sigmoid(f_x + f_h + f_c + self._forget_bias)
            g = torch.tanh(g_x + g_h + g_c)

        c_new = f * c + i * g
        c2m = self.c2m(c_new)
        if self.layer_norm:
            c2m = self.c2m_norm(c2m)

        i_c, g_c, f_c, o_c = torch.split(c2m, self.num_hidden, dim=1)

        if x is None:
            ii = torch.sigmoid(i_c + i_m)
            ff = torch.sigmoid(f_c + f_m + self._forget_bias)
            gg = torch.tanh(g_c)
        else:
            ii = torch.sigmoid(i_c + i_x_ + i_m)
            ff = torch.sigmoid(f_c + f_x_ + f_m + self._forget_bias)
            gg = torch.tanh(g_c + g_x_)

        m_new = ff * torch.tanh(m_m) + ii * gg
        o_m = self.o_m(m_new)
        if self.layer_norm:
            o_m = self.o_m_norm(o_m)

        if x is None:
            o = torch.tanh(o_h + o_c + o_m)
        else:
            o = torch.tanh(o_x + o_h + o_c + o_m)

        cell = torch.cat([c_new, m_new], 1)
        cell = self.cell_reduce(cell)
        h_new = o * torch.tanh(cell)
        return h_new, c_new, m_new


class PredRNNpp(nn.Module):
    """PredRNN++: stack of causal LSTMs with a GHU after the first layer."""

    def __init__(self, shape, num_layers, num_hidden, filter_size, seq_length=20,
                 input_length=10, tln=True):
        super(PredRNNpp, self).__init__()
        self.shape = shape  # [batch, seq, channel, height, width]
        self.num_layers = num_layers
        self.num_hidden = num_hidden
        self.filter_size = filter_size
        self.seq_length = seq_length
        self.input_length = input_length
        self.tln = tln
        output_channels = shape[2]

        cell_list = []
        for i in range(self.num_layers):
            num_hidden_in = output_channels if i == 0 else self.num_hidden[i - 1]
            cell_list.append(CausalLSTMCell('lstm_' + str(i + 1), filter_size,
                                            num_hidden_in, self.num_hidden[i], shape, tln=tln))
        self.cell_list = nn.ModuleList(cell_list)
        self.ghu = GHU('highway', filter_size, self.num_hidden[0], tln=tln)
        self.conv_last = nn.Conv2d(self.num_hidden[-1], output_channels, 1, 1, 0)

    def forward(self, images, mask_true):
        # images: [batch, seq, channel, height, width]
        # mask_true: [batch, seq - input_length - 1, channel, height, width]
        gen_images = []
        hidden = [None] * self.num_layers
        cell = [None] * self.num_layers
        mem = None
        z_t = None

        for t in range(self.seq_length - 1):
            if t < self.input_length:
                inputs = images[:, t]
            else:
                inputs = mask_true[:, t - self.input_length] * images[:, t] + \
                    (1 - mask_true[:, t - self.input_length]) * x_gen

            hidden[0], cell[0], mem = self.cell_list[0](inputs, hidden[0], cell[0], mem)
            z_t = self.ghu(hidden[0], z_t)
            hidden[1], cell[1], mem = self.cell_list[1](z_t, hidden[1], cell[1], mem)

            for i in range(2, self.num_layers):
                hidden[i], cell[i], mem = self.cell_list[i](hidden[i - 1], hidden[i], cell[i], mem)

            x_gen = self.conv_last(hidden[self.num_layers - 1])
            gen_images.append(x_gen)

        gen_images = torch.stack(gen_images, dim=1)
        return gen_images


def build_model(args):
    num_hidden = [int(x) for x in args.num_hidden.split(',')]
    shape = [args.batch_size, args.seq_length, args.img_channel * args.patch_size ** 2,
             args.img_width // args.patch_size, args.img_width // args.patch_size]
    model = PredRNNpp(shape, len(num_hidden), num_hidden, args.filter_size,
                      seq_length=args.seq_length, input_length=args.input_length,
                      tln=bool(args.layer_norm))
    if torch.cuda.is_available():
        model = model.cuda()
    return model
