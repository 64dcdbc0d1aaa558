import logging
import os
from pathlib import Path
from typing import Optional

import torch
import torch.nn.functional as F
import torchaudio
from hear21passt.base import get_basic_model
from torch.utils.data import DataLoader
from tqdm import tqdm

from av_bench.data.audio_dataset import AudioDataset, pad_or_truncate
from av_bench.panns import Cnn14
from av_bench.vggish.vggish import VGGish
from av_bench.extraction_utils import save_cached_features

log = logging.getLogger()

_PANNS_CKPT = '~/.cache/av-benchmark/Cnn14_16k_mAP=0.438.pth'


def load_models(device: str, audio_length: float, skip_vggish: bool = False):
    models = {}
    passt = get_basic_model(mode='logits')
    passt.eval()
    models['passt'] = passt.to(device)

    panns = Cnn14(sample_rate=16000, window_size=512, hop_size=160, mel_bins=64, fmin=50, fmax=8000,
                  classes_num=527)
    state = torch.load(os.path.expanduser(_PANNS_CKPT), map_location='cpu', weights_only=False)
    panns.load_state_dict(state['model'])
    models['panns'] = panns.eval().to(device)

    if not skip_vggish:
        vggish = VGGish(postprocess=False)
        models['vggish'] = vggish.eval().cuda()
    return models


@torch.inference_mode()
def extract(audio_path: Path,
            output_path: Path,
            *,
            device: str = 'cuda',
            batch_size: int = 32,
            num_workers: int = 8,
            audio_length: float = 8.0,
            skip_vggish: bool = False,
            skip_video_related: bool = True,
            video_path: Optional[Path] = None):
    audio_path = Path(audio_path).expanduser()
    output_path = Path(output_path).expanduser()
    output_path.mkdir(parents=True, exist_ok=True)

    log.info(f'Extracting features from {audio_path} on {torch.cuda.get_device_name()}')
    models = load_models(device, audio_length, skip_vggish=skip_vggish)

    dataset = AudioDataset(audio_path, audio_length=audio_length, sr=16000)
    loader = DataLoader(dataset,
                        batch_size=batch_size,
                        num_workers=num_workers,
                        pin_memory=True,
                        shuffle=False,
                        drop_last=False)

    out = {'ids': [], 'passt_features': [], 'passt_logits': [], 'panns_features': [],
           'panns_logits': [], 'vggish_features': []}
    for batch in tqdm(loader):
        wav_16k = batch['wav_16k'].to(device, non_blocking=True)
        wav_32k = batch['wav_32k'].to(device, non_blocking=True)
        out['ids'].extend(batch['id'])

        # PaSST expects 32 kHz, 10 s max
        with torch.cuda.amp.autocast(enabled=False):
            passt_logits, passt_feat = models['passt'](pad_or_truncate(wav_32k, 32000 * 10))
        out['passt_logits'].append(passt_logits.float().cpu())
        out['passt_features'].append(passt_feat.float().cpu())

        panns_out = models['panns'](wav_16k)
        out['panns_logits'].append(panns_out['clipwise_output_logits'].cpu())
        out['panns_features'].append(panns_out['embedding'].cpu())

        if not skip_vggish:
            # VGGish works on 0.96 s frames; average over the clip
            v = models['vggish'](wav_16k.cpu().numpy(), 16000).to(device)
            out['vggish_features'].append(v.view(wav_16k.shape[0], -1, 128).mean(1).cpu())

    features = {k: (torch.cat(v) if k != 'ids' and len(v) > 0 else v) for k, v in out.items()}
    save_cached_features(features, output_path)
    log.info(f'Saved {len(features["ids"])} items to {output_path}')
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    return features
