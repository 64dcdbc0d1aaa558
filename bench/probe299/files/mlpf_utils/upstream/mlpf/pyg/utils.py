import json
import logging
import math

import pandas as pd
import torch
import torch.distributed as dist
import torch.utils.data
from torch.optim.lr_scheduler import OneCycleLR, CosineAnnealingLR, ConstantLR

from mlpf.model.logger import _logger

# https://github.com/ahlinist/cmssw/blob/1df62491f48ef964d198f574cdfcccfd17c70425/DataFormats/ParticleFlowReco/interface/PFBlockElement.h#L33
# https://github.com/cms-sw/cmssw/blob/master/DataFormats/ParticleFlowCandidate/src/PFCandidate.cc#L254
CLASS_LABELS = {
    "cms": [0, 211, 130, 1, 2, 22, 11, 13],
    "delphes": [0, 211, 130, 22, 11, 13],
    "clic": [0, 211, 130, 22, 11, 13],
    "clic_hits": [0, 211, 130, 22, 11, 13],
}

CLASS_NAMES_LATEX = {
    "cms": ["none", "Charged Hadron", "Neutral Hadron", "HFEM", "HFHAD", r"$\gamma$", r"$e^\pm$", r"$\mu^\pm$"],
    "delphes": ["none", "Charged Hadron", "Neutral Hadron", r"$\gamma$", r"$e^\pm$", r"$\mu^\pm$"],
    "clic": ["none", "Charged Hadron", "Neutral Hadron", r"$\gamma$", r"$e^\pm$", r"$\mu^\pm$"],
    "clic_hits": ["none", "Charged Hadron", "Neutral Hadron", r"$\gamma$", r"$e^\pm$", r"$\mu^\pm$"],
}

X_FEATURES = {
    "cms": [
        "typ_idx", "pt", "eta", "phi", "e", "layer", "depth", "charge", "trajpoint", "eta_ecal", "phi_ecal",
        "eta_hcal", "phi_hcal", "muon_dt_hits", "muon_csc_hits", "muon_type", "px", "py", "pz", "deltap",
        "sigmadeltap", "gsf_electronseed_trkorecal", "gsf_electronseed_dnn1", "gsf_electronseed_dnn2",
        "gsf_electronseed_dnn3", "gsf_electronseed_dnn4", "gsf_electronseed_dnn5", "num_hits", "cluster_flags",
        "corr_energy", "corr_energy_err", "vx", "vy", "vz", "pterror", "etaerror", "phierror", "lambd",
        "lambdaerror", "theta", "thetaerror",
    ],
    "clic": [
        "type", "pt | et", "eta", "sin_phi", "cos_phi", "p | energy", "chi2 | position.x", "ndf | position.y",
        "dEdx | position.z", "dEdxError | iTheta", "radiusOfInnermostHit | energy_ecal", "tanLambda | energy_hcal",
        "D0 | energy_other", "omega | num_hits", "Z0 | sigma_x", "time | sigma_y", "Null | sigma_z",
    ],
    "delphes": [
        "Track|cluster", "$p_T|E_T$", r"$\eta$", r"$Sin(\phi)$", r"$Cos(\phi)$", "P|E", r"$\eta_\mathrm{out}|E_{em}$",
        r"$Sin(\(phi)_\mathrm{out}|E_{had}$", r"$Cos(\phi)_\mathrm{out}|E_{had}$", "charge", "is_gen_mu", "is_gen_el",
    ],
}

Y_FEATURES = ["cls_id", "charge", "pt", "eta", "sin_phi", "cos_phi", "energy"]
Y_CLASSES = ["cls_id", "charge"]

ELEM_TYPES_NONZERO = {
    "cms": [1, 4, 5, 6, 8, 9, 10, 11],
    "delphes": [1, 2],
    "clic": [1, 2],
    "clic_hits": [1, 2],
}


def unpack_target(y):
    ret = {}
    ret["cls_id"] = y[..., 0].long()
    ret["charge"] = torch.clamp((y[..., 1] + 1).to(dtype=torch.float32), 0, 2)  # -1, 0, 1 -> 0, 1, 2

    for i, feat in enumerate(Y_FEATURES):
        if i >= 2:  # skip the cls and charge as they are defined above
            ret[feat] = y[..., i].to(dtype=torch.float32)
    ret["phi"] = torch.atan2(ret["sin_phi"], ret["cos_phi"])

    # note ~ momentum = ["pt", "eta", "sin_phi", "cos_phi", "energy"]
    ret["momentum"] = y[..., 2:7].to(dtype=torch.float32)
    ret["p4"] = torch.cat(
        [ret["pt"].unsqueeze(-1), ret["eta"].unsqueeze(-1), ret["phi"].unsqueeze(-1), ret["energy"].unsqueeze(-1)], axis=-1
    )

    ret["genjet_idx"] = y[..., -1].long()

    return ret


def unpack_predictions(preds):
    ret = {}
    ret["cls_binary"], ret["cls_id_onehot"], ret["momentum"] = preds

    # ret["charge"] = torch.argmax(ret["charge"], axis=1, keepdim=True) - 1

    # unpacking regression predictions
    ret["pt"] = ret["momentum"][..., 0]
    ret["eta"] = ret["momentum"][..., 1]
    ret["sin_phi"] = ret["momentum"][..., 2]
    ret["cos_phi"] = ret["momentum"][..., 3]
    ret["energy"] = ret["momentum"][..., 4]

    # first get the cases where a particle was predicted
    ret["cls_id"] = torch.argmax(ret["cls_binary"], axis=-1)
    # when a particle was predicted, get the particle ID
    ret["cls_id"][ret["cls_id"] == 1] = torch.argmax(ret["cls_id_onehot"][ret["cls_id"] == 1], axis=-1)

    # get the predicted particle ID
    # ret["cls_id"] = torch.argmax(ret["cls_id_onehot"], axis=-1)

    ret["phi"] = torch.atan2(ret["sin_phi"], ret["cos_phi"])
    ret["p4"] = torch.cat(
        [
            ret["pt"].unsqueeze(axis=-1),
            ret["eta"].unsqueeze(axis=-1),
            ret["phi"].unsqueeze(axis=-1),
            ret["energy"].unsqueeze(axis=-1),
        ],
        axis=-1,
    )

    return ret


def make_loader(dataset, batch_size, collate_fn, sampler, config, rank, use_cuda):
    """
    Build a DataLoader for one split. On GPU, the collated batches are pinned directly for the
    device of this rank so that `batch.to(rank, non_blocking=True)` can overlap with compute.
    """
    return torch.utils.data.DataLoader(
        dataset,
        batch_size=batch_size,
        collate_fn=collate_fn,
        sampler=sampler,
        num_workers=config["num_workers"],
        prefetch_factor=config["prefetch_factor"] if config["num_workers"] > 0 else None,
        pin_memory=use_cuda and config.get("pin_memory", True),
        pin_memory_device="cuda:{}".format(rank) if use_cuda else "",
        persistent_workers=config["num_workers"] > 0,
    )


def gather_num_elements(num_elems, world_size, device):
    """
    Collect the number of (unpadded) elements processed by each rank, for throughput logging.
    """
    t = torch.tensor([num_elems], dtype=torch.int64, device=device)
    if world_size == 1:
        return [num_elems]
    out = [torch.zeros_like(t) for _ in range(world_size)]
    dist.all_gather(out, t)
    return [int(x.item()) for x in out]


def save_checkpoint(checkpoint_path, model, optimizer=None, extra_state=None):
    torch.save(
        {
            "model_state_dict": get_model_state_dict(model),
            "optimizer_state_dict": optimizer.state_dict() if optimizer else None,
            "extra_state": extra_state,
        },
        checkpoint_path,
    )


def load_checkpoint(checkpoint, model, optimizer=None, strict=True):
    if isinstance(model, torch.nn.parallel.DistributedDataParallel):
        missing_keys, unexpected_keys = model.module.load_state_dict(checkpoint["model_state_dict"], strict=strict)
    else:
        missing_keys, unexpected_keys = model.load_state_dict(checkpoint["model_state_dict"], strict=strict)
    _logger.info(f"Loaded model weights, missing={missing_keys}, unexpected={unexpected_keys}")
    if optimizer:
        optimizer.load_state_dict(checkpoint["optimizer_state_dict"])
        return model, optimizer
    else:
        return model


def load_checkpoint_for_inference(path, rank):
    """
    Load a checkpoint written by any rank of a (possibly multi-GPU) training onto `rank`.
    Tensors were saved from cuda:<r>; remap every saved device onto the local one.
    """
    if rank == "cpu":
        map_location = "cpu"
    else:
        map_location = lambda storage, loc: storage.cuda(rank)  # noqa: E731
    return torch.load(path, map_location=map_location)


def get_model_state_dict(model):
    if isinstance(model, torch.nn.parallel.DistributedDataParallel):
        return model.module.state_dict()
    else:
        return model.state_dict()


def get_lr_schedule(config, opt, epochs=None, steps_per_epoch=None, last_epoch=-1):
    # we step the schedule every mini-batch so need to multiply by steps per epoch
    last_batch = last_epoch * steps_per_epoch - 1 if last_epoch != -1 else -1
    if config["lr_schedule"] == "constant":
        lr_schedule = ConstantLR(opt, factor=1.0, total_iters=steps_per_epoch * epochs)
    elif config["lr_schedule"] == "onecycle":
        lr_schedule = OneCycleLR(
            opt,
            max_lr=config["lr"],
            steps_per_epoch=steps_per_epoch,
            epochs=epochs,
            last_epoch=last_batch,
            pct_start=config["lr_schedule_config"]["onecycle"]["pct_start"] or 0.3,
        )
    elif config["lr_schedule"] == "cosinedecay":
        lr_schedule = CosineAnnealingLR(opt, T_max=steps_per_epoch * epochs, last_epoch=last_batch)
    else:
        raise ValueError("Supported values for lr_schedule are 'constant', 'onecycle' and 'cosinedecay'.")
    return lr_schedule


def count_parameters(model):
    column_names = ["Modules", "Trainable parameters", "Non-tranable parameters"]
    table = pd.DataFrame(columns=column_names)
    trainable_params = 0
    nontrainable_params = 0
    for ii, (name, parameter) in enumerate(model.named_parameters()):
        params = parameter.numel()
        if not parameter.requires_grad:
            table = pd.concat([table, pd.DataFrame({column_names[0]: name, column_names[1]: 0, column_names[2]: params}, index=[ii])])
            nontrainable_params += params
        else:
            table = pd.concat([table, pd.DataFrame({column_names[0]: name, column_names[1]: params, column_names[2]: 0}, index=[ii])])
            trainable_params += params
    return trainable_params, nontrainable_params, table


def log_throughput(rank, world_size, num_elems, t_batch, device):
    counts = gather_num_elements(num_elems, world_size, device)
    if rank == 0 or rank == "cpu":
        _logger.info("throughput: {:.1f} elements/s over {} ranks".format(sum(counts) / max(t_batch, 1e-6), world_size))


def get_gpu_info():
    """Short description of the visible accelerators, stored in hyperparameters.json."""
    if not torch.cuda.is_available():
        return {"gpus": 0}
    props = [torch.cuda.get_device_properties(i) for i in range(torch.cuda.device_count())]
    return {
        "gpus": len(props),
        "names": [p.name for p in props],
        "total_memory_gb": [round(p.total_memory / 1024**3, 1) for p in props],
        "compute_capability": ["{}.{}".format(p.major, p.minor) for p in props],
        "cuda": torch.version.cuda,
    }


def json_dump_config(config, outdir):
    with open(f"{outdir}/config.json", "w") as f:
        json.dump({**config, "hardware": get_gpu_info()}, f, indent=2)
