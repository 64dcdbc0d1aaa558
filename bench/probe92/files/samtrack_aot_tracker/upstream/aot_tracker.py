import importlib
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torchvision import transforms

sys.path.append("./aot")
from aot.networks.models import build_vos_model
from aot.networks.engines import build_engine
from aot.utils.checkpoint import load_network
import aot.dataloaders.video_transforms as tr

np.random.seed(200)
_palette = ((np.random.random((3 * 255)) * 0.7 + 0.3) * 255).astype(np.uint8).tolist()
_palette = [0, 0, 0] + _palette


class AOTTracker(object):
    def __init__(self, cfg, gpu_id=0):
        self.gpu_id = gpu_id
        self.model = build_vos_model(cfg.MODEL_VOS, cfg).cuda(gpu_id)
        self.model, _ = load_network(self.model, cfg.TEST_CKPT_PATH, gpu_id)
        self.engine = build_engine(cfg.MODEL_ENGINE,
                                   phase='eval',
                                   aot_model=self.model,
                                   gpu_id=gpu_id,
                                   short_term_mem_skip=1,
                                   long_term_mem_gap=cfg.TEST_LONG_TERM_MEM_GAP,
                                   max_len_long_term=cfg.MAX_LEN_LONG_TERM)

        self.transform = transforms.Compose([
            tr.MultiRestrictSize(cfg.TEST_MAX_SHORT_EDGE,
                                 cfg.TEST_MAX_LONG_EDGE, cfg.TEST_FLIP,
                                 cfg.TEST_MULTISCALE, cfg.MODEL_ALIGN_CORNERS),
            tr.MultiToTensor()
        ])

        self.model.eval()

    @torch.no_grad()
    def add_reference(self, frame, mask, frame_step=0):
        '''
        Add a reference frame and its mask to the tracker's memory.
        Arguments:
            frame: numpy array (h,w,3)
            mask: numpy array (h,w)
        '''
        sample = {
            'current_img': frame,
            'current_label': mask,
        }

        sample = self.transform(sample)
        frame = sample[0]['current_img'].unsqueeze(0).float().cuda(self.gpu_id)
        mask = sample[0]['current_label'].unsqueeze(0).float().cuda(self.gpu_id)
        _mask = F.interpolate(mask, size=frame.shape[-2:], mode='nearest')

        # add reference frame
        self.engine.add_reference_frame(frame, _mask, frame_step=frame_step, obj_nums=int(mask.max()))

    @torch.no_grad()
    def track(self, image):
        '''
        Track the objects of the reference frames in the new frame.
        Arguments:
            image: numpy array (h,w,3)
        Return:
            pred_label: the predicted mask of the current frame, torch tensor (1,1,h,w)
        '''
        height = image.shape[0]
        width = image.shape[1]

        sample = {'current_img': image}
        sample['meta'] = {
            'height': height,
            'width': width,
        }
        sample = self.transform(sample)
        output_height = sample[0]['meta']['height']
        output_width = sample[0]['meta']['width']
        image = sample[0]['current_img'].unsqueeze(0).float().cuda(self.gpu_id)

        self.engine.match_propogate_one_frame(image)
        pred_logit = self.engine.decode_current_logits((output_height, output_width))

        # pred_prob = torch.softmax(pred_logit, dim=1)
        pred_label = torch.argmax(pred_logit, dim=1,
                                  keepdim=True).float()

        return pred_label

    @torch.no_grad()
    def update_memory(self, pred_label):
        '''
        Update the tracker's memory with the predicted label of the current frame.
        Arguments:
            pred_label: the predicted mask of the current frame, torch tensor (1,1,h,w)
        '''
        self.engine.update_memory(pred_label)

    def restart(self):
        '''
        Drop all memories and start from scratch; used when the user resets the objects.
        '''
        self.engine.restart_engine()
        torch.cuda.empty_cache()


def load_network_on_card(net, pretrained_dir, gpu):
    """Weights were saved from a DataParallel model on card 0; remap to the card we run on."""
    pretrained = torch.load(pretrained_dir, map_location=torch.device("cuda:" + str(gpu)))
    if 'state_dict' in pretrained.keys():
        pretrained_dict = pretrained['state_dict']
    elif 'model' in pretrained.keys():
        pretrained_dict = pretrained['model']
    else:
        pretrained_dict = pretrained
    model_dict = net.state_dict()
    pretrained_dict_update = {}
    pretrained_dict_remove = []
    for k, v in pretrained_dict.items():
        if k in model_dict:
            pretrained_dict_update[k] = v
        elif k[:7] == 'module.':
            if k[7:] in model_dict:
                pretrained_dict_update[k[7:]] = v
        else:
            pretrained_dict_remove.append(k)
    model_dict.update(pretrained_dict_update)
    net.load_state_dict(model_dict)
    del pretrained
    return net, pretrained_dict_remove


def get_aot(args):
    # build vos engine
    engine_config = importlib.import_module('configs.' + 'pre_ytb_dav')
    cfg = engine_config.EngineConfig(args['phase'], args['model'])
    cfg.TEST_CKPT_PATH = args['model_path']
    cfg.TEST_LONG_TERM_MEM_GAP = args['long_term_mem_gap']
    cfg.MAX_LEN_LONG_TERM = args['max_len_long_term']
    # init AOTTracker
    tracker = AOTTracker(cfg, args['gpu_id'])
    return tracker


def mask_to_palette_image(pred_mask):
    '''Convert an index mask (h,w) to a palette image, for the gradio demo.'''
    from PIL import Image
    save_mask = Image.fromarray(pred_mask.astype(np.uint8))
    save_mask = save_mask.convert(mode='P')
    save_mask.putpalette(_palette)
    return save_mask


def colorize_mask(pred_mask):
    save_mask = mask_to_palette_image(pred_mask)
    save_mask = save_mask.convert(mode='RGB')
    return np.array(save_mask)
