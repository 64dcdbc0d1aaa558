import multiprocessing
import os
import sys

import torch
import torch.hub
from torch.utils.data import Dataset

from torch_fidelity.datasets import ImagesPathDataset
from torch_fidelity.defaults import DEFAULTS
from torch_fidelity.feature_extractor_base import FeatureExtractorBase
from torch_fidelity.generative_model_base import GenerativeModelBase
from torch_fidelity.generative_model_modulewrapper import GenerativeModelModuleWrapper
from torch_fidelity.generative_model_onnx import GenerativeModelONNX
from torch_fidelity.helpers import get_kwarg, vassert, vprint
from torch_fidelity.registry import (
    DATASETS_REGISTRY,
    FEATURE_EXTRACTORS_REGISTRY,
    SAMPLE_SIMILARITY_REGISTRY,
    NOISE_SOURCE_REGISTRY,
    INTERPOLATION_REGISTRY,
)


def glob_samples_paths(path, samples_find_deep, samples_find_ext, samples_ext_lossy=None, verbose=True):
    vassert(type(samples_find_ext) is str and samples_find_ext != "", "Sample extensions must be specified")
    samples_find_ext = [a.strip() for a in samples_find_ext.split(",") if a.strip() != ""]
    if samples_ext_lossy is not None:
        samples_ext_lossy = [a.strip() for a in samples_ext_lossy.split(",") if a.strip() != ""]
    if samples_find_deep:
        files = []
        for r, d, ff in os.walk(path):
            files += [os.path.join(r, f) for f in ff if os.path.splitext(f)[1].lower()[1:] in samples_find_ext]
    else:
        files = [
            os.path.join(path, f)
            for f in os.listdir(path)
            if os.path.splitext(f)[1].lower()[1:] in samples_find_ext
        ]
    files = sorted(files)
    if verbose:
        print(f'Found {len(files)} samples in "{path}"', file=sys.stderr)
    if samples_ext_lossy is not None:
        num_lossy_samples = sum([os.path.splitext(f)[1].lower()[1:] in samples_ext_lossy for f in files])
        if num_lossy_samples > 0:
            vprint(
                verbose,
                f"WARNING: {num_lossy_samples} out of {len(files)} samples are lossy-compressed, this may lead to "
                f"bad metrics values",
            )
    return files


def create_feature_extractor(name, list_features, cuda=True, **kwargs):
    vassert(name in FEATURE_EXTRACTORS_REGISTRY, f"Feature extractor {name} not registered")
    vprint(get_kwarg("verbose", kwargs), f"Creating feature extractor {name} with features {list_features}")
    cls = FEATURE_EXTRACTORS_REGISTRY[name]
    feat_extractor = cls(name, list_features, **kwargs)
    feat_extractor.eval()
    if cuda:
        feat_extractor.cuda()
    return feat_extractor


def create_sample_similarity(name, cuda=True, **kwargs):
    vassert(name in SAMPLE_SIMILARITY_REGISTRY, f"Sample similarity {name} not registered")
    vprint(get_kwarg("verbose", kwargs), f"Creating sample similarity {name}")
    cls = SAMPLE_SIMILARITY_REGISTRY[name]
    sample_similarity = cls(name, **kwargs)
    sample_similarity.eval()
    if cuda:
        sample_similarity.cuda()
    return sample_similarity


def sample_random(rng, shape, type):
    vassert(type in NOISE_SOURCE_REGISTRY, f"Noise source {type} not registered")
    fn = NOISE_SOURCE_REGISTRY[type]
    return fn(rng, shape)


def batch_interp(a, b, t, method):
    vassert(method in INTERPOLATION_REGISTRY, f"Interpolation method {method} not registered")
    fn = INTERPOLATION_REGISTRY[method]
    return fn(a, b, t)


def get_featuresdict_from_dataset(input, feat_extractor, batch_size, cuda, save_cpu_ram, verbose):
    vassert(isinstance(input, Dataset), "Input can only be a Dataset instance")
    vassert(torch.is_tensor(input[0]), "Input Dataset should return torch.Tensor")
    vassert(
        isinstance(feat_extractor, FeatureExtractorBase), "Feature extractor is not a subclass of FeatureExtractorBase"
    )

    if batch_size > len(input):
        batch_size = len(input)

    num_workers = 0 if save_cpu_ram else min(4, 2 * multiprocessing.cpu_count())

    dataloader = torch.utils.data.DataLoader(
        input,
        batch_size=batch_size,
        drop_last=False,
        num_workers=num_workers,
        pin_memory=cuda,
    )

    out = None

    with tqdm_progress(verbose, len(input), "Processing samples") as t:
        for bid, batch in enumerate(dataloader):
            if cuda:
                batch = batch.cuda(non_blocking=True)

            with torch.no_grad():
                features = feat_extractor(batch)
            featuresdict = feat_extractor.convert_features_tuple_to_dict(features)
            featuresdict = {k: [v.cpu()] for k, v in featuresdict.items()}

            if out is None:
                out = featuresdict
            else:
                out = {k: out[k] + featuresdict[k] for k in out.keys()}
            t.update(batch_size)

    vprint(verbose, "Processing samples")

    out = {k: torch.cat(v, dim=0) for k, v in out.items()}

    return out


class tqdm_progress:
    def __init__(self, verbose, total, desc):
        self.verbose = verbose
        self.total = total
        self.desc = desc
        self.t = None

    def __enter__(self):
        if self.verbose:
            from tqdm import tqdm

            self.t = tqdm(total=self.total, desc=self.desc, file=sys.stderr, leave=False, unit="samples")
        return self

    def update(self, n):
        if self.t is not None:
            self.t.update(n)

    def __exit__(self, exc_type, exc_val, exc_tb):
        if self.t is not None:
            self.t.close()


def get_featuresdict_from_generative_model(gen_model, feat_extractor, num_samples, batch_size, cuda, rng_seed, verbose):
    vassert(isinstance(gen_model, GenerativeModelBase), "Input can only be a GenerativeModel instance")
    vassert(
        isinstance(feat_extractor, FeatureExtractorBase), "Feature extractor is not a subclass of FeatureExtractorBase"
    )

    if batch_size > num_samples:
        batch_size = num_samples

    out = None

    rng = torch.Generator()
    if rng_seed is not None:
        rng.manual_seed(rng_seed)

    if cuda:
        gen_model.cuda()

    with tqdm_progress(verbose, num_samples, "Processing samples") as t:
        for sample_start in range(0, num_samples, batch_size):
            sample_end = min(sample_start + batch_size, num_samples)
            sz = sample_end - sample_start

            noise = sample_random(rng, (sz, gen_model.z_size), gen_model.z_type)
            if cuda:
                noise = noise.cuda(non_blocking=True)
            gen_args = [noise]
            if gen_model.num_classes > 0:
                cond_labels = torch.randint(low=0, high=gen_model.num_classes, size=(sz,), dtype=torch.int64, generator=rng)
                if cuda:
                    cond_labels = cond_labels.cuda(non_blocking=True)
                gen_args.append(cond_labels)

            with torch.no_grad():
                fakes = gen_model(*gen_args)
                features = feat_extractor(fakes)
            featuresdict = feat_extractor.convert_features_tuple_to_dict(features)
            featuresdict = {k: [v.cpu()] for k, v in featuresdict.items()}

            if out is None:
                out = featuresdict
            else:
                out = {k: out[k] + featuresdict[k] for k in out.keys()}
            t.update(sz)

    vprint(verbose, "Processing samples")

    out = {k: torch.cat(v, dim=0) for k, v in out.items()}

    return out


def make_input_descriptor_from_int(input_int, **kwargs):
    vassert(input_int in (1, 2), "Supported input slots: 1, 2")
    inputX = f"input{input_int}"
    input = get_kwarg(inputX, kwargs)
    input_desc = {
        "input": input,
        "input_cache_name": get_kwarg(f"{inputX}_cache_name", kwargs),
        "input_model_z_type": get_kwarg(f"{inputX}_model_z_type", kwargs),
        "input_model_z_size": get_kwarg(f"{inputX}_model_z_size", kwargs),
        "input_model_num_classes": get_kwarg(f"{inputX}_model_num_classes", kwargs),
        "input_model_num_samples": get_kwarg(f"{inputX}_model_num_samples", kwargs),
    }
    return input_desc


def prepare_input_from_descriptor(input_desc, **kwargs):
    bad_input = False
    input = input_desc["input"]
    if type(input) is str:
        if input in DATASETS_REGISTRY:
            datasets_root = get_kwarg("datasets_root", kwargs)
            datasets_download = get_kwarg("datasets_download", kwargs)
            fn_instantiate = DATASETS_REGISTRY[input]
            if datasets_root is None:
                datasets_root = os.path.join(torch.hub.get_dir(), "fidelity_datasets")
            datasets_root = os.path.expanduser(datasets_root)
            input = fn_instantiate(datasets_root, datasets_download)
        elif os.path.isdir(input):
            samples_find_deep = get_kwarg("samples_find_deep", kwargs)
            samples_find_ext = get_kwarg("samples_find_ext", kwargs)
            samples_ext_lossy = get_kwarg("samples_ext_lossy", kwargs)
            verbose = get_kwarg("verbose", kwargs)
            input = glob_samples_paths(input, samples_find_deep, samples_find_ext, samples_ext_lossy, verbose)
            vassert(len(input) > 0, f"No samples found in {input} with samples_find_deep={samples_find_deep}")
            samples_resize_and_crop = get_kwarg("samples_resize_and_crop", kwargs)
            input = ImagesPathDataset(input, samples_resize_and_crop=samples_resize_and_crop)
        elif os.path.isfile(input) and input.endswith(".onnx"):
            input = GenerativeModelONNX(
                input,
                input_desc["input_model_z_size"],
                input_desc["input_model_z_type"],
                input_desc["input_model_num_classes"],
            )
        elif os.path.isfile(input) and input.endswith(".pth"):
            input = torch.jit.load(input, map_location="cpu")
            input = GenerativeModelModuleWrapper(
                input,
                input_desc["input_model_z_size"],
                input_desc["input_model_z_type"],
                input_desc["input_model_num_classes"],
            )
        else:
            bad_input = True
    elif isinstance(input, Dataset) or isinstance(input, GenerativeModelBase):
        pass
    else:
        bad_input = True
    vassert(
        not bad_input,
        f"Input descriptor 'input' field can be either an instance of Dataset, GenerativeModelBase class, or a string, "
        f"such as a path to a name of a registered dataset ({', '.join(DATASETS_REGISTRY.keys())}), a directory with "
        f"file samples, or a path to an ONNX or PTH (JIT) module",
    )
    return input


def atomic_torch_save(what, path):
    path = os.path.expanduser(path)
    path_dir = os.path.dirname(path)
    fp = tempfile_named(path_dir)
    torch.save(what, fp)
    fp.close()
    os.replace(fp.name, path)


def tempfile_named(path_dir):
    import tempfile

    os.makedirs(path_dir, exist_ok=True)
    return tempfile.NamedTemporaryFile(delete=False, dir=path_dir)


def extract_featuresdict_from_input_id(input_id, feat_extractor, **kwargs):
    batch_size = get_kwarg("batch_size", kwargs)
    cuda = get_kwarg("cuda", kwargs)
    rng_seed = get_kwarg("rng_seed", kwargs)
    verbose = get_kwarg("verbose", kwargs)
    input_desc = make_input_descriptor_from_int(input_id, **kwargs)
    input = prepare_input_from_descriptor(input_desc, **kwargs)
    if isinstance(input, Dataset):
        save_cpu_ram = get_kwarg("save_cpu_ram", kwargs)
        featuresdict = get_featuresdict_from_dataset(input, feat_extractor, batch_size, cuda, save_cpu_ram, verbose)
    else:
        num_samples = input_desc["input_model_num_samples"]
        vassert(type(num_samples) is int and num_samples > 0, "Number of samples must be positive")
        featuresdict = get_featuresdict_from_generative_model(
            input, feat_extractor, num_samples, batch_size, cuda, rng_seed, verbose
        )
    return featuresdict


def get_cacheable_input_name(input_id, **kwargs):
    input_desc = make_input_descriptor_from_int(input_id, **kwargs)
    return get_cacheable_name_from_descriptor(input_desc)


def get_cacheable_name_from_descriptor(input_desc):
    input = input_desc["input"]
    cache_name = input_desc["input_cache_name"]
    if type(input) is str and input in DATASETS_REGISTRY:
        if cache_name is None:
            cache_name = input
    return cache_name


def extract_featuresdict_from_input_id_cached(input_id, feat_extractor, **kwargs):
    cacheable_input_name = get_cacheable_input_name(input_id, **kwargs)

    def fn_recompute():
        return extract_featuresdict_from_input_id(input_id, feat_extractor, **kwargs)

    if cacheable_input_name is not None:
        feat_extractor_name = feat_extractor.get_name()
        cache_root = get_kwarg("cache_root", kwargs)
        if cache_root is None:
            cache_root = os.path.join(torch.hub.get_dir(), "fidelity_cache")
        cache_root = os.path.expanduser(cache_root)
        item_path = os.path.join(cache_root, f"{cacheable_input_name}-{feat_extractor_name}-features.pt")
        if os.path.exists(item_path):
            vprint(get_kwarg("verbose", kwargs), f"Loading cached {item_path}")
            return torch.load(item_path, map_location="cpu")
        featuresdict = fn_recompute()
        os.makedirs(cache_root, exist_ok=True)
        vprint(get_kwarg("verbose", kwargs), f"Caching {item_path}")
        atomic_torch_save(featuresdict, item_path)
        return featuresdict
    return fn_recompute()
