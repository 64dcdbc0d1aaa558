import argparse
import os
import shutil

import torch
import yaml

from pytorch3dunet.unet3d import utils

logger = utils.get_logger("ConfigLoader")


def _override_config(args, config):
    """Overrides config params with the ones given in command line."""
    args_dict = vars(args)
    # remove the first argument which is the config file path
    args_dict.pop("config")

    for key, value in args_dict.items():
        if value is None:
            continue
        c = config
        for k in key.split("."):
            if k not in c:
                raise ValueError(f"Invalid config key: {key}")
            if isinstance(c[k], dict):
                c = c[k]
            else:
                c[k] = value


def load_config():
    parser = argparse.ArgumentParser(description="UNet3D")
    parser.add_argument("--config", type=str, help="Path to the YAML config file", required=True)
    # add additional command line arguments for the prediction that override the ones in the config file
    parser.add_argument("--model_path", type=str, required=False)
    parser.add_argument("--loaders.output_dir", type=str, required=False)
    parser.add_argument("--loaders.test.file_paths", type=str, nargs="+", required=False)
    parser.add_argument("--loaders.num_workers", type=int, required=False)
    parser.add_argument("--device", type=str, required=False, help="cpu, cuda or cuda:N")
    args = parser.parse_args()
    config_path = args.config
    config = yaml.safe_load(open(config_path, "r"))
    _override_config(args, config)

    device = config.get("device", None)
    if device == "cpu":
        logger.warning("CPU mode forced in config, this will likely result in slow training/prediction")
        config["device"] = "cpu"
        return config, config_path

    if torch.cuda.is_available():
        config["device"] = "cuda"
    else:
        logger.warning("CUDA not available, using CPU")
        config["device"] = "cpu"
    return config, config_path


def copy_config(config, config_path):
    """Copies the config file to the checkpoint folder."""

    def _get_last_subfolder_path(path):
        subfolders = [f.path for f in os.scandir(path) if f.is_dir()]
        return max(subfolders, default=None)

    checkpoint_dir = os.path.join(config["trainer"].pop("checkpoint_dir"), "logs")
    last_run_dir = _get_last_subfolder_path(checkpoint_dir)
    config_file_name = os.path.basename(config_path)
    if last_run_dir:
        shutil.copy2(config_path, os.path.join(last_run_dir, config_file_name))


def get_device(config):
    """Resolve config['device'] into a torch.device; honour an explicit GPU index."""
    device_str = config.get("device", "cuda")
    if device_str.startswith("cuda") and not torch.cuda.is_available():
        logger.warning(f"{device_str} requested but CUDA is not available, falling back to CPU")
        return torch.device("cpu")
    return torch.device(device_str)


def configure_determinism(config):
    """Optional deterministic mode (slower): seeds + cudnn flags."""
    seed = config.get("manual_seed", None)
    if seed is None:
        return
    logger.info(f"Seed the RNG for all devices with {seed}")
    logger.warning("Using CuDNN deterministic setting. This may slow down the training!")
    utils.set_seed(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


def get_class(class_name, modules):
    """Find `class_name` in the first module of `modules` that defines it."""
    import importlib
    for module in modules:
        m = importlib.import_module(module)
        clazz = getattr(m, class_name, None)
        if clazz is not None:
            return clazz
    raise RuntimeError(f"Unsupported dataset class: {class_name}")


def validate_loaders_config(config):
    """Basic sanity checks of the `loaders` section before any data is touched."""
    loaders = config.get("loaders")
    assert loaders is not None, "Could not find loaders configuration"
    for phase in ("train", "val"):
        if phase not in loaders:
            continue
        phase_cfg = loaders[phase]
        assert "file_paths" in phase_cfg, f"{phase}: file_paths missing"
        sb = phase_cfg.get("slice_builder", {})
        patch = sb.get("patch_shape")
        stride = sb.get("stride_shape")
        if patch is not None and stride is not None:
            assert len(patch) == len(stride), f"{phase}: patch/stride rank mismatch"
            for p, s in zip(patch, stride):
                assert s <= p, f"{phase}: stride {s} larger than patch {p} leaves gaps"
    batch_size = loaders.get("batch_size", 1)
    assert batch_size >= 1, "batch_size must be positive"
    return True


def merge_configs(base, override):
    """Recursively merge `override` into a copy of `base`."""
    import copy
    out = copy.deepcopy(base)
    for k, v in override.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = merge_configs(out[k], v)
        else:
            out[k] = v
    return out


def save_config(config, path):
    """Write a config dict back to YAML (used to snapshot the effective run configuration)."""
    with open(path, "w") as f:
        yaml.safe_dump(config, f, sort_keys=False, default_flow_style=None)
