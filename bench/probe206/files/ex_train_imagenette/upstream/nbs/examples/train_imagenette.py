from fastai.basics import *
from fastai.vision.all import *
from fastai.callback.all import *
from fastai.distributed import *
from fastprogress import fastprogress
from torchvision.models import *
from fastai.vision.models.xresnet import *
from fastai.callback.mixup import *
from fastcore.script import *

torch.backends.cudnn.benchmark = True
fastprogress.MAX_COLS = 80

def get_dls(size, woof, bs, sh=0., workers=None, device=None):
    if size<=224: path = URLs.IMAGEWOOF_320 if woof else URLs.IMAGENETTE_320
    else        : path = URLs.IMAGEWOOF     if woof else URLs.IMAGENETTE
    source = untar_data(path)
    if workers is None: workers = min(8, num_cpus())
    batch_tfms = [Normalize.from_stats(*imagenet_stats)]
    if sh: batch_tfms.append(RandomErasing(p=0.3, max_count=3, sh=sh))
    dblock = DataBlock(blocks=(ImageBlock, CategoryBlock),
                       splitter=GrandparentSplitter(valid_name='val'),
                       get_items=get_image_files, get_y=parent_label,
                       item_tfms=[RandomResizedCrop(size, min_scale=0.35), FlipItem(0.5)],
                       batch_tfms=batch_tfms)
    return dblock.dataloaders(source, path=source, bs=bs, num_workers=workers, device=device)

def _opt_func(opt, mom, sqrmom, eps, fused):
    if opt=='adam' : return partial(Adam, mom=mom, sqr_mom=sqrmom, eps=eps)
    if opt=='rms'  : return partial(RMSProp, sqr_mom=sqrmom)
    if opt=='sgd'  : return partial(SGD, mom=mom)
    if opt=='ranger': return partial(ranger, mom=mom, sqr_mom=sqrmom, eps=eps, beta=0.)
    if opt=='adamw_torch':
        # native torch optimizer wrapped for fastai; fused kernels are much faster on A100
        return partial(OptimWrapper, opt=partial(torch.optim.AdamW, betas=(mom, sqrmom), eps=eps, fused=fused))
    raise ValueError(f"unknown optimizer {opt}")

@call_parse
def main(
    woof:   Param("Use imagewoof (otherwise imagenette)", int)=0,
    lr:     Param("Learning rate", float)=1e-2,
    size:   Param("Size (px: 128,192,256)", int)=128,
    sqrmom: Param("sqr_mom", float)=0.99,
    mom:    Param("Momentum", float)=0.9,
    eps:    Param("epsilon", float)=1e-6,
    wd:     Param("Weight decay", float)=1e-2,
    epochs: Param("Number of epochs", int)=5,
    bs:     Param("Batch size", int)=64,
    mixup:  Param("Mixup", float)=0.,
    opt:    Param("Optimizer (adam,rms,sgd,ranger,adamw_torch)", str)='ranger',
    fused:  Param("Use fused torch optimizer kernels", store_true)=False,
    arch:   Param("Architecture", str)='xresnet50',
    sh:     Param("Random erase max proba", float)=0.,
    sa:     Param("Self-attention", store_true)=False,
    sym:    Param("Symmetry for self-attention", int)=0,
    beta:   Param("SAdam softplus beta", float)=0.,
    act_fn: Param("Activation function", str)='Mish',
    fp16:   Param("Use mixed precision training", store_true)=False,
    pool:   Param("Pooling method", str)='AvgPool',
    dump:   Param("Print model; don't train", int)=0,
    runs:   Param("Number of times to repeat training", int)=1,
    meta:   Param("Metadata (ignored)", str)='',
    workers:   Param("Number of workers", int)=None,
):
    "Training of Imagenette. Call with `python -m fastai.launch` for distributed training"
    if opt=='adam' : opt_func = partial(Adam, mom=mom, sqr_mom=sqrmom, eps=eps)
    opt_func = _opt_func(opt, mom, sqrmom, eps, fused)

    n_gpu = torch.cuda.device_count()
    gpu = None if n_gpu==0 else rank_distrib()
    if gpu is not None: torch.cuda.set_device(gpu)
    device = torch.device('cuda', gpu) if gpu is not None else torch.device('cpu')
    print(f'rank {rank_distrib()} of {num_distrib()} using {device} ({n_gpu} visible GPUs)')

    dls = rank0_first(get_dls, size, woof, bs, sh=sh, workers=workers, device=device)
    if not gpu: print(f'epochs: {epochs}; lr: {lr}; size: {size}; sqrmom: {sqrmom}; mom: {mom}; eps: {eps}')
    m,act_fn,pool = [globals()[o] for o in (arch,act_fn,pool)]

    for run in range(runs):
        print(f'Run: {run}')
        learn = Learner(dls, m(n_out=10, act_cls=act_fn, sa=sa, sym=sym, pool=pool), opt_func=opt_func, \
                metrics=[accuracy,top_k_accuracy], loss_func=LabelSmoothingCrossEntropy())
        if dump: print(learn.model); exit()
        if fp16: learn = learn.to_fp16()
        cbs = MixUp(mixup) if mixup else []
        n_gpu = torch.cuda.device_count() if gpu is None else 1

        # Both distributed and parallel training are supported here.
        # distributed: run with `python -m fastai.launch`; parallel: one process, all visible GPUs
        ctx = learn.parallel_ctx if gpu is None and n_gpu else learn.distrib_ctx

        with partial(ctx, gpu)(): # distributed traing requires "-m fastai.launch"
            print(f"Training in {ctx.__name__} context on GPU {gpu if gpu is not None else list(range(n_gpu))}")
            learn.fit_flat_cos(epochs, lr, wd=wd, cbs=cbs)

        if not rank_distrib():
            print(f"peak memory: {torch.cuda.max_memory_allocated(device)/2**30:.2f} GiB")
            learn.save(f'{arch}_{size}_run{run}')
