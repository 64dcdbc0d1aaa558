from .server import Model
import os
import pathlib

__version__ = "1.0.4"

_HERE = pathlib.Path(__file__).parent
_CKPTS = {
    '44.1k': ('Models/44_1_khz/73999_iteration', 'Models/44_1_khz/73999_iteration/hparams.yaml'),
    '16k': ('Models/16_khz/97561_iteration', 'Models/16_khz/97561_iteration/hparams.yaml'),
}


def get_model(model_type='44.1k', ckpt_path=None, config_path=None, device='cuda'):
    """Build a SilentCipher model.

    model_type: '44.1k' (music / general audio) or '16k' (speech)
    ckpt_path / config_path: override the checkpoints downloaded from the hub
    device: torch device string the networks are placed on
    """
    if model_type not in _CKPTS:
        raise ValueError(f'Please choose a valid model type among {list(_CKPTS)}')

    if ckpt_path is None or config_path is None:
        from huggingface_hub import snapshot_download
        local_dir = snapshot_download(repo_id='sony/silentcipher', allow_patterns=['Models/*'])
        default_ckpt, default_cfg = _CKPTS[model_type]
        ckpt_path = ckpt_path or os.path.join(local_dir, default_ckpt)
        config_path = config_path or os.path.join(local_dir, default_cfg)

    return Model(model_type=model_type, ckpt_path=ckpt_path, config_path=config_path, device=device)
