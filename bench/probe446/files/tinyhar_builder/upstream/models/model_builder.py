import torch.nn as nn

from models.TinyHAR import TinyHAR_Model
from models.deepconvlstm import DeepConvLSTM
from models.Attend import AttendDiscriminate
from models.mcnn import MCNN


class model_builder(nn.Module):
    """
    Thin wrapper that builds one of the compared architectures from the merged (argparse + yaml) config
    and, optionally, a feature extractor in front of it.
    """
    def __init__(self, args, input_f_channel=None):
        super(model_builder, self).__init__()
        self.args = args
        if input_f_channel is None:
            f_in = self.args.c_in
        else:
            f_in = input_f_channel

        config = self.args.model_config
        scaling = self.args.filter_scaling_factor

        if self.args.model_type == 'tinyhar':
            self.model = TinyHAR_Model((1, 1, self.args.input_length, f_in),
                                       self.args.num_classes,
                                       filter_num=int(scaling * config['filter_num']),
                                       nb_conv_layers=config['nb_conv_layers'],
                                       filter_size=config['filter_size'],
                                       cross_channel_interaction_type=config['cross_channel_interaction_type'],
                                       cross_channel_aggregation_type=config['cross_channel_aggregation_type'],
                                       temporal_info_interaction_type=config['temporal_info_interaction_type'],
                                       temporal_info_aggregation_type=config['temporal_info_aggregation_type'],
                                       dropout=config['dropout'],
                                       activation=config['activation'])
            print('Build the TinyHAR model!')
        elif self.args.model_type == 'deepconvlstm':
            self.model = DeepConvLSTM((1, 1, self.args.input_length, f_in),
                                      self.args.num_classes,
                                      filter_scaling_factor=scaling,
                                      config=config)
            print('Build the DeepConvLSTM model!')
        elif self.args.model_type == 'attend':
            self.model = AttendDiscriminate((1, 1, self.args.input_length, f_in),
                                            self.args.num_classes,
                                            filter_scaling_factor=scaling,
                                            config=config)
            print('Build the AttendDiscriminate model!')
        elif self.args.model_type == 'mcnn':
            self.model = MCNN((1, 1, self.args.input_length, f_in),
                              self.args.num_classes,
                              filter_scaling_factor=scaling,
                              config=config)
            print('Build the MCNN model!')
        else:
            raise NotImplementedError('unknown model type {}'.format(self.args.model_type))

    def forward(self, x):
        y = self.model(x)
        return y
