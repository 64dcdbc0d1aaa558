import logging
import os

import numpy as np

import torch
import torch.nn.functional

import modelconfigs


def read_npz_training_data(
    npz_files,
    batch_size: int,
    world_size: int,
    rank: int,
    pos_len: int,
    device,
    randomize_symmetries: bool,
    include_meta: bool,
    model_config: modelconfigs.ModelConfig,
):
    rand = np.random.default_rng(seed=list(os.urandom(12)))
    num_bin_features = modelconfigs.get_num_bin_input_features(model_config)
    num_global_features = modelconfigs.get_num_global_input_features(model_config)
    (h_base,h_builder) = build_history_matrices(model_config, device)

    include_qvalues = model_config["version"] >= 16
    # Staging through page-locked host memory lets the H2D copy overlap with the previous step.
    use_pinned = device.type == "cuda"

    def to_device(arr):
        t = torch.from_numpy(arr)
        if use_pinned:
            t = t.pin_memory()
        return t.to(device, non_blocking=use_pinned)

    for npz_file in npz_files:
        with np.load(npz_file) as npz:
            binaryInputNCHWPacked = npz["binaryInputNCHWPacked"]
            globalInputNC = npz["globalInputNC"]
            policyTargetsNCMove = npz["policyTargetsNCMove"].astype(np.float32)
            globalTargetsNC = npz["globalTargetsNC"]
            scoreDistrN = npz["scoreDistrN"].astype(np.float32)
            valueTargetsNCHW = npz["valueTargetsNCHW"].astype(np.float32)
            if include_meta:
                metadataInputNC = npz["metadataInputNC"].astype(np.float32)
            else:
                metadataInputNC = None
            if include_qvalues:
                qValueTargetsNCMove = npz["qValueTargetsNCMove"].astype(np.float32)
            else:
                qValueTargetsNCMove = None
        del npz

        binaryInputNCHW = np.unpackbits(binaryInputNCHWPacked,axis=2)
        assert len(binaryInputNCHW.shape) == 3
        assert binaryInputNCHW.shape[2] == ((pos_len * pos_len + 7) // 8) * 8
        binaryInputNCHW = binaryInputNCHW[:,:,:pos_len*pos_len]
        binaryInputNCHW = np.reshape(binaryInputNCHW, (
            binaryInputNCHW.shape[0], binaryInputNCHW.shape[1], pos_len, pos_len
        )).astype(np.float32)

        assert binaryInputNCHW.shape[1] == num_bin_features
        assert globalInputNC.shape[1] == num_global_features

        num_samples = binaryInputNCHW.shape[0]
        # Just discard stuff that doesn't divide evenly
        num_whole_steps = num_samples // (batch_size * world_size)

        logging.info(f"Beginning {npz_file} with {num_whole_steps * world_size} usable batches, my rank is {rank}")
        for n in range(num_whole_steps):
            start = (n * world_size + rank) * batch_size
            end = start + batch_size

            batch_binaryInputNCHW = to_device(binaryInputNCHW[start:end])
            batch_globalInputNC = to_device(globalInputNC[start:end])
            batch_policyTargetsNCMove = to_device(policyTargetsNCMove[start:end])
            batch_globalTargetsNC = to_device(globalTargetsNC[start:end])
            batch_scoreDistrN = to_device(scoreDistrN[start:end])
            batch_valueTargetsNCHW = to_device(valueTargetsNCHW[start:end])
            if include_meta:
                batch_metadataInputNC = to_device(metadataInputNC[start:end])
            if include_qvalues:
                batch_qValueTargetsNCMove = to_device(qValueTargetsNCMove[start:end])

            (batch_binaryInputNCHW, batch_globalInputNC) = apply_history_matrices(
                model_config, batch_binaryInputNCHW, batch_globalInputNC, batch_globalTargetsNC, h_base, h_builder
            )

            if randomize_symmetries:
                symm = int(rand.integers(0,8))
                batch_binaryInputNCHW = apply_symmetry(batch_binaryInputNCHW, symm)
                batch_policyTargetsNCMove = apply_symmetry_policy(batch_policyTargetsNCMove, symm, pos_len)
                batch_valueTargetsNCHW = apply_symmetry(batch_valueTargetsNCHW, symm)
                if include_qvalues:
                    batch_qValueTargetsNCMove = apply_symmetry_policy(batch_qValueTargetsNCMove, symm, pos_len)

            batch_binaryInputNCHW = batch_binaryInputNCHW.contiguous()
            batch_policyTargetsNCMove = batch_policyTargetsNCMove.contiguous()
            batch_valueTargetsNCHW = batch_valueTargetsNCHW.contiguous()

            batch = dict(
                binaryInputNCHW = batch_binaryInputNCHW,
                globalInputNC = batch_globalInputNC,
                policyTargetsNCMove = batch_policyTargetsNCMove,
                globalTargetsNC = batch_globalTargetsNC,
                scoreDistrN = batch_scoreDistrN,
                valueTargetsNCHW = batch_valueTargetsNCHW,
            )
            if include_meta:
                batch["metadataInputNC"] = batch_metadataInputNC
            if include_qvalues:
                batch["qValueTargetsNCMove"] = batch_qValueTargetsNCMove
            yield batch


def apply_symmetry_policy(tensor, symm, pos_len):
    """Same as apply_symmetry but also handles the pass index"""
    batch_size = tensor.shape[0]
    channels = tensor.shape[1]
    tensor_without_pass = tensor[:,:,:-1].view((batch_size, channels, pos_len, pos_len))
    tensor_transformed = apply_symmetry(tensor_without_pass, symm)
    return torch.cat((
        tensor_transformed.reshape(batch_size, channels, pos_len*pos_len),
        tensor[:,:,-1:]
    ), dim=2)

def apply_symmetry(tensor, symm):
    """
    Apply a symmetry operation to the given tensor.

    Args:
        tensor (torch.Tensor): Tensor to be rotated. (..., W, W)
        symm (int):
            0, 1, 2, 3: Rotation by symm * pi / 2 radians.
            4, 5, 6, 7: Mirror symmetry on top of rotation.
    """
    assert tensor.shape[-1] == tensor.shape[-2]

    if symm == 0:
        return tensor
    if symm == 1:
        return tensor.transpose(-2, -1).flip(-2)
    if symm == 2:
        return tensor.flip(-1).flip(-2)
    if symm == 3:
        return tensor.transpose(-2, -1).flip(-1)
    if symm == 4:
        return tensor.transpose(-2, -1)
    if symm == 5:
        return tensor.flip(-1)
    if symm == 6:
        return tensor.transpose(-2, -1).flip(-1).flip(-2)
    if symm == 7:
        return tensor.flip(-2)


def build_history_matrices(model_config: modelconfigs.ModelConfig, device):
    num_bin_features = modelconfigs.get_num_bin_input_features(model_config)
    assert num_bin_features == 22, "Currently this code is hardcoded for this many features"

    h_base = torch.diag(
        torch.tensor(
            [
                1.0,  # 0
                1.0,  # 1
                1.0,  # 2
                1.0,  # 3
                1.0,  # 4
                1.0,  # 5
                1.0,  # 6
                1.0,  # 7
                1.0,  # 8
                0.0,  # 9   Location of move 1 turn ago
                0.0,  # 10  Location of move 2 turns ago
                0.0,  # 11  Location of move 3 turns ago
                0.0,  # 12  Location of move 4 turns ago
                0.0,  # 13  Location of move 5 turns ago
                1.0,  # 14  Ladder-threatened stone
                0.0,  # 15  Ladder-threatened stone, 1 turn ago
                0.0,  # 16  Ladder-threatened stone, 2 turns ago
                1.0,  # 17
                1.0,  # 18
                1.0,  # 19
                1.0,  # 20
                1.0,  # 21
            ],
            device=device,
            requires_grad=False,
        )
    )
    # Because we have ko features that should only be enabled when the history is,
    # we use the builder to turn them on only when history is present.
    h_base[14, 15] = 1.0
    h_base[14, 16] = 1.0

    h0 = torch.zeros(num_bin_features, num_bin_features, device=device, requires_grad=False)
    # Move 1 turn ago
    h0[9, 9] = 1.0
    # Ladder-threatened stone 1 turn ago
    h0[14, 15] = -1.0
    h0[15, 15] = 1.0
    h0[14, 16] = -1.0
    h0[16, 14] = 1.0

    h1 = torch.zeros(num_bin_features, num_bin_features, device=device, requires_grad=False)
    h1[10, 10] = 1.0
    h1[14, 16] = -1.0
    h1[16, 16] = 1.0

    h2, h3, h4 = (torch.zeros(num_bin_features, num_bin_features, device=device, requires_grad=False) for _ in range(3))
    h2[11, 11] = 1.0
    h3[12, 12] = 1.0
    h4[13, 13] = 1.0

    h_builder = torch.stack([h0, h1, h2, h3, h4], dim=0)
    return (h_base, h_builder)


def apply_history_matrices(model_config, batch_binaryInputNCHW, batch_globalInputNC, batch_globalTargetsNC, h_base, h_builder):
    num_global_features = modelconfigs.get_num_global_input_features(model_config)
    ncols = batch_globalInputNC.shape[1]
    assert ncols == num_global_features
    # include_history: (N, 5) with 1.0 where that move of history should be kept
    include_history = batch_globalTargetsNC[:, 36:41]
    should_stop_history = torch.rand_like(include_history[:, 0:1]) >= 0.98
    include_history[:, 0:1] *= torch.logical_not(should_stop_history).to(torch.float32)
    for i in range(1, 5):
        should_stop_history = torch.logical_or(should_stop_history, torch.rand_like(include_history[:, 0:1]) >= 0.98)
        include_history[:, i:i+1] *= torch.logical_not(should_stop_history).to(torch.float32)

    # include_history: (N,5)
    # bi * ijk -> bjk, (N,5) * (5,n_bin,n_bin) -> (N,n_bin,n_bin)
    h_matrix = h_base + torch.einsum("bi,ijk->bjk", include_history, h_builder)

    # batch_binaryInputNCHW: (N,n_bin_in,pos,pos)
    # h_matrix: (N,n_bin_in,n_bin_out)
    batch_binaryInputNCHW = torch.einsum("bijk,bil->bljk", batch_binaryInputNCHW, h_matrix)

    # First five global inputs are the history of pass moves
    batch_globalInputNC = batch_globalInputNC.clone()
    batch_globalInputNC[:, 0:5] *= include_history
    return batch_binaryInputNCHW, batch_globalInputNC
