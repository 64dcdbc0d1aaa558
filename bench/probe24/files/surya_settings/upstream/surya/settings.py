import os
from typing import Callable, Dict, Optional

import torch
from dotenv import find_dotenv
from pydantic import computed_field
from pydantic_settings import BaseSettings


class Settings(BaseSettings):
    # General
    TORCH_DEVICE: Optional[str] = None
    IMAGE_DPI: int = 96  # Used for detection, layout, reading order
    IMAGE_DPI_HIGHRES: int = 192  # Used for OCR, table rec
    IN_STREAMLIT: bool = False  # Whether we're running in streamlit
    FLATTEN_PDF: bool = True  # Flatten PDFs by merging form fields before processing
    DISABLE_TQDM: bool = False  # Disable tqdm progress bars
    S3_BASE_URL: str = "https://models.datalab.to"
    PARALLEL_DOWNLOAD_WORKERS: int = 10  # Number of workers for parallel model downloads
    MODEL_CACHE_DIR: str = os.path.join(os.path.expanduser("~"), ".cache", "datalab", "models")
    LOGLEVEL: str = "INFO"

    # Paths
    DATA_DIR: str = "data"
    RESULT_DIR: str = "results"
    BASE_DIR: str = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    FONT_DIR: str = os.path.join(BASE_DIR, "static", "fonts")

    @computed_field
    def TORCH_DEVICE_MODEL(self) -> str:
        if self.TORCH_DEVICE is not None:
            return self.TORCH_DEVICE

        if torch.cuda.is_available():
            return "cuda"

        if torch.backends.mps.is_available():
            return "mps"

        try:
            import torch_xla

            if len(torch_xla.devices()) > 0:
                return "xla"
        except Exception:
            pass

        return "cpu"

    # Text detection
    DETECTOR_BATCH_SIZE: Optional[int] = None  # Defaults to 2 for CPU/MPS, 32 otherwise
    DETECTOR_MODEL_CHECKPOINT: str = "s3://text_detection/2025_05_07"
    DETECTOR_BENCH_DATASET_NAME: str = "vikp/doclaynet_bench"
    DETECTOR_IMAGE_CHUNK_HEIGHT: int = 1400  # Height at which to slice images vertically
    DETECTOR_TEXT_THRESHOLD: float = 0.6  # Threshold for text detection (above this is considered text)
    DETECTOR_BLANK_THRESHOLD: float = 0.35  # Threshold for blank space (below this is considered blank)
    DETECTOR_POSTPROCESSING_CPU_WORKERS: int = min(8, os.cpu_count())
    DETECTOR_MIN_PARALLEL_THRESH: int = 3  # Minimum number of images before we parallelize

    # Recognition / foundation model
    RECOGNITION_BATCH_SIZE: Optional[int] = None  # Defaults to 8 for CPU/MPS, 256 otherwise
    RECOGNITION_MAX_TOKENS: Optional[int] = None
    FOUNDATION_MODEL_CHECKPOINT: str = "datalab-to/surya-alpha"
    FOUNDATION_MODEL_QUANTIZE: bool = False
    FOUNDATION_CHUNK_SIZE: Optional[int] = None
    FOUNDATION_PAD_TO_NEAREST: int = 256
    COMPILE_FOUNDATION: bool = False
    # Cache for kv; only uses the static cache with torch.compile on cuda
    FOUNDATION_STATIC_CACHE: bool = False

    # Layout
    LAYOUT_BATCH_SIZE: Optional[int] = None
    LAYOUT_MODEL_CHECKPOINT: str = "s3://layout/2025_02_18"
    LAYOUT_IMAGE_SIZE: Dict = {"height": 768, "width": 768}
    COMPILE_LAYOUT: bool = False

    # Table rec
    TABLE_REC_BATCH_SIZE: Optional[int] = None
    TABLE_REC_MODEL_CHECKPOINT: str = "s3://table_recognition/2025_02_18"
    COMPILE_TABLE_REC: bool = False

    COMPILE_ALL: bool = False

    @computed_field
    def DETECTOR_STATIC_CACHE(self) -> bool:
        return self.COMPILE_ALL or self.COMPILE_LAYOUT

    @computed_field
    def MODEL_DTYPE(self) -> torch.dtype:
        if self.TORCH_DEVICE_MODEL == "cpu":
            return torch.float32
        if self.TORCH_DEVICE_MODEL == "xla":
            return torch.bfloat16
        return torch.float16

    @computed_field
    def MODEL_DTYPE_BFLOAT(self) -> torch.dtype:
        if self.TORCH_DEVICE_MODEL == "cuda" and torch.cuda.is_bf16_supported():
            return torch.bfloat16
        return torch.float32

    @computed_field
    def INFERENCE_MODE(self) -> Callable:
        if self.TORCH_DEVICE_MODEL == "xla":
            return torch.no_grad
        return torch.inference_mode

    @computed_field
    def ATTN_IMPLEMENTATION(self) -> str:
        # flash attention 2 only on Ampere+ cards with the package installed
        if self.TORCH_DEVICE_MODEL == "cuda":
            major, _ = torch.cuda.get_device_capability()
            try:
                import flash_attn  # noqa: F401

                if major >= 8:
                    return "flash_attention_2"
            except ImportError:
                pass
        return "sdpa"

    class Config:
        env_file = find_dotenv("local.env")
        extra = "ignore"


settings = Settings()
