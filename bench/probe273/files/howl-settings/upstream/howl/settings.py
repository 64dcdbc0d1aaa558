"""Global settings for howl.

Every field can be overridden from the environment, e.g. ``NUM_EPOCHS=20 BATCH_SIZE=32 python -m training.run.train``.
Nested groups are flattened: ``TrainingSettings.device`` is read from ``DEVICE`` (or ``TRAINING__DEVICE`` when the
settings are loaded through ``AppSettings``).
"""
from pathlib import Path
from typing import List, Optional

from pydantic import BaseSettings

__all__ = [
    "AudioSettings",
    "AudioTransformSettings",
    "CacheSettings",
    "DatasetSettings",
    "InferenceEngineSettings",
    "InferenceSettings",
    "TrainingSettings",
    "AppSettings",
    "SETTINGS",
    "KEY_TO_SETTINGS_CLASS",
]


class CacheSettings(BaseSettings):
    """Settings for the on-disk cache of computed features"""

    cache_size: int = 128144


class AudioSettings(BaseSettings):
    """Base settings for loading audio file"""

    sample_rate: int = 16000
    use_mono: bool = True


class AudioTransformSettings(BaseSettings):
    """Settings for audio transformation"""

    num_fft: int = 512
    num_mels: int = 40
    sample_rate: int = 16000
    hop_length: int = 200
    use_meyda_spectrogram: bool = False


class InferenceEngineSettings(BaseSettings):
    """Base settings for inference engine"""

    inference_weights: List[float] = None
    inference_sequence: List[int] = [0]
    inference_window_ms: float = 2000  # look at last of these seconds
    smoothing_window_ms: float = 50  # prediction smoothed
    tolerance_window_ms: float = 500  # negative label between words
    inference_threshold: float = 0  # positive label probability must rise above this threshold


class TrainingSettings(BaseSettings):
    """Base settings for training"""

    seed: int = 0
    # TODO: vocab should be moved to InferenceEngineSettings
    vocab: List[str] = ["fire"]
    num_epochs: int = 10
    num_labels: int = 2
    learning_rate: float = 1e-3
    device: str = "cuda:0"
    batch_size: int = 16
    lr_decay: float = 0.955
    max_window_size_seconds: float = 0.5
    eval_window_size_seconds: float = 0.5
    eval_stride_size_seconds: float = 0.063
    weight_decay: float = 0
    convert_static: bool = False
    objective: str = "frame"  # frame or ctc
    token_type: str = "word"
    phone_dictionary: Optional[Path] = None
    use_noise_dataset: bool = False
    noise_dataset_path: Optional[Path] = None
    # pin host batches only when a GPU is present; set to false on CPU-only runners
    pin_memory: bool = True
    num_workers: int = 4


class DatasetSettings(BaseSettings):
    """Base settings for dataset"""

    dataset_path: str = None


class InferenceSettings(BaseSettings):
    """Settings for live inference from the microphone"""

    # ``howl.client`` uses the first GPU when one is visible, falling back to CPU
    device: str = "cpu"
    chunk_size: int = 500
    num_channels: int = 1


class LazySettingsSingleton:
    """Settings are created on first access so that env vars set in tests are honoured."""

    _audio: AudioSettings = None
    _audio_transform: AudioTransformSettings = None
    _inference_engine: InferenceEngineSettings = None
    _inference: InferenceSettings = None
    _training: TrainingSettings = None
    _dataset: DatasetSettings = None
    _cache: CacheSettings = None

    @property
    def audio(self) -> AudioSettings:
        if self._audio is None:
            self._audio = AudioSettings()
        return self._audio

    @property
    def audio_transform(self) -> AudioTransformSettings:
        if self._audio_transform is None:
            self._audio_transform = AudioTransformSettings()
        return self._audio_transform

    @property
    def inference_engine(self) -> InferenceEngineSettings:
        if self._inference_engine is None:
            self._inference_engine = InferenceEngineSettings()
        return self._inference_engine

    @property
    def inference(self) -> InferenceSettings:
        if self._inference is None:
            self._inference = InferenceSettings()
        return self._inference

    @property
    def training(self) -> TrainingSettings:
        if self._training is None:
            self._training = TrainingSettings()
        return self._training

    @property
    def dataset(self) -> DatasetSettings:
        if self._dataset is None:
            self._dataset = DatasetSettings()
        return self._dataset

    @property
    def cache(self) -> CacheSettings:
        if self._cache is None:
            self._cache = CacheSettings()
        return self._cache

    def reset(self):
        self._audio = None
        self._audio_transform = None
        self._inference_engine = None
        self._inference = None
        self._training = None
        self._dataset = None
        self._cache = None


class AppSettings(BaseSettings):
    """All settings at once; used when dumping a workspace's configuration to JSON."""

    cache: CacheSettings = CacheSettings()
    audio: AudioSettings = AudioSettings()
    audio_transform: AudioTransformSettings = AudioTransformSettings()
    inference_engine: InferenceEngineSettings = InferenceEngineSettings()
    inference: InferenceSettings = InferenceSettings()
    training: TrainingSettings = TrainingSettings()
    dataset: DatasetSettings = DatasetSettings()


SETTINGS = LazySettingsSingleton()
KEY_TO_SETTINGS_CLASS = {
    "_audio": AudioSettings,
    "_audio_transform": AudioTransformSettings,
    "_inference_engine": InferenceEngineSettings,
    "_inference": InferenceSettings,
    "_training": TrainingSettings,
    "_dataset": DatasetSettings,
    "_cache": CacheSettings,
}
