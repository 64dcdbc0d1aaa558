import base64
import io
import json
import os
import threading
import time
import wave
import zlib

from torch.autograd import Variable
import librosa
import numpy as np
import torch
import torch.nn.functional as F

import utils.model as model
import utils.train as train
from utils.manage_audio import AudioPreprocessor, AudioSnippet


def _wav_to_numpy(wav_data):
    with wave.open(io.BytesIO(wav_data)) as f:
        frames = f.readframes(f.getnframes())
    return np.frombuffer(frames, dtype=np.int16).astype(np.float32) / 32768


class LabelService(object):
    """Runs a trained honk model over 1 s windows and returns the most likely keyword.

    Pass ``no_cuda=True`` on machines without a GPU; otherwise the model is moved to the
    current CUDA device once, at construction time.
    """

    def __init__(self, model_filename, no_cuda=False, labels=["_background_noise_", "_unknown_", "yes", "no", "up", "down",
            "left", "right", "on", "off", "stop", "go"], model_type="res8"):
        self.labels = labels
        self.model_filename = model_filename
        self.no_cuda = no_cuda
        self.model_type = model_type
        self.audio_processor = AudioPreprocessor()
        self.reload()

    def reload(self):
        config = model.find_config(model.ConfigType(self.model_type))
        config["n_labels"] = len(self.labels)
        self.model = model.find_model(model.ConfigType(self.model_type))(config)
        # load() already maps storages to CPU, so checkpoints written on a GPU box load anywhere
        self.model.load(self.model_filename)
        if not self.no_cuda:
            self.model.cuda()
        self.model.eval()

    def evaluate(self, speech_dirs, indices=[]):
        dirs = [os.path.join(d, "*.wav") for d in speech_dirs]
        accuracy = []
        for label_idx, speech_dir in enumerate(speech_dirs):
            for wav_file in sorted(os.listdir(speech_dir)):
                if not wav_file.endswith(".wav"):
                    continue
                data = librosa.core.load(os.path.join(speech_dir, wav_file), sr=16000)[0]
                label, _ = self.label(data)
                accuracy.append(int(label == self.labels[indices[label_idx]] if indices else label))
        return np.mean(accuracy)

    def label(self, wav_data):
        """Label the given audio chunk.

        Args:
            wav_data: either a float32 numpy array or a byte string in WAV format
        Returns:
            (label, confidence)
        """
        wav_data = np.frombuffer(wav_data, dtype=np.int16) / 32768. if isinstance(wav_data, bytes) else wav_data
        model_in = torch.from_numpy(self.audio_processor.compute_mfccs(wav_data).squeeze(2)).unsqueeze(0)
        model_in = Variable(model_in, requires_grad=False)
        if not self.no_cuda:
            model_in = model_in.cuda()
        predictions = F.softmax(self.model(model_in).squeeze(0).cpu(), dim=0).data.numpy()
        return (self.labels[np.argmax(predictions)], max(predictions))


class TrainingService(object):
    """Fine-tunes the deployed model on examples recorded through the web UI."""

    def __init__(self, train_script, speech_dataset_path, options):
        self.train_script = train_script
        self.neg_directory = os.path.join(speech_dataset_path, "_unknown_")
        self.speech_dataset_path = speech_dataset_path
        self.options = options
        self.model_path = options.get("model_path", "model/model.pt")
        self.gpu_no = int(options.get("gpu_no", 0))
        self.no_cuda = options.get("no_cuda", False)
        self.training_thread = None
        self._run_lock = threading.Lock()
        self._create_dirs()

    def _create_dirs(self):
        if not os.path.exists(self.neg_directory):
            os.makedirs(self.neg_directory)
        for directory in self.options["labels"]:
            os.makedirs(os.path.join(self.speech_dataset_path, directory), exist_ok=True)

    def generate_contrastive(self, data):
        snippet = AudioSnippet(data)
        phoneme_chunks = snippet.chunk(0.4, 0.1)
        phoneme_chunks2 = snippet.chunk(0.35, 0.1)
        phoneme_chunks.extend(phoneme_chunks2)

        for chunk in phoneme_chunks:
            chunk.amplitude_normalize(0.1)
            if chunk.dtype != np.int16:
                chunk.byte_data = chunk.byte_data.astype(np.int16)
            self.write_example(chunk.byte_data, self.neg_directory, prefix="ctr_")

    def clear_examples(self, positive=True, tag=""):
        directory = self.speech_dataset_path if positive else self.neg_directory
        for filename in os.listdir(directory):
            if filename.startswith(tag):
                os.unlink(os.path.join(directory, filename))

    def write_example(self, wav_data, directory, prefix="pos_"):
        filename = os.path.join(directory, "{}{}.wav".format(prefix, int(time.time() * 1000)))
        with wave.open(filename, "wb") as f:
            f.setnchannels(1)
            f.setsampwidth(2)
            f.setframerate(16000)
            f.writeframes(wav_data)

    def _run_training_script(self, callback):
        with self._run_lock:
            cmd_strs = [
                "python", self.train_script,
                "--wanted_words", *self.options["labels"],
                "--data_folder", self.speech_dataset_path,
                "--input_file", self.model_path,
                "--output_file", self.model_path,
                "--gpu_no", "0",  # visibility is narrowed below, so the child always sees device 0
                "--n_epochs", str(self.options.get("n_epochs", 20)),
                "--lr", "0.001",
                "--type", "train",
            ]
            if self.no_cuda:
                cmd_strs.append("--no_cuda")
            env = dict(os.environ)
            env["CUDA_VISIBLE_DEVICES"] = str(self.gpu_no)
            import subprocess
            proc = subprocess.Popen(cmd_strs, env=env)
            proc.communicate()
            callback(proc.returncode == 0)

    def run_train_script(self, callback=None):
        if self.training_thread and self.training_thread.is_alive():
            return False
        self.training_thread = threading.Thread(target=self._run_training_script, args=(callback or (lambda ok: None),))
        self.training_thread.start()
        return True


def stride(array, stride_size, window_size):
    i = 0
    while i + window_size <= len(array):
        yield array[i:i + window_size]
        i += stride_size


def encode_audio(wav_data):
    return base64.b64encode(zlib.compress(wav_data)).decode()


def decode_audio(payload):
    return zlib.decompress(base64.b64decode(payload))


def label_stream(service, wav_data, window=16000, hop=4000):
    """Slide a 1 s window over a longer recording; used by the /listen endpoint."""
    results = []
    samples = np.frombuffer(wav_data, dtype=np.int16) / 32768.
    for idx, chunk in enumerate(stride(samples, hop, window)):
        label, conf = service.label(chunk.astype(np.float32))
        results.append(dict(offset=idx * hop / 16000, label=label, confidence=float(conf)))
    return json.dumps(results)
