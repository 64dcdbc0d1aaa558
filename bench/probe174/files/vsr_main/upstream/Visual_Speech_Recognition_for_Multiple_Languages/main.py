import os
import hydra
import logging

import torch

from pipelines.pipeline import InferencePipeline


logging.basicConfig(level=logging.INFO)
logger = logging.getLogger(__name__)


def select_device(gpu_idx):
    """Pick the inference device: a GPU index >= 0 selects cuda:<idx>, -1 forces CPU."""
    if gpu_idx >= 0 and torch.cuda.is_available():
        if gpu_idx >= torch.cuda.device_count():
            raise ValueError(f"gpu_idx={gpu_idx} but only {torch.cuda.device_count()} GPU(s) visible")
        return torch.device(f"cuda:{gpu_idx}")
    logger.warning("running on CPU, decoding will be slow")
    return torch.device("cpu")


@hydra.main(version_base=None, config_path="hydra_configs", config_name="default")
def main(cfg):
    device = select_device(cfg.gpu_idx)
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = False  # variable-length clips
        logger.info(f"using {torch.cuda.get_device_name(device)}")

    pipeline = InferencePipeline(
        cfg.config_filename,
        device=device,
        detector=cfg.detector,
        face_track=True,
        fp16=cfg.get("fp16", False),
    )

    if os.path.isdir(cfg.data_filename):
        filenames = sorted(
            os.path.join(cfg.data_filename, f)
            for f in os.listdir(cfg.data_filename)
            if f.endswith((".mp4", ".wav", ".avi"))
        )
    else:
        filenames = [cfg.data_filename]

    for filename in filenames:
        output = pipeline(filename, cfg.landmarks_filename)
        print(f"{os.path.basename(filename)}\thyp: {output}")

    if cfg.get("dst_filename", None):
        pipeline.save_results(cfg.dst_filename)


if __name__ == "__main__":
    main()
