import fnmatch
import inspect
import os
from functools import partial
from typing import Optional, Union

import multiprocess as mp
import wget
from loguru import logger

from data_juicer.utils.common_utils import BASE_MODEL_URL, check_model_home
from data_juicer.utils.lazy_loader import LazyLoader
from data_juicer.utils.resource_utils import cuda_device_count

torch = LazyLoader("torch")
transformers = LazyLoader("transformers")
fasttext = LazyLoader("fasttext", "fasttext-wheel")
kenlm = LazyLoader("kenlm")
sentencepiece = LazyLoader("sentencepiece")
vllm = LazyLoader("vllm")

# Default cached models links for downloading
MODEL_LINKS = "https://dail-wlcb.oss-cn-wulanchabu.aliyuncs.com/data_juicer/models/"

# Backup cached models links for downloading
BACKUP_MODEL_LINKS = {
    # language identification model from fasttext
    "lid.176.bin": "https://dl.fbaipublicfiles.com/fasttext/supervised-models/",
    # tokenizer and language model for English from sentencepiece and KenLM
    "*.sp.model": "https://huggingface.co/edugp/kenlm/resolve/main/wikipedia/",
    "*.arpa.bin": "https://huggingface.co/edugp/kenlm/resolve/main/wikipedia/",
}

# Cached models in memory
MODEL_ZOO = {}

DJMC = check_model_home()


def check_model(model_name, force=False):
    """
    Check whether a model exists in DATA_JUICER_MODELS_CACHE.
    If exists, return its full path.
    Else, download it from cached models links.
    """
    if not os.path.exists(DJMC):
        os.makedirs(DJMC)

    # check if the specified model exists. If it does not exist, download it
    cached_model_path = os.path.join(DJMC, model_name)
    if force:
        if os.path.exists(cached_model_path):
            os.remove(cached_model_path)
            logger.info(f"Model [{cached_model_path}] is invalid. Forcibly downloading...")
        else:
            logger.info(f"Model [{cached_model_path}] is not found. Downloading...")

        try:
            model_link = os.path.join(MODEL_LINKS, model_name)
            wget.download(model_link, cached_model_path, bar=None)
        except:  # noqa: E722
            try:
                backup_model_link = os.path.join(get_backup_model_link(model_name), model_name)
                wget.download(backup_model_link, cached_model_path, bar=None)
            except:  # noqa: E722
                logger.error(f"Downloading model [{model_name}] error. Please retry later or download it into {DJMC} manually")
    return cached_model_path


def get_backup_model_link(model_name):
    for pattern, url in BACKUP_MODEL_LINKS.items():
        if fnmatch.fnmatch(model_name, pattern):
            return url
    return None


def prepare_fasttext_model(model_name="lid.176.bin", **model_params):
    """
    Prepare and load a fasttext model.
    """
    logger.info("Loading fasttext language identification model...")
    try:
        ft_model = fasttext.load_model(check_model(model_name))
    except:  # noqa: E722
        ft_model = fasttext.load_model(check_model(model_name, force=True))
    return ft_model


def prepare_kenlm_model(lang, name_pattern="{}.arpa.bin", **model_params):
    """
    Prepare and load a kenlm model.
    """
    model_name = name_pattern.format(lang)
    logger.info("Loading kenlm language model...")
    try:
        kenlm_model = kenlm.Model(check_model(model_name))
    except:  # noqa: E722
        kenlm_model = kenlm.Model(check_model(model_name, force=True))
    return kenlm_model


def prepare_huggingface_model(pretrained_model_name_or_path, *, return_model=True, trust_remote_code=False, **model_params):
    """
    Prepare and load a HuggingFace model with the correspoding processor.
    """
    processor = transformers.AutoProcessor.from_pretrained(
        pretrained_model_name_or_path, trust_remote_code=trust_remote_code, **model_params
    )

    if return_model:
        config = transformers.AutoConfig.from_pretrained(
            pretrained_model_name_or_path, trust_remote_code=trust_remote_code, **model_params
        )
        if hasattr(config, "auto_map"):
            class_name = next((k for k in config.auto_map if k.startswith("AutoModel")), "AutoModel")
        else:
            # TODO: What happens if more than one
            class_name = config.architectures[0]

        model_class = getattr(transformers, class_name)
        model = model_class.from_pretrained(
            pretrained_model_name_or_path, trust_remote_code=trust_remote_code, **model_params
        )

    return (model, processor) if return_model else processor


def prepare_vllm_model(pretrained_model_name_or_path, **model_params):
    """
    Prepare and load a HuggingFace model with the correspoding processor.
    """
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    os.environ["VLLM_WORKER_MULTIPROC_METHOD"] = "spawn"

    if model_params.get("device", "").startswith("cuda:"):
        model_params["device"] = "cuda"

    model = vllm.LLM(model=pretrained_model_name_or_path, **model_params)
    tokenizer = model.get_tokenizer()

    return (model, tokenizer)


MODEL_FUNCTION_MAPPING = {
    "fasttext": prepare_fasttext_model,
    "huggingface": prepare_huggingface_model,
    "kenlm": prepare_kenlm_model,
    "vllm": prepare_vllm_model,
}


def prepare_model(model_type, **model_kwargs):
    assert model_type in MODEL_FUNCTION_MAPPING.keys(), "model_type must be one of the following: {}".format(
        list(MODEL_FUNCTION_MAPPING.keys())
    )
    model_func = MODEL_FUNCTION_MAPPING[model_type]
    sig = inspect.signature(model_func)
    # init models in main process when not using cuda
    if "device" not in sig.parameters:
        return partial(model_func, **model_kwargs)
    return partial(model_func, **model_kwargs)


def move_to_cuda(model, rank):
    # Assuming model can be either a single module or a tuple of modules
    if not isinstance(model, tuple):
        model = (model,)

    for module in model:
        if callable(getattr(module, "to", None)):
            logger.debug(f"Moving {module.__class__.__name__} to CUDA device {rank}")
            module.to(f"cuda:{rank}")
            # Optionally, verify the device assignment
            logger.debug(f"{module.__class__.__name__} is on device {module.device}")


def get_model(model_key=None, rank=None, use_cuda=False):
    if model_key is None:
        return None

    global MODEL_ZOO
    if model_key not in MODEL_ZOO:
        logger.debug(f"{model_key} not found in MODEL_ZOO ({mp.current_process().name})")
        if use_cuda:
            rank = rank if rank is not None else 0
            rank = rank % cuda_device_count()
            try:
                MODEL_ZOO[model_key] = model_key(device=f"cuda:{rank}")
            except TypeError:
                MODEL_ZOO[model_key] = model_key()
                move_to_cuda(MODEL_ZOO[model_key], rank)
        else:
            MODEL_ZOO[model_key] = model_key()
    return MODEL_ZOO[model_key]


def free_models(clear_model_zoo=True):
    global MODEL_ZOO
    for model_key in MODEL_ZOO:
        try:
            model = MODEL_ZOO[model_key]
            if isinstance(model, tuple):
                for m in model:
                    if hasattr(m, "to"):
                        m.to("cpu")
            elif hasattr(model, "to"):
                model.to("cpu")
        except Exception:
            pass
    if clear_model_zoo:
        MODEL_ZOO.clear()
    torch.cuda.empty_cache()
