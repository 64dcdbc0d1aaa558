import logging
from pathlib import Path

import h5py
import numpy as np
import torch
from tqdm import tqdm

from methods.inference import BaseInferer
from methods.utils.data_utilities import to_metrics2020_format, track_to_dcase_format

# FOA channel swaps used for test-time augmentation (W, Y, Z, X ordering).
# Each entry maps (input permutation, sign flips) -> inverse operation on the predicted DOA.
TTA_ROTATIONS = [
    ('identity', [0, 1, 2, 3], [1, 1, 1, 1]),
    ('flip_y', [0, 1, 2, 3], [1, -1, 1, 1]),
    ('flip_x', [0, 1, 2, 3], [1, 1, 1, -1]),
    ('flip_z', [0, 1, 2, 3], [1, 1, -1, 1]),
]


def _undo_rotation(doa, name):
    doa = doa.copy()
    if name == 'flip_y':
        doa[..., 1] = -doa[..., 1]
    elif name == 'flip_x':
        doa[..., 0] = -doa[..., 0]
    elif name == 'flip_z':
        doa[..., 2] = -doa[..., 2]
    return doa


class Inferer(BaseInferer):

    def __init__(self, cfg, dataset, af_extractor, model, cuda):
        super().__init__()
        self.cfg = cfg
        self.af_extractor = af_extractor
        self.model = model
        self.cuda = cuda
        self.use_tta = cfg['inference'].get('tta', False)

        # Scalar
        scalar_h5_dir = Path(cfg['hdf5_dir']).joinpath(cfg['dataset']).joinpath('scalar')
        fn_scalar = '{}_{}_sr{}_nfft{}_hop{}_mel{}.h5'.format(cfg['data']['type'], cfg['data']['audio_feature'],
            cfg['data']['sample_rate'], cfg['data']['n_fft'], cfg['data']['hop_length'], cfg['data']['n_mels'])
        scalar_path = scalar_h5_dir.joinpath(fn_scalar)
        with h5py.File(scalar_path, 'r') as hf:
            self.mean = hf['mean'][:]
            self.std = hf['std'][:]
        if cuda:
            self.mean = torch.tensor(self.mean, dtype=torch.float32).cuda(non_blocking=True)
            self.std = torch.tensor(self.std, dtype=torch.float32).cuda(non_blocking=True)
        else:
            self.mean = torch.tensor(self.mean, dtype=torch.float32)
            self.std = torch.tensor(self.std, dtype=torch.float32)

        self.label_resolution = dataset.label_resolution
        self.label_interp_ratio = int(self.label_resolution * cfg['data']['sample_rate'] / cfg['data']['hop_length'])

    def _forward(self, batch_x):
        batch_x = self.af_extractor(batch_x)
        batch_x = (batch_x - self.mean) / self.std
        pred = self.model(batch_x)
        pred['sed'] = torch.sigmoid(pred['sed'])
        return pred

    def infer(self, generator):
        fn_list, n_segment_list = [], []
        pred_sed_list, pred_doa_list = [], []

        iterator = tqdm(generator)
        for batch_sample in iterator:
            batch_x = batch_sample['waveform']
            if self.cuda:
                batch_x = batch_x.cuda(non_blocking=True)
            with torch.no_grad():
                self.af_extractor.eval()
                self.model.eval()
                if not self.use_tta:
                    pred = self._forward(batch_x)
                    sed = pred['sed'].cpu().detach().numpy()
                    doa = pred['doa'].cpu().detach().numpy()
                else:
                    sed_acc, doa_acc = 0., 0.
                    for name, perm, signs in TTA_ROTATIONS:
                        sign_t = torch.tensor(signs, dtype=batch_x.dtype, device=batch_x.device).view(1, -1, 1)
                        x_rot = batch_x[:, perm] * sign_t
                        pred = self._forward(x_rot)
                        sed_acc += pred['sed'].cpu().numpy()
                        doa_acc += _undo_rotation(pred['doa'].cpu().numpy(), name)
                    sed = sed_acc / len(TTA_ROTATIONS)
                    doa = doa_acc / len(TTA_ROTATIONS)
            fn_list.append(batch_sample['filename'])
            n_segment_list.append(batch_sample['n_segment'])
            pred_sed_list.append(sed)
            pred_doa_list.append(doa)

        iterator.close()

        self.fn_list = [fn for row in fn_list for fn in row]
        self.n_segment_list = [n_segment for row in n_segment_list for n_segment in row]
        pred_sed = np.concatenate(pred_sed_list, axis=0)
        pred_doa = np.concatenate(pred_doa_list, axis=0)

        self.num_segments = max(self.n_segment_list) + 1
        origin_num_clips = int(pred_sed.shape[0] / self.num_segments)
        origin_T = int(pred_sed.shape[1] * self.num_segments)
        pred_sed = pred_sed.reshape((origin_num_clips, origin_T, 2, -1))[:, :int(60 / self.label_resolution)]
        pred_doa = pred_doa.reshape((origin_num_clips, origin_T, 2, -1))[:, :int(60 / self.label_resolution)]

        pred = {
            'sed': pred_sed,
            'doa': pred_doa
        }
        return pred

    def fusion(self, submissions_dir, predictions_dir, preds):
        """ Ensamble predictions

        """
        num_preds = len(preds)
        pred_sed = []
        pred_doa = []
        for n in range(num_preds):
            pred_sed.append(preds[n]['sed'])
            pred_doa.append(preds[n]['doa'])
        pred_sed = np.array(pred_sed).mean(axis=0)
        pred_doa = np.array(pred_doa).mean(axis=0)

        N, T = pred_sed.shape[:2]
        pred_sed_max = pred_sed.max(axis=-1)
        pred_sed_max_idx = pred_sed.argmax(axis=-1)
        pred_sed = np.zeros_like(pred_sed)
        for b_idx in range(N):
            for t_idx in range(T):
                for track_idx in range(2):
                    pred_sed[b_idx, t_idx, track_idx, pred_sed_max_idx[b_idx, t_idx, track_idx]] = \
                        pred_sed_max[b_idx, t_idx, track_idx]
        pred_sed = (pred_sed > self.cfg['inference']['threshold_sed']).astype(np.float32)
        # convert Catesian to Spherical
        azi = np.arctan2(pred_doa[..., 1], pred_doa[..., 0])
        elev = np.arctan2(pred_doa[..., 2], np.sqrt(pred_doa[..., 0]**2 + pred_doa[..., 1]**2))
        pred_doa = np.stack((azi, elev), axis=-1)  # (N, T, tracks, (azi, elev))

        fn_list = self.fn_list[::self.num_segments]
        for n in range(N):
            fn = fn_list[n]
            pred_sed_f = pred_sed[n][None, ...]
            pred_doa_f = pred_doa[n][None, ...]
            pred_sed_f, pred_doa_f = track_to_dcase_format(pred_sed_f, pred_doa_f)
            csv_path = submissions_dir.joinpath(fn + '.csv')
            self.write_submission(csv_path, pred_sed_f, pred_doa_f)
            prediction_path = predictions_dir.joinpath(fn + '.h5')
            with h5py.File(prediction_path, 'w') as hf:
                hf.create_dataset(name='sed', data=pred_sed[n], dtype=np.float32)
                hf.create_dataset(name='doa', data=pred_doa[n], dtype=np.float32)
        logging.info('Rsults are saved to {}\n'.format(str(submissions_dir)))


def infer(cfg, dataset, **infer_initializer):
    """ Infer, only save the testset predictions

    """
    submissions_dir = infer_initializer['submissions_dir']
    predictions_dir = infer_initializer['predictions_dir']
    ckpts_paths_list = infer_initializer['ckpts_paths_list']
    ckpts_models_list = infer_initializer['ckpts_models_list']
    test_generator = infer_initializer['test_generator']
    cuda = infer_initializer['cuda']
    preds = []
    for ckpt_path, model_name in zip(ckpts_paths_list, ckpts_models_list):
        print('=====>> Resuming from the checkpoint: {}\n'.format(ckpt_path))
        af_extractor = infer_initializer['af_extractor']
        model = infer_initializer['model']
        map_location = (lambda storage, loc: storage.cuda()) if cuda else 'cpu'
        state_dict = torch.load(ckpt_path, map_location=map_location)
        model.module.load_state_dict(state_dict['model']) if hasattr(model, 'module') \
            else model.load_state_dict(state_dict['model'])
        print('  Resuming complete from epoch {}\n'.format(state_dict['epoch']))
        inferer = Inferer(cfg, dataset, af_extractor, model, cuda)
        pred = inferer.infer(test_generator)
        preds.append(pred)
        print('  Inference finished for {}\n'.format(ckpt_path))
    inferer.fusion(submissions_dir, predictions_dir, preds)
