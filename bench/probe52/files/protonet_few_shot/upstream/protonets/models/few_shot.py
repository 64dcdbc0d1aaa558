import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable

from protonets.models import register_model

from .utils import euclidean_dist


class Flatten(nn.Module):
    def __init__(self):
        super(Flatten, self).__init__()

    def forward(self, x):
        return x.view(x.size(0), -1)


class Protonet(nn.Module):
    def __init__(self, encoder):
        super(Protonet, self).__init__()

        self.encoder = encoder

    def loss(self, sample):
        xs = Variable(sample['xs'])  # support
        xq = Variable(sample['xq'])  # query

        n_class = xs.size(0)
        assert xq.size(0) == n_class
        n_support = xs.size(1)
        n_query = xq.size(1)

        target_inds = torch.arange(0, n_class).view(n_class, 1, 1).expand(n_class, n_query, 1).long()
        target_inds = Variable(target_inds, requires_grad=False)

        if xq.is_cuda:
            target_inds = target_inds.cuda()

        x = torch.cat([xs.view(n_class * n_support, *xs.size()[2:]),
                       xq.view(n_class * n_query, *xq.size()[2:])], 0)

        z = self.encoder.forward(x)
        z_dim = z.size(-1)

        z_proto = z[:n_class*n_support].view(n_class, n_support, z_dim).mean(1)
        zq = z[n_class*n_support:]

        dists = euclidean_dist(zq, z_proto)

        log_p_y = F.log_softmax(-dists, dim=1).view(n_class, n_query, -1)

        loss_val = -log_p_y.gather(2, target_inds).squeeze().view(-1).mean()

        _, y_hat = log_p_y.max(2)
        acc_val = torch.eq(y_hat, target_inds.squeeze()).float().mean()

        return loss_val, {
            'loss': loss_val.item(),
            'acc': acc_val.item()
        }

    def embed(self, x):
        """Embeds a batch of images; used by the evaluation and t-SNE scripts."""
        with torch.no_grad():
            return self.encoder.forward(x)

    def class_prototypes(self, xs):
        """Prototypes for a support set of shape (n_class, n_support, C, H, W)."""
        n_class, n_support = xs.size(0), xs.size(1)
        z = self.embed(xs.view(n_class * n_support, *xs.size()[2:]))
        return z.view(n_class, n_support, -1).mean(1)

    def predict(self, xs, xq):
        """Nearest-prototype classification of a flat batch of queries."""
        z_proto = self.class_prototypes(xs)
        zq = self.embed(xq)
        dists = euclidean_dist(zq, z_proto)
        return (-dists).argmax(1)


def conv_block(in_channels, out_channels):
    return nn.Sequential(
        nn.Conv2d(in_channels, out_channels, 3, padding=1),
        nn.BatchNorm2d(out_channels),
        nn.ReLU(),
        nn.MaxPool2d(2)
    )


@register_model('protonet_conv')
def load_protonet_conv(**kwargs):
    x_dim = kwargs['x_dim']
    hid_dim = kwargs['hid_dim']
    z_dim = kwargs['z_dim']

    encoder = nn.Sequential(
        conv_block(x_dim[0], hid_dim),
        conv_block(hid_dim, hid_dim),
        conv_block(hid_dim, hid_dim),
        conv_block(hid_dim, z_dim),
        Flatten()
    )

    return Protonet(encoder)


def load_pretrained(model_path, use_cuda=False):
    """Loads a whole pickled Protonet written by run_train.py.

    run_train.py moves the model to the CPU before ``torch.save`` so the file
    can be opened on machines without a GPU.
    """
    model = torch.load(model_path)
    if use_cuda:
        model = model.cuda()
    model.eval()
    return model


def episode_to_device(sample, use_cuda):
    """Moves the tensors of an episode dict produced by the data loader."""
    out = {}
    for k, v in sample.items():
        if torch.is_tensor(v) and use_cuda:
            out[k] = v.cuda(non_blocking=True)
        else:
            out[k] = v
    return out


def count_parameters(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
