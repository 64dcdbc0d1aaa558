import os
from yacs.config import CfgNode as CN

_C = CN()
_C.ckpt_root = 'ckpt'
_C.cuda = True
_C.cuda_benchmark = True
_C.num_workers = 8
_C.dataset = CN()
_C.dataset.name = 'PanoCorBonDataset'
_C.dataset.common_kwargs = CN(new_allowed=True)
_C.dataset.train_kwargs = CN(new_allowed=True)
_C.dataset.valid_kwargs = CN(new_allowed=True)

_C.training = CN()
_C.training.epoch = 300
_C.training.batch_size = 4
_C.training.save_every = 100
_C.training.optim = 'Adam'
_C.training.optim_lr = 1e-4
_C.training.optim_betas = (0.9, 0.999)
_C.training.weight_decay = 0.0
_C.training.wd_group_mode = 'bn and bias'
_C.training.optim_milestons = [0.5, 0.75]
_C.training.optim_gamma = 0.2
_C.training.optim_poly_gamma = -1.0
_C.training.fix_encoder_bn = False
_C.training.amp = False

_C.model = CN()
_C.model.file = 'lib.model.HorizonNet'
_C.model.modelclass = 'HorizonNet'
_C.model.kwargs = CN(new_allowed=True)


def update_config(cfg, args):
    cfg.defrost()
    cfg.merge_from_file(args.cfg)
    cfg.merge_from_list(args.opts)
    cfg.freeze()
    return cfg


def infer_exp_id(cfg_path):
    cfg_path = cfg_path.split('config/')[-1]
    if cfg_path.endswith('.yaml'):
        cfg_path = cfg_path[:-len('.yaml')]
    return '_'.join(cfg_path.split('/'))


config = _C
