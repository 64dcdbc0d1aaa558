"""MDX-Net (KUIELab) ONNX inference for Music Demixing.

Runs the four TFC-TDF-U-Net ONNX exports (one per target, the `*.onnx` files from
the MDX challenge release) over a folder of mixtures, optionally blended with a
Demucs estimate, and writes one wav per stem.

    python inference.py --onnx onnx/ --mixtures data/test --out results/ [--demucs]
"""
import argparse
import glob
import os
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort
import soundfile as sf
import torch
from tqdm import tqdm

TARGETS = ['bass', 'drums', 'other', 'vocals']

device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')


class ConvTDFNet:
    """Holds the STFT configuration a given ONNX export was trained with.
    Only the spectrogram front/back end runs in torch; the network itself
    runs in onnxruntime."""

    def __init__(self, target_name, L, dim_f, dim_t, n_fft, hop=1024):
        super(ConvTDFNet, self).__init__()
        self.dim_c = 4
        self.dim_f = dim_f
        self.dim_t = 2 ** dim_t
        self.n_fft = n_fft
        self.hop = hop
        self.n_bins = self.n_fft // 2 + 1
        self.chunk_size = hop * (self.dim_t - 1)
        self.window = torch.hann_window(window_length=self.n_fft, periodic=True).to(device)
        self.target_name = target_name
        self.blender = 'blender' in target_name

        out_c = self.dim_c * 4 if target_name == '*' else self.dim_c
        self.freq_pad = torch.zeros([1, out_c, self.n_bins - self.dim_f, self.dim_t]).to(device)

        self.n = L // 2

    def stft(self, x):
        x = x.reshape([-1, self.chunk_size])
        x = torch.stft(x, n_fft=self.n_fft, hop_length=self.hop, window=self.window,
                       center=True, return_complex=True)
        x = torch.view_as_real(x)
        x = x.permute([0, 3, 1, 2])
        x = x.reshape([-1, 2, 2, self.n_bins, self.dim_t]).reshape([-1, self.dim_c, self.n_bins, self.dim_t])
        return x[:, :, :self.dim_f]

    def istft(self, x, freq_pad=None):
        freq_pad = self.freq_pad.repeat([x.shape[0], 1, 1, 1]) if freq_pad is None else freq_pad
        x = torch.cat([x, freq_pad], -2)
        c = 4 * 2 if self.target_name == '*' else 2
        x = x.reshape([-1, c, 2, self.n_bins, self.dim_t]).reshape([-1, 2, self.n_bins, self.dim_t])
        x = x.permute([0, 2, 3, 1])
        x = x.contiguous()
        x = torch.view_as_complex(x)
        x = torch.istft(x, n_fft=self.n_fft, hop_length=self.hop, window=self.window, center=True)
        return x.reshape([-1, c, self.chunk_size])


def get_models(name, device, load=True, vocals_model_type=0):
    if name == 'tdf_extra':
        if vocals_model_type == 2:
            model_vocals = ConvTDFNet(target_name='vocals', L=11, dim_f=2048, dim_t=8, n_fft=7680)
        elif vocals_model_type == 3:
            model_vocals = ConvTDFNet(target_name='vocals', L=11, dim_f=3072, dim_t=8, n_fft=7680)
        else:
            model_vocals = ConvTDFNet(target_name='vocals', L=11, dim_f=2048, dim_t=8, n_fft=6144)
        return [
            ConvTDFNet(target_name='bass', L=11, dim_f=2048, dim_t=8, n_fft=16384),
            ConvTDFNet(target_name='drums', L=11, dim_f=2048, dim_t=8, n_fft=4096),
            ConvTDFNet(target_name='other', L=11, dim_f=2048, dim_t=8, n_fft=8192),
            model_vocals,
        ]
    print('Model undefined')
    return None


class Predictor:
    def __init__(self, args):
        self.args = args
        self.models = get_models('tdf_extra', device=device, vocals_model_type=args.vocals_model_type)
        so = ort.SessionOptions()
        so.intra_op_num_threads = args.threads
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        providers = ['CUDAExecutionProvider', 'CPUExecutionProvider']
        self.sessions = []
        for target, model in zip(TARGETS, self.models):
            path = os.path.join(args.onnx, f'{target}.onnx')
            sess = ort.InferenceSession(path, sess_options=so, providers=providers)
            print(f'{target}: {sess.get_providers()}')
            self.sessions.append(sess)
        if args.demucs:
            from demucs.pretrained import get_model
            self.demucs = get_model('mdx_extra')
            self.demucs.to(device).eval()
        else:
            self.demucs = None

    def demix(self, mix):
        base_out = self.demix_base(mix)
        if self.demucs is None:
            return base_out
        demucs_out = self.demix_demucs(mix)
        b = np.array([[[0.5]], [[0.5]], [[0.7]], [[0.9]]])
        return demucs_out * b + base_out * (1 - b)

    def demix_base(self, mix):
        sources = []
        n_sample = mix.shape[1]
        for model, sess in zip(self.models, self.sessions):
            trim = model.n_fft // 2
            gen_size = model.chunk_size - 2 * trim
            pad = gen_size - n_sample % gen_size
            mix_p = np.concatenate((np.zeros((2, trim)), mix, np.zeros((2, pad)), np.zeros((2, trim))), 1)

            mix_waves = []
            i = 0
            while i < n_sample + pad:
                waves = np.array(mix_p[:, i:i + model.chunk_size])
                mix_waves.append(waves)
                i += gen_size
            mix_waves = torch.tensor(np.array(mix_waves), dtype=torch.float32).to(device)

            with torch.no_grad():
                spek = model.stft(mix_waves)
                # onnxruntime wants host numpy arrays
                tar_spek = sess.run(None, {'input': spek.cpu().numpy()})[0]
                tar_waves = model.istft(torch.tensor(tar_spek, device=device))
                tar_signal = tar_waves[:, :, trim:-trim].transpose(0, 1).reshape(2, -1).cpu().numpy()[:, :-pad]
            sources.append(tar_signal)
        return np.array(sources)

    def demix_demucs(self, mix):
        from demucs.apply import apply_model
        mix = torch.tensor(mix, dtype=torch.float32)
        ref = mix.mean(0)
        mix = (mix - ref.mean()) / ref.std()
        with torch.no_grad():
            sources = apply_model(self.demucs, mix[None], split=True, overlap=0.5,
                                  shifts=self.args.shifts, device=device)[0]
        sources = (sources * ref.std() + ref.mean()).cpu().numpy()
        sources[[0, 1]] = sources[[1, 0]]
        return sources


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--onnx', default='onnx', help='folder with bass/drums/other/vocals .onnx')
    parser.add_argument('--mixtures', required=True, help='folder of mixture.wav files')
    parser.add_argument('--out', default='results')
    parser.add_argument('--demucs', action='store_true', help='blend with Demucs mdx_extra')
    parser.add_argument('--shifts', type=int, default=1)
    parser.add_argument('--threads', type=int, default=4)
    parser.add_argument('--vocals-model-type', type=int, default=0, dest='vocals_model_type')
    args = parser.parse_args()

    predictor = Predictor(args)
    files = sorted(glob.glob(os.path.join(args.mixtures, '**', 'mixture.wav'), recursive=True))
    for path in tqdm(files):
        mix, rate = sf.read(path)
        assert rate == 44100, 'MDX models expect 44.1 kHz input'
        t0 = time.time()
        sources = predictor.demix(mix.T)
        elapsed = time.time() - t0
        out_dir = Path(args.out) / Path(path).parent.name
        out_dir.mkdir(parents=True, exist_ok=True)
        for target, src in zip(TARGETS, sources):
            sf.write(out_dir / f'{target}.wav', src.T, rate)
        tqdm.write(f'{Path(path).parent.name}: {elapsed:.1f}s '
                   f'({torch.cuda.max_memory_allocated(device) / 2**30:.2f} GiB peak)')
        torch.cuda.empty_cache()


if __name__ == '__main__':
    main()
