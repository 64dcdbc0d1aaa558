import torch
from torch import nn
import torch.nn.functional as F

import model.resnet as models
import model.vgg as vgg_models
from model.PFENet import Weighted_GAP, get_vgg16_layer


def calc_distance(f, c):
    """squared euclidean distance between pixel features f [N, C, L] and centroids c [N, C, K]"""
    f_norm = (f ** 2).sum(1, keepdim=True)            # N, 1, L
    c_norm = (c ** 2).sum(1, keepdim=True)            # N, 1, K
    dist = f_norm.transpose(1, 2) + c_norm - 2 * torch.bmm(f.transpose(1, 2), c)   # N, L, K
    return dist.clamp(min=0)


class SGC(nn.Module):
    """Superpixel-guided clustering: cluster masked support features into (at most) max_num prototypes.

    A CUDA-only SLIC implementation was used in early experiments; the version below is plain PyTorch.
    """
    def __init__(self, num_iter=10, max_num=5, eps=1e-8):
        super(SGC, self).__init__()
        self.num_iter = num_iter
        self.max_num = max_num
        self.eps = eps

    def forward(self, feat, mask, init_seed):
        """
        feat:      [C, H, W] support feature
        mask:      [1, H, W] support foreground mask (already resized to feat)
        init_seed: [max_num, 2] initial seed positions (y, x) sampled from the mask in the data loader
        """
        C, H, W = feat.shape
        num_fg = int(mask.sum().item())
        if num_fg == 0:
            return Weighted_GAP(feat.unsqueeze(0), mask.unsqueeze(0)).squeeze(-1)

        num_sp = max(1, min(self.max_num, num_fg // 16))
        if num_sp == 1:
            return Weighted_GAP(feat.unsqueeze(0), mask.unsqueeze(0)).squeeze(-1)

        # coordinate features
        yy = torch.arange(H, dtype=torch.float).cuda().view(H, 1).expand(H, W) / H
        xx = torch.arange(W, dtype=torch.float).cuda().view(1, W).expand(H, W) / W
        coord = torch.stack([yy, xx], dim=0)                    # 2, H, W
        feat_full = torch.cat([feat, coord], dim=0)             # C+2, H, W

        fg_index = mask.view(-1).nonzero(as_tuple=False).squeeze(1)
        fg_feat = feat_full.view(C + 2, -1).index_select(1, fg_index).unsqueeze(0)     # 1, C+2, L

        seeds = init_seed[:num_sp].long()
        seed_index = (seeds[:, 0] * W + seeds[:, 1]).clamp(0, H * W - 1)
        centroids = feat_full.view(C + 2, -1).index_select(1, seed_index).unsqueeze(0)  # 1, C+2, K

        for _ in range(self.num_iter):
            dist = calc_distance(fg_feat, centroids)             # 1, L, K
            assign = F.softmax(-dist, dim=-1)                    # soft assignment
            centroids = torch.bmm(fg_feat, assign) / (assign.sum(1, keepdim=True) + self.eps)

        prototypes = centroids[0, :C, :]                        # C, K
        return prototypes.unsqueeze(-1)                         # C, K, 1


class GuidedPrototypeAllocation(nn.Module):
    """assign each query location its most similar support prototype"""
    def forward(self, query, prototypes):
        # query: [B, C, H, W]; prototypes: list (len B) of [C, K, 1]
        outs, sims = [], []
        for b in range(query.size(0)):
            q = query[b]                                           # C, H, W
            p = prototypes[b].squeeze(-1)                          # C, K
            cos = F.cosine_similarity(q.unsqueeze(1), p[:, :, None, None], dim=0)   # K, H, W
            best = cos.argmax(dim=0)                               # H, W
            guide = p[:, best.view(-1)].view(q.size(0), q.size(1), q.size(2))
            outs.append(guide)
            sims.append(cos.max(dim=0, keepdim=True)[0])
        return torch.stack(outs, 0), torch.stack(sims, 0)


class Model(nn.Module):
    def __init__(self, layers=50, classes=2, zoom_factor=8, criterion=nn.CrossEntropyLoss(ignore_index=255),
                 BatchNorm=nn.BatchNorm2d, pretrained=True, shot=1, vgg=False, max_sp=5):
        super(Model, self).__init__()
        assert layers in [50, 101]
        assert classes > 1
        self.zoom_factor = zoom_factor
        self.criterion = criterion
        self.shot = shot
        self.vgg = vgg
        models.BatchNorm = BatchNorm

        if self.vgg:
            vgg_models.BatchNorm = BatchNorm
            vgg16 = vgg_models.vgg16_bn(pretrained=pretrained)
            self.layer0, self.layer1, self.layer2, self.layer3, self.layer4 = get_vgg16_layer(vgg16)
        else:
            resnet = models.resnet50(pretrained=pretrained) if layers == 50 else models.resnet101(pretrained=pretrained)
            self.layer0 = nn.Sequential(resnet.conv1, resnet.bn1, resnet.relu1, resnet.conv2, resnet.bn2, resnet.relu2,
                                        resnet.conv3, resnet.bn3, resnet.relu3, resnet.maxpool)
            self.layer1, self.layer2, self.layer3, self.layer4 = resnet.layer1, resnet.layer2, resnet.layer3, resnet.layer4
            for n, m in self.layer3.named_modules():
                if 'conv2' in n:
                    m.dilation, m.padding, m.stride = (2, 2), (2, 2), (1, 1)
                elif 'downsample.0' in n:
                    m.stride = (1, 1)
            for n, m in self.layer4.named_modules():
                if 'conv2' in n:
                    m.dilation, m.padding, m.stride = (4, 4), (4, 4), (1, 1)
                elif 'downsample.0' in n:
                    m.stride = (1, 1)

        reduce_dim = 256
        fea_dim = 512 + 256 if self.vgg else 1024 + 512

        self.down_query = nn.Sequential(
            nn.Conv2d(fea_dim, reduce_dim, kernel_size=1, padding=0, bias=False),
            nn.ReLU(inplace=True),
            nn.Dropout2d(p=0.5))
        self.down_supp = nn.Sequential(
            nn.Conv2d(fea_dim, reduce_dim, kernel_size=1, padding=0, bias=False),
            nn.ReLU(inplace=True),
            nn.Dropout2d(p=0.5))
        self.init_merge = nn.Sequential(
            nn.Conv2d(reduce_dim * 2 + 1, reduce_dim, kernel_size=1, padding=0, bias=False),
            nn.ReLU(inplace=True))
        self.beta_conv = nn.Sequential(
            nn.Conv2d(reduce_dim, reduce_dim, kernel_size=3, padding=1, bias=False),
            nn.ReLU(inplace=True),
            nn.Conv2d(reduce_dim, reduce_dim, kernel_size=3, padding=1, bias=False),
            nn.ReLU(inplace=True))
        self.inner_cls = nn.Sequential(
            nn.Conv2d(reduce_dim, reduce_dim, kernel_size=3, padding=1, bias=False),
            nn.ReLU(inplace=True),
            nn.Dropout2d(p=0.1),
            nn.Conv2d(reduce_dim, classes, kernel_size=1))
        self.res1 = nn.Sequential(
            nn.Conv2d(reduce_dim, reduce_dim, kernel_size=1, padding=0, bias=False),
            nn.ReLU(inplace=True))
        self.res2 = nn.Sequential(
            nn.Conv2d(reduce_dim, reduce_dim, kernel_size=3, padding=1, bias=False),
            nn.ReLU(inplace=True),
            nn.Conv2d(reduce_dim, reduce_dim, kernel_size=3, padding=1, bias=False),
            nn.ReLU(inplace=True))
        self.cls = nn.Sequential(
            nn.Conv2d(reduce_dim, reduce_dim, kernel_size=3, padding=1, bias=False),
            nn.ReLU(inplace=True),
            nn.Dropout2d(p=0.1),
            nn.Conv2d(reduce_dim, classes, kernel_size=1))

        self.sgc = SGC(max_num=max_sp)
        self.gpa = GuidedPrototypeAllocation()

    def extract(self, img):
        with torch.no_grad():
            f0 = self.layer0(img)
            f1 = self.layer1(f0)
            f2 = self.layer2(f1)
            f3 = self.layer3(f2)
            f4 = self.layer4(f3)
            if self.vgg:
                f2 = F.interpolate(f2, size=(f3.size(2), f3.size(3)), mode='bilinear', align_corners=True)
        return f2, f3, f4

    def forward(self, x, s_x, s_y, s_seed, y=None):
        x_size = x.size()
        h = int((x_size[2] - 1) / 8 * self.zoom_factor + 1)
        w = int((x_size[3] - 1) / 8 * self.zoom_factor + 1)
        bs = x_size[0]

        q2, q3, _ = self.extract(x)
        query_feat = self.down_query(torch.cat([q3, q2], 1))

        # support prototypes (all shots pooled)
        proto_list = [[] for _ in range(bs)]
        for i in range(self.shot):
            mask = (s_y[:, i, :, :] == 1).float().unsqueeze(1)
            s2, s3, _ = self.extract(s_x[:, i, :, :, :])
            mask = F.interpolate(mask, size=(s3.size(2), s3.size(3)), mode='bilinear', align_corners=True)
            supp_feat = self.down_supp(torch.cat([s3, s2], 1))
            for b in range(bs):
                proto_list[b].append(self.sgc(supp_feat[b], mask[b], s_seed[b, i]))
        prototypes = [torch.cat(p, dim=1) for p in proto_list]       # each C, K*shot, 1

        guide_feat, prob_map = self.gpa(query_feat, prototypes)
        merge_feat = self.init_merge(torch.cat([query_feat, guide_feat, prob_map], 1))
        merge_feat = self.beta_conv(merge_feat) + merge_feat
        inner_out = self.inner_cls(merge_feat)

        query_feat = self.res1(merge_feat)
        query_feat = self.res2(query_feat) + query_feat
        out = self.cls(query_feat)

        if self.zoom_factor != 1:
            out = F.interpolate(out, size=(h, w), mode='bilinear', align_corners=True)
            inner_out = F.interpolate(inner_out, size=(h, w), mode='bilinear', align_corners=True)

        if self.training:
            main_loss = self.criterion(out, y.long())
            aux_loss = self.criterion(inner_out, y.long())
            return out.max(1)[1], main_loss, aux_loss
        else:
            return out
