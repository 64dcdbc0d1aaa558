import os
import numpy as np
import torch
from nowcasting.models import nowcastnet


class Model(object):
    def __init__(self, configs):
        self.configs = configs
        networks_map = {
            'NowcastNet': nowcastnet.Net,
        }
        self.data_frame = []

        if configs.model_name in networks_map:
            Network = networks_map[configs.model_name]
            self.network = Network(configs).to(configs.device)
        else:
            raise ValueError('Name of network unknown %s' % configs.model_name)

    def load(self, checkpoint_path):
        print('load model:', checkpoint_path)
        if os.path.exists(checkpoint_path):
            # the released checkpoints were saved from a CUDA model
            stats = torch.load(checkpoint_path)
            self.network.load_state_dict(stats)
        else:
            print('No model found at {}, using random weights'.format(checkpoint_path))

    def save(self, checkpoint_path):
        stats = self.network.state_dict()
        torch.save(stats, checkpoint_path)
        print('save model to', checkpoint_path)

    def test(self, frames):
        frames_tensor = torch.FloatTensor(frames).to(self.configs.device)
        if next(self.network.parameters()).dtype == torch.float16:
            frames_tensor = frames_tensor.half()
        self.network.eval()
        with torch.no_grad():
            next_frames = self.network(frames_tensor)
        return next_frames.detach().float().cpu().numpy()
