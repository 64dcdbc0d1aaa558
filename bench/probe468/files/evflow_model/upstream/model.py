import torch
import torch.nn as nn
import torch.nn.functional as F

_BASE_CHANNELS = 64


class general_conv2d(nn.Module):
    def __init__(self, in_channels, out_channels, ksize=3, strides=2, padding=1, do_batch_norm=False,
                 activation='relu'):
        super(general_conv2d, self).__init__()
        layers = [nn.Conv2d(in_channels, out_channels, kernel_size=ksize, stride=strides, padding=padding)]
        if do_batch_norm:
            layers.append(nn.BatchNorm2d(out_channels, momentum=0.01, eps=1e-3))
        if activation == 'relu':
            layers.append(nn.ReLU(inplace=True))
        elif activation == 'tanh':
            layers.append(nn.Tanh())
        self.block = nn.Sequential(*layers)

    def forward(self, x):
        return self.block(x)


class build_resnet_block(nn.Module):
    """
    a resnet block which includes two general_conv2d
    """

    def __init__(self, channels, layers=2, do_batch_norm=False):
        super(build_resnet_block, self).__init__()
        self._channels = channels
        self._layers = layers

        self.res_block = nn.Sequential(*[general_conv2d(in_channels=self._channels,
                                                        out_channels=self._channels,
                                                        strides=1,
                                                        do_batch_norm=do_batch_norm) for i in range(self._layers)])

    def forward(self, input_res):
        inputs = input_res.clone()
        input_res = self.res_block(input_res)
        return input_res + inputs


class upsample_conv2d_and_predict_flow(nn.Module):
    """
    an upsample convolution layer which includes a nearest interpolate and a general_conv2d
    """

    def __init__(self, in_channels, out_channels, ksize=3, do_batch_norm=False):
        super(upsample_conv2d_and_predict_flow, self).__init__()
        self._in_channels = in_channels
        self._out_channels = out_channels
        self._ksize = ksize
        self._do_batch_norm = do_batch_norm

        self.general_conv2d = general_conv2d(in_channels=self._in_channels,
                                             out_channels=self._out_channels,
                                             ksize=self._ksize,
                                             strides=1,
                                             do_batch_norm=self._do_batch_norm,
                                             padding=0)

        self.pad = nn.ReflectionPad2d(padding=(int((self._ksize - 1) / 2), int((self._ksize - 1) / 2),
                                               int((self._ksize - 1) / 2), int((self._ksize - 1) / 2)))

        self.predict_flow = general_conv2d(in_channels=self._out_channels,
                                           out_channels=2,
                                           ksize=1,
                                           strides=1,
                                           padding=0,
                                           activation='tanh')

    def forward(self, conv):
        """
        Returns:
            conv: the upsampled feature map used by the next decoder level.
            flow: the flow prediction at this scale.
        """
        shape = conv.shape
        conv = F.interpolate(conv, size=[shape[2] * 2, shape[3] * 2], mode='nearest')
        conv = self.pad(conv)
        conv = self.general_conv2d(conv)

        flow = self.predict_flow(conv) * 256.

        return torch.cat([conv, flow.clone()], dim=1), flow


class EVFlowNet(nn.Module):
    def __init__(self, args):
        super(EVFlowNet, self).__init__()
        self._args = args
        do_bn = not args.no_batch_norm

        in_channels = 4
        if args.count_only or args.time_only:
            in_channels = 2

        self.encoder1 = general_conv2d(in_channels=in_channels, out_channels=_BASE_CHANNELS, do_batch_norm=do_bn)
        self.encoder2 = general_conv2d(in_channels=_BASE_CHANNELS, out_channels=2 * _BASE_CHANNELS,
                                       do_batch_norm=do_bn)
        self.encoder3 = general_conv2d(in_channels=2 * _BASE_CHANNELS, out_channels=4 * _BASE_CHANNELS,
                                       do_batch_norm=do_bn)
        self.encoder4 = general_conv2d(in_channels=4 * _BASE_CHANNELS, out_channels=8 * _BASE_CHANNELS,
                                       do_batch_norm=do_bn)

        self.resnet_block = nn.Sequential(*[build_resnet_block(8 * _BASE_CHANNELS, do_batch_norm=do_bn)
                                            for i in range(2)])

        self.decoder1 = upsample_conv2d_and_predict_flow(in_channels=16 * _BASE_CHANNELS,
                                                         out_channels=4 * _BASE_CHANNELS,
                                                         do_batch_norm=do_bn)

        self.decoder2 = upsample_conv2d_and_predict_flow(in_channels=8 * _BASE_CHANNELS + 2,
                                                         out_channels=2 * _BASE_CHANNELS,
                                                         do_batch_norm=do_bn)

        self.decoder3 = upsample_conv2d_and_predict_flow(in_channels=4 * _BASE_CHANNELS + 2,
                                                         out_channels=_BASE_CHANNELS,
                                                         do_batch_norm=do_bn)

        self.decoder4 = upsample_conv2d_and_predict_flow(in_channels=2 * _BASE_CHANNELS + 2,
                                                         out_channels=int(_BASE_CHANNELS / 2),
                                                         do_batch_norm=do_bn)

        self._init_weights()

    def _init_weights(self):
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.xavier_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(self, inputs):
        # encoder
        skip_connections = {}
        inputs = self.encoder1(inputs)
        skip_connections['skip0'] = inputs.clone()
        inputs = self.encoder2(inputs)
        skip_connections['skip1'] = inputs.clone()
        inputs = self.encoder3(inputs)
        skip_connections['skip2'] = inputs.clone()
        inputs = self.encoder4(inputs)
        skip_connections['skip3'] = inputs.clone()

        # transition
        inputs = self.resnet_block(inputs)

        # decoder
        flow_dict = {}
        inputs = torch.cat([inputs, skip_connections['skip3']], dim=1)
        inputs, flow = self.decoder1(inputs)
        flow_dict['flow0'] = flow.clone()

        inputs = torch.cat([inputs, skip_connections['skip2']], dim=1)
        inputs, flow = self.decoder2(inputs)
        flow_dict['flow1'] = flow.clone()

        inputs = torch.cat([inputs, skip_connections['skip1']], dim=1)
        inputs, flow = self.decoder3(inputs)
        flow_dict['flow2'] = flow.clone()

        inputs = torch.cat([inputs, skip_connections['skip0']], dim=1)
        inputs, flow = self.decoder4(inputs)
        flow_dict['flow3'] = flow.clone()

        return flow_dict


if __name__ == "__main__":
    from config import configs
    import time

    args = configs()
    model = EVFlowNet(args)
    a = torch.rand(1, 4, 256, 256)
    t = time.time()
    out = model(a)
    print('forward on CPU: {:.3f}s'.format(time.time() - t))
    for k, v in out.items():
        print(k, tuple(v.shape))
