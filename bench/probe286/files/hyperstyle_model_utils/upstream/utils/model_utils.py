import torch
from argparse import Namespace
from models.stylegan2.model import Generator
from models.hyperstyle import HyperStyle
from models.encoders.e4e import e4e


def load_model(checkpoint_path, device='cuda', update_opts=None, is_restyle_encoder=False):
    ckpt = torch.load(checkpoint_path, map_location='cpu')
    opts = ckpt['opts']

    opts['checkpoint_path'] = checkpoint_path
    opts['load_w_encoder'] = True
    # latent_avg is moved to opts.device inside the model constructors
    opts['device'] = device

    if 'w_encoder_checkpoint_path' not in opts:
        opts['w_encoder_checkpoint_path'] = None
    if 'w_encoder_type' not in opts:
        opts['w_encoder_type'] = 'WEncoder'

    if update_opts is not None:
        if type(update_opts) == dict:
            opts.update(update_opts)
        else:
            opts.update(vars(update_opts))

    opts = Namespace(**opts)

    if is_restyle_encoder:
        net = e4e(opts)
    else:
        net = HyperStyle(opts)

    net.eval()
    net.to(device)
    return net, opts


def load_generator(checkpoint_path, output_size=1024, device='cuda'):
    print(f"Loading generator from checkpoint: {checkpoint_path}")
    generator = Generator(output_size, 512, 8, channel_multiplier=2)
    ckpt = torch.load(checkpoint_path, map_location='cpu')
    generator.load_state_dict(ckpt['g_ema'])
    generator.eval()
    generator.to(device)
    return generator


def get_stylegan_generator(net):
    """Returns the (possibly weight-shifted) StyleGAN2 decoder wrapped by a HyperStyle/e4e net."""
    if hasattr(net, 'module'):
        net = net.module
    return net.decoder


def count_parameters(model, trainable_only=True):
    if trainable_only:
        return sum(p.numel() for p in model.parameters() if p.requires_grad)
    return sum(p.numel() for p in model.parameters())
