import torch
import torch.nn as nn
import torch.nn.functional as F


class Classifier(nn.Module):
    def __init__(self, input_size=1024, output_size=2):
        super(Classifier, self).__init__()
        self.linear1 = torch.nn.Linear(input_size, output_size)

    def forward(self, x):
        y_pred = self.linear1(x)
        return y_pred


class EvaClassifier(nn.Module):
    def __init__(self, input_size=1024, nn_size=512, output_size=2):
        super(EvaClassifier, self).__init__()
        self.linear1 = torch.nn.Linear(input_size, nn_size)
        self.linear2 = torch.nn.Linear(nn_size, output_size)

    def forward(self, x):
        x = F.relu(self.linear1(x))
        y_pred = self.linear2(x)
        return y_pred


class Downsample(nn.Module):
    r"""Downsampling layer that applies anti-aliasing filters.
    For example, order=0 corresponds to moving average, order=1 to triangular filter.
    """

    def __init__(self, channels=None, factor=2, order=1):
        super(Downsample, self).__init__()
        assert factor > 1, 'Downsampling factor must be > 1'
        self.stride = factor
        self.channels = channels
        self.order = order

        # Figure out padding and check params make sense
        # The padding is given by order*(factor-1)/2
        # so order*(factor-1) must be divisible by 2
        total_padding = order * (factor - 1)
        assert total_padding % 2 == 0, 'Misspecified downsampling parameters.' \
                                       'Downsampling factor and order must be such that order*(factor-1) is divisible by 2'
        self.padding = int(order * (factor - 1) / 2)

        box_kernel = torch.ones(factor)
        kernel = torch.ones(factor)
        for _ in range(order):
            kernel = torch.conv1d(kernel.view(1, 1, -1), box_kernel.view(1, 1, -1), padding=factor - 1).view(-1)
        kernel = kernel / torch.sum(kernel)
        kernel = kernel.view(1, 1, -1).repeat(channels, 1, 1)
        self.register_buffer('kernel', kernel)

    def forward(self, x):
        return F.conv1d(x, self.kernel, stride=self.stride, padding=self.padding, groups=x.shape[1])


class ResBlock(nn.Module):
    r"""Basic bulding block in Resnets:

       bn-relu-conv-bn-relu-conv
      /                         \
    x --------------------------(+)->
    """

    def __init__(self, in_channels, out_channels, kernel_size=5, stride=1, padding=2):
        super(ResBlock, self).__init__()
        self.bn1 = nn.BatchNorm1d(in_channels)
        self.bn2 = nn.BatchNorm1d(out_channels)
        self.conv1 = nn.Conv1d(in_channels, out_channels, kernel_size, stride, padding, bias=False,
                               padding_mode='circular')
        self.conv2 = nn.Conv1d(out_channels, out_channels, kernel_size, stride, padding, bias=False,
                               padding_mode='circular')
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        identity = x
        x = self.relu(self.bn1(x))
        x = self.conv1(x)
        x = self.relu(self.bn2(x))
        x = self.conv2(x)
        x = x + identity
        return x


class Resnet(nn.Module):
    r"""The general form of the architecture can be described as follows:

    x->[Conv-[ResBlock]^m-BN-ReLU-Down]^n->y

    In other words:

            bn-relu-conv-bn-relu-conv                        bn-
           /                         \                      /
    x->conv --------------------------(+)-bn-relu-down-> conv ----
    """

    def __init__(self, output_size=1, n_channels=3, is_eva=False, resnet_version=1, epoch_len=10, is_mtl=False,
                 is_simclr=False):
        super(Resnet, self).__init__()

        # Architecture definition. Each tuple defines
        # a basic Resnet layer Conv-[ResBlock]^m]-BN-ReLU-Down
        # isEva: change the classifier to two FC with ReLu
        # For example, (64, 5, 1, 5, 3, 1) means:
        # - 64 convolution filters
        # - kernel size of 5
        # - 1 residual block (ResBlock)
        # - ResBlock's kernel size of 5
        # - downsampling factor of 3
        # - downsampling filter order of 1
        # In the below, note that 3*3*5*5*4 = 900 (input size)
        if resnet_version == 1:
            if epoch_len == 5:
                cgf = [(64, 5, 2, 5, 2, 2), (128, 5, 2, 5, 2, 2), (256, 5, 2, 5, 3, 1), (256, 5, 2, 5, 3, 1),
                       (512, 5, 0, 5, 3, 1)]
            elif epoch_len == 10:
                cgf = [(64, 5, 2, 5, 2, 2), (128, 5, 2, 5, 2, 2), (256, 5, 2, 5, 5, 1), (512, 5, 2, 5, 5, 1),
                       (1024, 5, 0, 5, 3, 1)]
            else:
                cgf = [(64, 5, 2, 5, 3, 1), (128, 5, 2, 5, 3, 1), (256, 5, 2, 5, 5, 1), (512, 5, 2, 5, 5, 1),
                       (1024, 5, 0, 5, 4, 0)]
        else:
            cgf = [(64, 5, 2, 5, 3, 1), (64, 5, 2, 5, 3, 1), (128, 5, 2, 5, 5, 1), (128, 5, 2, 5, 5, 1),
                   (256, 5, 2, 5, 4, 0)]
        in_channels = n_channels
        feature_extractor = nn.Sequential()
        for i, layer_params in enumerate(cgf):
            out_channels, conv_kernel_size, n_resblocks, resblock_kernel_size, downfactor, downorder = layer_params
            feature_extractor.add_module(
                f'layer{i + 1}',
                Resnet.make_layer(in_channels, out_channels, conv_kernel_size, n_resblocks, resblock_kernel_size,
                                  downfactor, downorder),
            )
            in_channels = out_channels

        self.feature_extractor = feature_extractor
        self.is_mtl = is_mtl

        # Classifier input size = last out_channels in previous layer
        if is_eva:
            self.classifier = EvaClassifier(input_size=out_channels, output_size=output_size)
        elif is_mtl:
            self.aot_h = Classifier(input_size=out_channels, output_size=output_size)
            self.scale_h = Classifier(input_size=out_channels, output_size=output_size)
            self.permute_h = Classifier(input_size=out_channels, output_size=output_size)
            self.time_w_h = Classifier(input_size=out_channels, output_size=output_size)
        elif is_simclr:
            self.classifier = ProjectionHead(input_size=out_channels, encoding_size=output_size)

        weight_init(self)

    @staticmethod
    def make_layer(in_channels, out_channels, conv_kernel_size, n_resblocks, resblock_kernel_size, downfactor,
                   downorder=1):
        r"""Basic layer in Resnets:

        x->[Conv-[ResBlock]^m-BN-ReLU-Down]->

        In other words:

                bn-relu-conv-bn-relu-conv
               /                         \
        x->conv --------------------------(+)-bn-relu-down->
        """

        # Check kernel sizes make sense (only odd numbers are supported)
        assert conv_kernel_size % 2, 'Only odd number for conv_kernel_size supported'
        assert resblock_kernel_size % 2, 'Only odd number for resblock_kernel_size supported'

        # Figure out correct paddings
        conv_padding = int((conv_kernel_size - 1) / 2)
        resblock_padding = int((resblock_kernel_size - 1) / 2)

        modules = [nn.Conv1d(in_channels, out_channels, conv_kernel_size, 1, conv_padding, bias=False,
                             padding_mode='circular')]

        for i in range(n_resblocks):
            modules.append(ResBlock(out_channels, out_channels, resblock_kernel_size, 1, resblock_padding))

        modules.append(nn.BatchNorm1d(out_channels))
        modules.append(nn.ReLU(True))
        modules.append(Downsample(out_channels, downfactor, downorder))

        return nn.Sequential(*modules)

    def forward(self, x):
        feats = self.feature_extractor(x)

        if self.is_mtl:
            aot_y = self.aot_h(feats.view(x.shape[0], -1))
            scale_y = self.scale_h(feats.view(x.shape[0], -1))
            permute_y = self.permute_h(feats.view(x.shape[0], -1))
            time_w_h = self.time_w_h(feats.view(x.shape[0], -1))
            return aot_y, scale_y, permute_y, time_w_h
        else:
            y = self.classifier(feats.view(x.shape[0], -1))
            return y


class ProjectionHead(nn.Module):
    def __init__(self, input_size=1024, encoding_size=256):
        super(ProjectionHead, self).__init__()
        self.linear1 = torch.nn.Linear(input_size, input_size)
        self.linear2 = torch.nn.Linear(input_size, encoding_size)

    def forward(self, x):
        x = F.relu(self.linear1(x))
        return self.linear2(x)


def weight_init(self, mode='fan_out', nonlinearity='relu'):
    for m in self.modules():
        if isinstance(m, (nn.Conv1d, nn.Conv2d)):
            nn.init.kaiming_normal_(m.weight, mode=mode, nonlinearity=nonlinearity)
        elif isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            nn.init.constant_(m.weight, 1)
            nn.init.constant_(m.bias, 0)
