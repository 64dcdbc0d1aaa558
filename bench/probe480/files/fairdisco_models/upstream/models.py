"""Backbones and the three-branch FairDisCo network.

branch_1: disease classifier on the shared representation
branch_2: skin-type (Fitzpatrick) classifier, trained adversarially via the confusion loss
branch_3: projection head for the supervised contrastive loss
"""
import torch
import torch.nn as nn
import torchvision


class Identity(nn.Module):
    def forward(self, x):
        return x


def _make_backbone(name, pretrained=True):
    if name == 'vgg16':
        net = torchvision.models.vgg16(pretrained=pretrained)
        feat_dim = net.classifier[6].in_features
        net.classifier[6] = Identity()
    elif name == 'resnet18':
        net = torchvision.models.resnet18(pretrained=pretrained)
        feat_dim = net.fc.in_features
        net.fc = Identity()
    elif name == 'resnet50':
        net = torchvision.models.resnet50(pretrained=pretrained)
        feat_dim = net.fc.in_features
        net.fc = Identity()
    elif name == 'densenet121':
        net = torchvision.models.densenet121(pretrained=pretrained)
        feat_dim = net.classifier.in_features
        net.classifier = Identity()
    else:
        raise NotImplementedError('backbone {} is not supported'.format(name))
    return net, feat_dim


class Network(nn.Module):
    def __init__(self, choice='resnet18', output_size=[114, 6, 6, 128], pretrained=True):
        """
        output_size: [n_disease_classes, n_skin_types (branch_2), n_skin_types (confusion), proj_dim]
        """
        super(Network, self).__init__()
        self.choice = choice
        self.feature_extractor, feat_dim = _make_backbone(choice, pretrained)

        self.branch_1 = nn.Sequential(
            nn.Linear(feat_dim, 256),
            nn.ReLU(),
            nn.Dropout(0.4),
            nn.Linear(256, output_size[0]),
        )
        self.branch_2 = nn.Sequential(
            nn.Linear(feat_dim, 256),
            nn.ReLU(),
            nn.Dropout(0.4),
            nn.Linear(256, output_size[1]),
        )
        self.branch_3 = nn.Sequential(
            nn.Linear(feat_dim, feat_dim),
            nn.ReLU(inplace=True),
            nn.Linear(feat_dim, output_size[3]),
        )

    def forward(self, x):
        feature = self.feature_extractor(x)
        out_1 = self.branch_1(feature)
        out_2 = self.branch_2(feature)
        # confusion loss acts on the skin-type head applied to the *same* features,
        # but its gradient only flows into the shared extractor
        out_3 = self._confusion_logits(feature)
        out_4 = nn.functional.normalize(self.branch_3(feature), dim=1)
        return [out_1, out_2, out_3, out_4]

    def _confusion_logits(self, feature):
        # freeze branch_2 weights for this pass so that the confusion loss only
        # updates the feature extractor
        w1, b1 = self.branch_2[0].weight.detach(), self.branch_2[0].bias.detach()
        w2, b2 = self.branch_2[3].weight.detach(), self.branch_2[3].bias.detach()
        h = nn.functional.relu(nn.functional.linear(feature, w1, b1))
        return nn.functional.linear(h, w2, b2)


class Network_Base(nn.Module):
    """Plain classifier used for the BASE / reweighting baselines."""

    def __init__(self, choice='vgg16', output_size=114, pretrained=True):
        super(Network_Base, self).__init__()
        self.feature_extractor, feat_dim = _make_backbone(choice, pretrained)
        self.classifier = nn.Sequential(
            nn.Linear(feat_dim, 256),
            nn.ReLU(),
            nn.Dropout(0.4),
            nn.Linear(256, output_size),
            nn.LogSoftmax(dim=1),
        )

    def forward(self, x):
        return self.classifier(self.feature_extractor(x))


class GradReverse(torch.autograd.Function):
    """Gradient reversal used by the ATRB (attribute-aware) baseline."""

    @staticmethod
    def forward(ctx, x, lambd):
        ctx.lambd = lambd
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.neg() * ctx.lambd, None


def grad_reverse(x, lambd=1.0):
    return GradReverse.apply(x, lambd)


class Network_ATRB(nn.Module):
    def __init__(self, choice='resnet18', output_size=[114, 6], pretrained=True, lambd=1.0):
        super(Network_ATRB, self).__init__()
        self.lambd = lambd
        self.feature_extractor, feat_dim = _make_backbone(choice, pretrained)
        self.classifier = nn.Linear(feat_dim, output_size[0])
        self.discriminator = nn.Sequential(
            nn.Linear(feat_dim, 256),
            nn.ReLU(),
            nn.Linear(256, output_size[1]),
        )

    def forward(self, x):
        f = self.feature_extractor(x)
        return [self.classifier(f), self.discriminator(grad_reverse(f, self.lambd))]
