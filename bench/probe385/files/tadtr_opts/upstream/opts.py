# ------------------------------------------------------------------------
# TadTR: End-to-end Temporal Action Detection with Transformer
# ------------------------------------------------------------------------
'''Default configurations. Override them with a yaml file (--cfg) or
with KEY VALUE pairs on the command line.'''
from easydict import EasyDict
import yaml


cfg = EasyDict()

# ---- Dataset ----
cfg.dataset_name = 'thumos14'
cfg.feature = 'i3d2s'
cfg.feature_dim = 2048
cfg.binary = False
cfg.num_classes = 20
cfg.online_slice = False
cfg.slice_len = 128
cfg.slice_overlap = 0.75
cfg.test_slice_overlap = 0.25
cfg.test_set = 'val'

# ---- Output ----
cfg.output_dir = ''

# ---- Model: transformer ----
cfg.enc_layers = 2
cfg.dec_layers = 4
cfg.enc_n_points = 4
cfg.dec_n_points = 4
cfg.dim_feedforward = 1024
cfg.hidden_dim = 256
cfg.dropout = 0.1
cfg.nheads = 8
cfg.num_queries = 40
cfg.position_embedding = 'sine'
cfg.num_feature_levels = 1
cfg.aux_loss = True
cfg.with_box_refine = True
# backend of temporal deformable attention: 'cuda' (compiled op) or 'pytorch'
cfg.dfm_att_backend = 'cuda'

# ---- Model: actionness regression (RoIAlign1D) ----
cfg.act_reg = True
cfg.roi_size = 16
cfg.roi_extend_ratio = 0.25

# ---- Loss ----
cfg.cls_loss_coef = 2
cfg.seg_loss_coef = 5
cfg.iou_loss_coef = 2
cfg.act_loss_coef = 4
cfg.focal_alpha = 0.25
cfg.set_cost_class = 6
cfg.set_cost_seg = 5
cfg.set_cost_iou = 2

# ---- Optimization ----
cfg.lr = 2e-4
cfg.lr_backbone_names = ['backbone']
cfg.lr_linear_proj_names = ['reference_points', 'sampling_offsets']
cfg.lr_linear_proj_mult = 0.1
cfg.batch_size = 16
cfg.weight_decay = 1e-4
cfg.epochs = 30
cfg.lr_step = 25
cfg.clip_max_norm = 0.1
cfg.test_interval = 1

# ---- Post-processing ----
cfg.nms_thr = 0.4
cfg.postproc_rank = 1
cfg.postproc_cls_topk = 1
cfg.postproc_ins_topk = 100


def update_cfg_with_args(cfg, arg_list):
    from ast import literal_eval
    for i in range(0, len(arg_list), 2):
        cur_entry = cfg
        sub_keys = arg_list[i].split('.')
        for k in sub_keys[:-1]:
            cur_entry = cur_entry[k]
        try:
            value = literal_eval(arg_list[i + 1])
        except (ValueError, SyntaxError):
            value = arg_list[i + 1]
        cur_entry[sub_keys[-1]] = value


def update_cfg_from_file(cfg, cfg_path):
    import os
    assert os.path.exists(cfg_path), 'cfg_path is invalid'
    cfg_from_file = yaml.load(open(cfg_path), yaml.FullLoader)
    cfg.update(cfg_from_file)
