from fastai.script import *
from fastai.vision import *
from fastai.vision.models.wrn import wrn_22
from fastai.distributed import *
import torch.distributed as dist

torch.backends.cudnn.benchmark = True


class BasicBlock(nn.Module):
    "CIFAR ResNet basic block (He et al. 2016, option A shortcut)"
    def __init__(self, ni, nf, stride=1):
        super().__init__()
        self.conv1 = conv2d(ni, nf, 3, stride=stride, bias=False)
        self.bn1 = nn.BatchNorm2d(nf)
        self.conv2 = conv2d(nf, nf, 3, bias=False)
        self.bn2 = nn.BatchNorm2d(nf)
        self.shortcut = noop
        if stride != 1 or ni != nf:
            self.shortcut = lambda x: F.pad(x[:, :, ::2, ::2], (0, 0, 0, 0, (nf-ni)//2, (nf-ni)//2))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))

def resnet_cifar(depth=56, num_classes=10):
    n = (depth - 2) // 6
    layers = [conv2d(3, 16, 3, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True)]
    ni = 16
    for i, nf in enumerate([16, 32, 64]):
        for j in range(n):
            layers.append(BasicBlock(ni, nf, stride=2 if (j == 0 and i > 0) else 1))
            ni = nf
    layers += [nn.AdaptiveAvgPool2d(1), Flatten(), nn.Linear(64, num_classes)]
    model = nn.Sequential(*layers)
    for m in model.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)): nn.init.kaiming_normal_(m.weight)
    return model

def evaluate(learn, tta=False):
    "Top-1 accuracy on the test set, optionally with flip TTA"
    if tta:
        preds, targs = learn.TTA(ds_type=DatasetType.Valid)
    else:
        preds, targs = learn.get_preds(ds_type=DatasetType.Valid)
    return accuracy(preds, targs).item()

@call_parse
def main( gpu:Param("GPU to run on", str)=None,
          woof: Param("Use imagewoof (otherwise imagenette)", int)=0,
          lr: Param("Learning rate", float)=3e-3,
          bs: Param("Batch size per GPU", int)=512,
          epochs: Param("Number of epochs", int)=30,
          mixup: Param("Mixup alpha (0 to disable)", float)=0.,
          fp16: Param("Mixed precision", int)=1,
          arch: Param("wrn_22 or resnet56", str)='wrn_22' ):
    """Distributed training of CIFAR-10.
    Fastest speed is if you run as follows:
        python -m fastai.launch train_cifar.py"""
    gpu = setup_distrib(gpu)
    n_gpus = num_distrib() or 1
    workers = min(16, num_cpus()//n_gpus)
    if gpu is None: gpu = 0

    path = url2path(URLs.CIFAR)
    if not path.exists():
        # only rank 0 downloads, the others wait at the barrier
        if gpu == 0: untar_data(URLs.CIFAR)
        if n_gpus > 1: dist.barrier()
    ds_tfms = ([*rand_pad(4, 32), flip_lr(p=0.5)], [])
    data = ImageDataBunch.from_folder(path, valid='test', ds_tfms=ds_tfms, bs=bs, num_workers=workers,
                                      device=torch.device('cuda', gpu)).normalize(cifar_stats)
    model = wrn_22() if arch == 'wrn_22' else resnet_cifar(56)
    learn = Learner(data, model, metrics=accuracy)
    if mixup: learn = learn.mixup(alpha=mixup)
    if fp16: learn = learn.to_fp16()
    if n_gpus > 1:
        learn = learn.to_distributed(gpu)
    else:
        learn.model = learn.model.cuda()
    learn.fit_one_cycle(epochs, lr, wd=0.1, div_factor=10, pct_start=0.5)
    if gpu == 0:
        learn.save(f'cifar10_{arch}_{epochs}ep')
        print(f"test accuracy {evaluate(learn):.4f} / with TTA {evaluate(learn, tta=True):.4f}")
        print(f"done; peak memory {torch.cuda.max_memory_allocated()/2**30:.2f}GB")
