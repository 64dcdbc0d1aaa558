'''
Audio feature extraction for VOCA (PyTorch port).

The original VOCA runs the DeepSpeech v0.1.0 TensorFlow graph to obtain per-frame character logits.
This port uses the same graph exported to TorchScript (see tools/export_deepspeech.py); the MFCC
front-end is unchanged (python_speech_features), so features match the TF version to ~1e-5.
'''

import re
import copy
import numpy as np
import resampy
import torch
from python_speech_features import mfcc
from scipy.io import wavfile


def interpolate_features(features, input_rate, output_rate, output_len=None):
    num_features = features.shape[1]
    input_len = features.shape[0]
    seq_len = input_len / float(input_rate)
    if output_len is None:
        output_len = int(seq_len * output_rate)
    input_timestamps = np.arange(input_len) / float(input_rate)
    output_timestamps = np.arange(output_len) / float(output_rate)
    output_features = np.zeros((output_len, num_features))
    for feat in range(num_features):
        output_features[:, feat] = np.interp(output_timestamps,
                                             input_timestamps,
                                             features[:, feat])
    return output_features


class AudioHandler:
    def __init__(self, config, device=None):
        self.config = config
        self.audio_feature_type = config['audio_feature_type']
        self.num_audio_features = config['num_audio_features']
        self.audio_window_size = config['audio_window_size']
        self.audio_window_stride = config['audio_window_stride']
        self.device = device if device is not None else torch.device('cuda:%d' % config['gpu_id'])
        self._ds_model = None

    def _deepspeech(self):
        if self._ds_model is None:
            self._ds_model = torch.jit.load(self.config['deepspeech_graph_fname'], map_location='cuda')
            self._ds_model.eval()
        return self._ds_model

    def process(self, audio):
        if self.audio_feature_type.lower() == "none":
            return None
        elif self.audio_feature_type.lower() == 'deepspeech':
            return self.convert_to_deepspeech(audio)
        else:
            raise NotImplementedError("Audio features not supported")

    @torch.no_grad()
    def convert_to_deepspeech(self, audio):
        def audioToInputVector(audio, fs, numcep, numcontext):
            # Get mfcc coefficients
            features = mfcc(audio, samplerate=fs, numcep=numcep)

            # We only keep every second feature (BiRNN stride = 2)
            features = features[::2]

            # One stride per time step in the input
            num_strides = len(features)

            # Add empty initial and final contexts
            empty_context = np.zeros((numcontext, numcep), dtype=features.dtype)
            features = np.concatenate((empty_context, features, empty_context))

            # Create a view into the array with overlapping strides of size
            # numcontext (past) + 1 (present) + numcontext (future)
            window_size = 2 * numcontext + 1
            train_inputs = np.lib.stride_tricks.as_strided(
                features,
                (num_strides, window_size, numcep),
                (features.strides[0], features.strides[0], features.strides[1]),
                writeable=False)

            # Flatten the second and third dimensions
            train_inputs = np.reshape(train_inputs, [num_strides, -1])

            train_inputs = np.copy(train_inputs)
            train_inputs = (train_inputs - np.mean(train_inputs)) / np.std(train_inputs)

            # Return results
            return train_inputs

        if type(audio) == dict:
            pass
        else:
            raise ValueError('Wrong type for audio')

        n_input = 26
        n_context = 9
        model = self._deepspeech()

        processed_audio = copy.deepcopy(audio)
        for subj in audio.keys():
            for seq in audio[subj].keys():
                print('process audio: %s - %s' % (subj, seq))

                audio_sample = audio[subj][seq]['audio']
                sample_rate = audio[subj][seq]['sample_rate']
                resampled_audio = resampy.resample(audio_sample.astype(float), sample_rate, 16000)
                input_vector = audioToInputVector(resampled_audio.astype('int16'), 16000, n_input, n_context)

                x = torch.from_numpy(input_vector[np.newaxis, ...]).float().to(self.device)
                seq_len = torch.tensor([input_vector.shape[0]], dtype=torch.int32, device=self.device)
                network_output = model(x, seq_len)[:, 0]  # (T, 29) logits
                network_output = network_output.cpu().numpy()

                # Make windows
                zero_pad = np.zeros((int(self.audio_window_size / 2), network_output.shape[1]))
                network_output = np.concatenate((zero_pad, network_output, zero_pad), axis=0)
                windows = []
                for window_index in range(0, network_output.shape[0] - self.audio_window_size, self.audio_window_stride):
                    windows.append(network_output[window_index:window_index + self.audio_window_size])

                # DeepSpeech runs at 50 fps, the meshes at 60 fps
                processed_audio[subj][seq]['audio'] = interpolate_features(np.array(windows).reshape(len(windows), -1),
                                                                           50, 60).reshape(-1, self.audio_window_size,
                                                                                           network_output.shape[1])
        return processed_audio


def load_wav(fname):
    sample_rate, audio = wavfile.read(fname)
    if audio.ndim != 1:
        print('Audio has multiple channels, only first channel is considered')
        audio = audio[:, 0]
    return sample_rate, audio
