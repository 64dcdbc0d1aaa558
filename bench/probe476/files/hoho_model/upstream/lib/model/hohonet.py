import numpy as np
import importlib

import torch
import torch.nn as nn
import torch.nn.functional as F

from . import backbone
from . import horizon_compression
from . import horizon_refinement
from . import modality
from .utils import wrap_lr_pad


'''
HoHoNet
'''
class HoHoNet(nn.Module):
    def __init__(self, emb_dim=256, input_hw=None, input_norm='imagenet', pretrain='',
                 backbone_config={'module': 'Resnet'},
                 decode_config={'module': 'EfficientHeightReduction'},
                 refine_config={'module': 'TransEn'},
                 modalities_config={}):
        super(HoHoNet, self).__init__()
        self.input_hw = input_hw
        if input_norm == 'imagenet':
            self.register_buffer('x_mean', torch.FloatTensor(np.array([0.485, 0.456, 0.406])[None, :, None, None]))
            self.register_buffer('x_std', torch.FloatTensor(np.array([0.229, 0.224, 0.225])[None, :, None, None]))
        elif input_norm.startswith('ugscnn'):
            self.register_buffer('x_mean', torch.FloatTensor(np.array([0.4974898, 0.47918808, 0.42809588, 1.0961773])[None, :, None, None]))
            self.register_buffer('x_std', torch.FloatTensor(np.array([0.23762763, 0.23354423, 0.23272438, 0.75536704])[None, :, None, None]))
        else:
            raise NotImplementedError

        # Encoder
        Encoder = getattr(backbone, backbone_config['module'])
        Encoder_kwargs = backbone_config.get('kwargs', {})
        self.encoder = Encoder(**Encoder_kwargs)

        # Horizon compression convert backbone features to horizontal feature
        # I name the variable as decoder during development and forgot to fix :P
        Decoder = getattr(horizon_compression, decode_config['module'])
        Decoder_kwargs = decode_config.get('kwargs', {})
        self.decoder = Decoder(self.encoder.out_channels, self.encoder.feat_heights, **Decoder_kwargs)

        # Horizontal feature refinement module
        Refinement = getattr(horizon_refinement, refine_config['module'])
        Refinement_kwargs = refine_config.get('kwargs', {})
        self.horizon_refine = Refinement(self.decoder.out_channels, **Refinement_kwargs)

        # Output modalities
        self.modalities = nn.ModuleList([
            getattr(modality, key)(self.horizon_refine.out_channels, **config)
            for key, config in modalities_config.items()
        ])

        # Load pretrained
        if pretrain:
            print(f'Load pretrained {pretrain}')
            st = torch.load(pretrain, map_location='cpu')
            missing_key = self.state_dict().keys() - st.keys()
            unknown_key = st.keys() - self.state_dict().keys()
            print('Missing key:', missing_key)
            print('Unknown key:', unknown_key)
            self.load_state_dict(st, strict=False)

    def extract_feat(self, x):
        ''' Map the input RGB to the shared latent (by all modalities) '''
        if self.input_hw:
            x = F.interpolate(x, size=self.input_hw, mode='bilinear', align_corners=False)
        x = (x - self.x_mean) / self.x_std
        # encoder
        conv_list = self.encoder(x)
        # decoder to get horizontal feature
        feat = self.decoder(conv_list)
        # refine feat
        feat = self.horizon_refine(feat)
        return feat

    def call_modality(self, method, *feed_args, **feed_kwargs):
        ''' Calling the method implemented in each modality and merge the results '''
        output_dict = {}
        for m in self.modalities:
            curr_dict = getattr(m, method)(*feed_args, **feed_kwargs)
            assert len(output_dict.keys() & curr_dict.keys()) == 0, 'Key collision for different modalities'
            output_dict.update(curr_dict)
        return output_dict

    def forward(self, x):
        feat = self.extract_feat(x)
        results = self.call_modality('forward', feat)
        return results

    def infer(self, x):
        feat = self.extract_feat(x)
        results = self.call_modality('infer', feat)
        return results

    def compute_losses(self, batch):
        feat = self.extract_feat(batch['x'])
        losses = self.call_modality('compute_losses', feat, batch=batch)
        losses['total'] = sum(v for k, v in losses.items() if k.startswith('total'))
        return losses


class DepthBase(nn.Module):
    ''' Shared DCT / linear basis helpers used by the depth modality '''
    def __init__(self, basis='dct', n_components=64, out_h=512):
        super().__init__()
        self.basis = basis
        self.n_components = n_components
        self.out_h = out_h
        if basis == 'dct':
            self.register_buffer('basis_mat', dct_basis(n_components, out_h))
        elif basis == 'linear':
            self.register_buffer('basis_mat', torch.eye(out_h)[:n_components])
        else:
            raise NotImplementedError(basis)

    def reconstruct(self, coef):
        # coef: [b, n_components, w] -> [b, 1, out_h, w]
        return torch.einsum('bkw,kh->bhw', coef, self.basis_mat).unsqueeze(1)


def dct_basis(n_components, n):
    n_index = np.arange(n)
    k_index = np.arange(n_components)
    basis = np.cos(np.pi / n * (n_index[None, :] + 0.5) * k_index[:, None])
    basis[0] *= 1 / np.sqrt(2)
    basis *= np.sqrt(2 / n)
    return torch.FloatTensor(basis)
