import os
import argparse
import re
import yaml
import time
import numpy as np
import soundfile as sf
from scipy import stats as st
import librosa
from pydub import AudioSegment
import torch
from torch import nn

from .model import Encoder, CarrierDecoder, MsgDecoder
from .stft import STFT


class Model():

    def __init__(self, model_type='44.1k', ckpt_path='../Models/44_1_khz/73999_iteration',
                 config_path='../Models/44_1_khz/73999_iteration/hparams.yaml', device='cuda'):

        self.model_type = model_type
        self.device = device
        self.config = yaml.safe_load(open(config_path))
        self.config = argparse.Namespace(**self.config)
        self.config.load_ckpt = ckpt_path
        self.config.n_messages = 5
        self.config.message_dim = 1 + 255  # one token for "no message" + 8 bit values
        self.SR = self.config.SR
        self.frame_shift = self.config.HOP_LENGTH
        self.n_fft = self.config.N_FFT
        self.message_len = self.config.message_len
        self.average_energy_VCTK = 0.002837200844477648

        self.enc_c = Encoder(n_layers=self.config.enc_n_layers,
                             message_dim=self.config.message_dim,
                             out_dim=self.config.enc_conv_dim,
                             message_band_size=self.config.message_band_size,
                             n_fft=self.n_fft)

        self.dec_c = CarrierDecoder(config=self.config,
                                    conv_dim=self.config.dec_c_conv_dim,
                                    n_layers=self.config.dec_c_n_layers,
                                    message_band_size=self.config.message_band_size)

        self.dec_m = [MsgDecoder(message_dim=self.config.message_dim,
                                 message_band_size=self.config.message_band_size,
                                 channel_dim=self.config.dec_m_conv_dim,
                                 num_layers=self.config.dec_m_num_layers) for _ in range(self.config.n_messages)]
        # ------ load ckpts ------
        self.enc_c.load_state_dict(self.convert_dataparallel_to_normal(
            torch.load(os.path.join(ckpt_path, "enc_c.ckpt"), map_location=self.device)))
        self.dec_c.load_state_dict(self.convert_dataparallel_to_normal(
            torch.load(os.path.join(ckpt_path, "dec_c.ckpt"), map_location=self.device)))
        for i, m in enumerate(self.dec_m):
            m.load_state_dict(self.convert_dataparallel_to_normal(
                torch.load(os.path.join(ckpt_path, f"dec_m_{i}.ckpt"), map_location=self.device)))

        self.enc_c = self.enc_c.to(self.device).eval()
        self.dec_c = self.dec_c.to(self.device).eval()
        self.dec_m = [m.to(self.device).eval() for m in self.dec_m]
        self.stft = STFT(self.n_fft, self.frame_shift)
        self.stft.to(self.device)

    def convert_dataparallel_to_normal(self, checkpoint):
        # checkpoints were trained with nn.DataParallel: strip the "module." prefix
        return {i[len('module.'):] if i.startswith('module.') else i: checkpoint[i] for i in checkpoint}

    def letters_encoding(self, patch_len, message_lst):
        """
        Encodes a list of messages into a compact representation and a padded representation.

        Args:
            patch_len (int): The length of the patch.
            message_lst (list): A list of messages to be encoded.

        Returns:
            tuple: A tuple containing two numpy arrays:
                - message: A padded representation of the messages, where each message is repeated
                  to match the patch length.
                - message_compact: A compact representation of the messages, where each message
                  is encoded as a one-hot vector.
        """
        message = []
        message_compact = []
        for i in message_lst:
            assert len(i) == self.config.message_len
            index = np.concatenate((np.array(i) + 1, [0]))
            one_hot = np.identity(self.config.message_dim)[index]
            message_compact.append(one_hot)
            if patch_len % self.config.message_len == 0:
                message.append(np.tile(one_hot.T, (1, patch_len // self.config.message_len)))
            else:
                _ = np.tile(one_hot.T, (1, patch_len // self.config.message_len))
                _ = np.concatenate([_, one_hot.T[:, 0:patch_len % self.config.message_len]], axis=1)
                message.append(_)
        message = np.stack(message)
        message_compact = np.stack(message_compact)
        return message, message_compact

    def get_best_ps(self, y_one_sec):
        """Find the phase shift giving the highest confidence on a 1 s excerpt."""
        def check_accuracy(pred_values):
            accuracy = 0
            for i in range(pred_values.shape[1]):
                unique, counts = np.unique(pred_values[:, i], return_counts=True)
                accuracy += np.max(counts) / pred_values.shape[0]
            return accuracy / pred_values.shape[1]

        y = torch.FloatTensor(y_one_sec).unsqueeze(0).unsqueeze(0).to(self.device)
        max_accuracy = 0
        final_phase_shift = 0

        for ps in range(0, self.frame_shift, 10):
            carrier, _ = self.stft.transform(y[0:1, 0:1, ps:].squeeze(1))
            carrier = carrier[:, None]
            for i in range(len(self.dec_m)):
                pred_values = torch.argmax(self.dec_m[i](carrier).transpose(1, 2), dim=2)[0].cpu().numpy()
                cur_acc = check_accuracy(pred_values.reshape(-1, self.config.message_len))
                if cur_acc > max_accuracy:
                    max_accuracy = cur_acc
                    final_phase_shift = ps
        return final_phase_shift

    def encode_wav(self, y_multi_channel, orig_sr, message_lst, message_sdr=None, calc_sdr=True,
                   disable_checks=False):
        """Watermark a (T,) or (T, C) numpy signal with a list of 5 integers in [0, 255]."""
        if len(y_multi_channel.shape) == 1:
            y_multi_channel = y_multi_channel[:, None]
        y_watermarked_multi_channel = []
        sdr_lst = []
        for c in range(y_multi_channel.shape[1]):
            y = y_multi_channel[:, c]
            if orig_sr != self.SR:
                y = librosa.resample(y, orig_sr=orig_sr, target_sr=self.SR)
            if not disable_checks:
                assert np.max(np.abs(y)) <= 1.0, 'Audio is not normalised'
                if len(y) < self.SR:
                    raise ValueError('Audio should be at least one second long')
            y_tensor = torch.FloatTensor(y).unsqueeze(0).unsqueeze(0).to(self.device)
            with torch.no_grad():
                carrier, carrier_phase = self.stft.transform(y_tensor.squeeze(1))
                carrier = carrier[:, None]
                carrier_phase = carrier_phase[:, None]
                message_lst_np = [np.array(m) for m in [message_lst]]
                msgs, _ = self.letters_encoding(carrier.shape[3], message_lst_np)
                msg_enc = torch.from_numpy(msgs[:, None]).float().to(self.device)
                carrier_enc = self.enc_c(carrier)
                msg_enc = self.enc_c.transform_message(msg_enc)
                merged_enc = torch.cat((carrier_enc, carrier.repeat(1, 32, 1, 1), msg_enc.repeat(1, 1, 1, 1)),
                                       dim=1)
                message_info = self.dec_c(merged_enc, message_sdr)
                y_wm = self.stft.inverse(carrier.squeeze(1) + message_info.squeeze(1),
                                         carrier_phase.squeeze(1)).squeeze(1)
                y_wm = y_wm[0, :len(y)].cpu().numpy()
            if calc_sdr:
                sdr_lst.append(self.sdr(y, y_wm))
            if orig_sr != self.SR:
                y_wm = librosa.resample(y_wm, orig_sr=self.SR, target_sr=orig_sr)
            y_watermarked_multi_channel.append(y_wm)
        y_watermarked = np.stack(y_watermarked_multi_channel, axis=1).squeeze()
        return y_watermarked, (np.mean(sdr_lst) if calc_sdr else None)

    def decode_wav(self, y_multi_channel, orig_sr, phase_shift_decoding):
        """Return {'status': bool, 'messages': [...], 'confidences': [...]}"""
        if len(y_multi_channel.shape) == 1:
            y_multi_channel = y_multi_channel[:, None]
        results = []
        for c in range(y_multi_channel.shape[1]):
            y = y_multi_channel[:, c]
            if orig_sr != self.SR:
                y = librosa.resample(y, orig_sr=orig_sr, target_sr=self.SR)
            with torch.no_grad():
                ps = self.get_best_ps(y[:self.SR]) if phase_shift_decoding else 0
                y_tensor = torch.FloatTensor(y[ps:]).unsqueeze(0).unsqueeze(0).to(self.device)
                carrier, _ = self.stft.transform(y_tensor.squeeze(1))
                carrier = carrier[:, None]
                messages, confidences = [], []
                for dec in self.dec_m:
                    pred = torch.softmax(dec(carrier).transpose(1, 2), dim=2)[0].cpu().numpy()
                    pred = pred[:pred.shape[0] // self.message_len * self.message_len]
                    pred = pred.reshape(-1, self.message_len, pred.shape[-1])
                    values = np.argmax(pred, axis=2)
                    mode, count = st.mode(values, axis=0, keepdims=False)
                    messages.append([int(v) - 1 for v in mode])
                    confidences.append(float(np.mean(count / values.shape[0])))
            best = int(np.argmax(confidences))
            status = all(v >= 0 for v in messages[best]) and confidences[best] > 0.5
            results.append({'status': status, 'messages': [messages[best]], 'confidences': [confidences[best]]})
        return results[0] if len(results) == 1 else results

    def encode(self, in_path, out_path, message_list, message_sdr=None, calc_sdr=True, disable_checks=False):
        y, orig_sr = sf.read(in_path)
        start = time.time()
        y_wm, sdr = self.encode_wav(y, orig_sr, message_list, message_sdr, calc_sdr, disable_checks)
        sf.write(out_path, y_wm, orig_sr)
        return {'status': True, 'sdr': sdr, 'time': time.time() - start}

    def decode(self, path, phase_shift_decoding):
        y, orig_sr = sf.read(path)
        return self.decode_wav(y, orig_sr, phase_shift_decoding)

    @staticmethod
    def sdr(orig, recon):
        rms1 = ((np.mean(orig ** 2)) ** 0.5)
        rms2 = ((np.mean((orig - recon) ** 2)) ** 0.5)
        sdr = 20 * np.log10(rms1 / rms2)
        return sdr


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--ckpt_path', type=str, default='../Models/44_1_khz/73999_iteration')
    parser.add_argument('--config_path', type=str, default='../Models/44_1_khz/73999_iteration/hparams.yaml')
    parser.add_argument('--in_path', type=str, required=True)
    parser.add_argument('--out_path', type=str, required=True)
    parser.add_argument('--use_gpu', action='store_true')
    args = parser.parse_args()
    model = Model(ckpt_path=args.ckpt_path, config_path=args.config_path,
                  device='cuda' if args.use_gpu else 'cpu')
    print(model.encode(args.in_path, args.out_path, [123, 234, 111, 222, 11]))
    print(model.decode(args.out_path, phase_shift_decoding=False))
