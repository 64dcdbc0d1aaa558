# -----------------------------------------------------
# Copyright (c) THL A29 Limited, a Tencent company. All rights reserved.
# -----------------------------------------------------

import nncore
import torch
from nncore.dataset import DATASETS
from nncore.parallel import DataContainer
from torch.utils.data import Dataset

from .utils import eval_highlights


@DATASETS.register()
class TVSum(Dataset):

    DOMAINS = ('BK', 'BT', 'DS', 'FM', 'GA', 'MS', 'PK', 'PR', 'VT', 'VU')

    def __init__(self, modality, label_path, video_path, audio_path=None, domain=None):
        assert modality in ('va', 'v')
        if domain is not None:
            assert domain in self.DOMAINS

        self.label = nncore.load(label_path)
        self.modality = modality
        self.label_path = label_path
        self.video_path = video_path
        self.audio_path = audio_path
        self.domain = domain

        self.label = [v for v in self.label.values() if domain is None or v['domain'] == domain]

    def __len__(self):
        return len(self.label)

    def __getitem__(self, idx):
        video = self.get_video(idx)
        audio = self.get_audio(idx)

        num_clips = min(video.size(0), audio.size(0))

        video = video[:num_clips]
        audio = audio[:num_clips]

        saliency = torch.LongTensor(self.label[idx]['anno'])[:num_clips]

        data = dict(
            video=DataContainer(video),
            audio=DataContainer(audio),
            saliency=DataContainer(saliency, pad_value=-1))

        return data

    def get_video(self, idx):
        vid = self.label[idx]['vid']
        video = [
            nncore.load(nncore.join(path, f'{vid}.npz'))['features']
            for path in self.video_path
        ]
        num_clips = min(v.shape[0] for v in video)
        video = [torch.from_numpy(v[:num_clips]) for v in video]
        return torch.cat(video, dim=1).float()

    def get_audio(self, idx):
        if self.audio_path is None:
            return torch.zeros(self.get_video(idx).size(0), 0)
        vid = self.label[idx]['vid']
        audio_path = nncore.join(self.audio_path, f'{vid}.npy')
        return torch.from_numpy(nncore.load(audio_path)).float()

    def evaluate(self, blob, **kwargs):
        num_samples, collected = len(blob), []
        blob = nncore.to_dict_of_list(blob)

        for i in range(20):
            video_ap = []
            for idx, score in enumerate(blob['saliency']):
                inds = torch.argsort(score[0], descending=True)
                label = torch.Tensor(self.label[idx]['match'])[:, i]
                label = torch.where(label > label.median(), 1.0, .0)
                label = label[inds].tolist()[:5]

                if (num_gt := sum(label)) == 0:
                    video_ap.append(0)
                    continue

                hits = ap = rec = 0
                prc = 1

                for j, gt in enumerate(label):
                    hits += gt

                    _rec = hits / num_gt
                    _prc = hits / (j + 1)

                    ap += (_rec - rec) * (prc + _prc) / 2
                    rec, prc = _rec, _prc

                video_ap.append(ap)

            collected.append(sum(video_ap) / num_samples)

        mean_ap = sum(collected) / len(collected)
        results = dict(mAP=round(mean_ap, 5))

        return results
