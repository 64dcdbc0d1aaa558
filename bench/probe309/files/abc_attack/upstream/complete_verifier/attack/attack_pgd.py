#########################################################################
##   This file is part of the alpha-beta-CROWN verifier              ##
##                                                                     ##
##   Copyright (C) 2021-2024 The alpha-beta-CROWN Team                 ##
##                                                                     ##
##     This program is licensed under the BSD 3-Clause License,        ##
##        contained in the LICENCE file in this directory.             ##
#########################################################################
"""PGD attack used to find counterexamples before (or during) verification."""
import time
import os
import numpy as np
import torch
import torch.nn.functional as F

import arguments
from attack.attack_utils import (build_conditions, test_conditions,
                                 save_cex, check_and_save_cex)


def OSI_init(model, X, y, eps, alpha, num_classes, iter_steps=50, lower_bound=None, upper_bound=None,
             extra_dim=None):
    """Output-diversified initialization (Tashiro et al., 2020)."""
    input_shape = X.size()
    if extra_dim is not None:
        X = X.unsqueeze(1).unsqueeze(1).expand(-1, *extra_dim, *([-1] * (X.ndim - 1)))
    expand_shape = X.size()
    X_init = X.clone().detach()

    X_init = X_init.view(-1, *input_shape[1:])
    w_d = (torch.rand([X_init.shape[0], num_classes], device=X.device) - 0.5) * 2
    if lower_bound is not None:
        lower_bound = lower_bound.expand(X.shape).reshape(-1, *input_shape[1:])
        upper_bound = upper_bound.expand(X.shape).reshape(-1, *input_shape[1:])

    for i in range(iter_steps):
        X_init = X_init.detach().requires_grad_()
        output = model(X_init)
        dot = torch.einsum('...i,...i->...', output, w_d)
        dot.sum().backward()
        with torch.no_grad():
            X_init = X_init + alpha * torch.sign(X_init.grad)
            X_init = torch.max(torch.min(X_init, upper_bound), lower_bound)

    assert (X_init <= upper_bound).all()
    assert (X_init >= lower_bound).all()
    return X_init.view(expand_shape)


def default_adv_saver(adv_example, adv_output, res, data_max, data_min, C_mat, rhs, or_spec_size,
                      lower_bound, upper_bound):
    return None


def default_early_stop_condition(inputs, adv_output, res, data_max, data_min, C_mat, rhs, or_spec_size):
    return res


def default_adv_example_finalizer(model_ori, x, best_deltas, data_max, data_min, C_mat, rhs, cond_mat):
    adv_example = (x + best_deltas[:, None, None, :, :, :, :]).clamp(min=data_min, max=data_max)
    with torch.no_grad():
        adv_output = model_ori(adv_example.view(-1, *adv_example.shape[3:])).view(
            *adv_example.shape[:3], -1)
    return adv_example, adv_output


def attack_with_general_specs(model, X, data_min, data_max, C_mat, rhs_mat, cond_mat, same_number_const,
                              alpha, initialization='uniform', GAMA_loss=False,
                              num_restarts=None, pgd_steps=None, only_replicate_restarts=False):
    r"""Interface to PGD attack with general specifications.

    Args:
        model (torch.nn.Module): PyTorch module under attack.

        x (torch.Tensor): Input image (x_0).
        [batch_size, *x_shape]

        data_min (torch.Tensor): Lower bounds of data input. (e.g., 0 for mnist)
        shape: [batch_size, spec_num, *input_shape].

        data_max (torch.Tensor): Lower bounds of data input. (e.g., 1 for mnist)
        shape: [batch_size, spec_num, *input_shape].

        C_mat (torch.Tensor): [num_example, num_restarts, num_spec, num_output]

        rhs_mat (torch.Tensor): [num_example, num_spec]

        cond_mat (list): [[] * num_example] mark the group of conditions

        same_number_const (bool): if same_number_const is True, it means that
        there are same number of constraints in each group.

        alpha (float): alpha for pgd attack
    """
    device = X.device
    attack_args = arguments.Config['attack']
    num_restarts = num_restarts or attack_args['pgd_restarts']
    num_steps = pgd_steps or attack_args['pgd_steps']
    early_stop = attack_args['pgd_early_stop']
    lr_decay = attack_args['pgd_lr_decay']
    GAMA_loss = attack_args['pgd_loss_mode'] == 'GAMA' or GAMA_loss

    if only_replicate_restarts:
        input_shape = (X.shape[0], *X.shape[2:])
    else:
        input_shape = X.size()
    num_classes = C_mat.shape[-1]

    num_or_spec = len(cond_mat[0])

    extra_dim = (num_restarts, num_or_spec) if only_replicate_restarts is False else (num_restarts,)
    # shape of x: [num_example, *shape_of_x]
    # this is the largest tensor in attack, so chunk it by restarts when
    # it would not fit into GPU memory.
    X_ndim = X.ndim

    X = X.view(X.shape[0], *[1] * len(extra_dim), *X.shape[1:])
    delta_lower_limit = data_min - X
    delta_upper_limit = data_max - X

    X = X.expand(-1, *extra_dim, *(-1,) * (X_ndim - 1))
    extra_dim = (X.shape[1], X.shape[2])

    if initialization == 'osi':
        X_init = OSI_init(model, X, None, None, alpha, num_classes, iter_steps=attack_args['osi_steps'],
                          extra_dim=extra_dim, upper_bound=data_max, lower_bound=data_min)
    if initialization == 'uniform':
        delta = (torch.empty_like(X).uniform_() * (delta_upper_limit - delta_lower_limit) + delta_lower_limit).requires_grad_()
    elif initialization == 'none':
        delta = torch.zeros_like(X).requires_grad_()
    else:
        raise ValueError(f'Unknown initialization method {initialization}')

    best_loss = torch.empty(X.size(0), device=device).fill_(float('-inf'))
    best_delta = torch.zeros(input_shape, device=device)

    opt = torch.optim.Adam([delta], lr=alpha)
    scheduler = torch.optim.lr_scheduler.ExponentialLR(opt, lr_decay)

    for step in range(num_steps):
        inputs = torch.max(torch.min((X + delta), data_max), data_min)
        output = model(inputs.view(-1, *input_shape[1:])).view(
            input_shape[0], *extra_dim, num_classes)

        origin_out = torch.softmax(model(X.reshape(-1, *input_shape[1:])), 1).view(output.shape)
        loss = -(torch.matmul(C_mat, output.unsqueeze(-1)).squeeze(-1) - rhs_mat).sum(-1)
        if GAMA_loss:
            gama_lambda = attack_args['gama_lambda'] * (attack_args['gama_decay'] ** step)
            loss += gama_lambda * ((output - origin_out) ** 2).sum(-1)

        opt.zero_grad(set_to_none=True)
        loss.sum().backward()
        with torch.no_grad():
            attack_loss = loss.view(input_shape[0], -1).max(1)[0]
            improved = attack_loss > best_loss
            best_loss = torch.where(improved, attack_loss, best_loss)
        opt.step()
        scheduler.step()
        with torch.no_grad():
            delta.data = torch.max(torch.min(delta, delta_upper_limit), delta_lower_limit)

        if early_stop and step % 10 == 0:
            res = test_conditions(inputs, output, rhs_mat, cond_mat, same_number_const,
                                  data_max, data_min)
            if res.all():
                print(f'pgd early stop at step {step}')
                break

    return best_delta, delta


def attack(model_ori, x, vnnlib, verified_status, verified_success, crown_filtered_constraints=None,
           initialization='uniform', GAMA_loss=False):
    attack_args = arguments.Config['attack']
    device = x.device
    # FIXME only support single x spec
    max_eps = max([vnn[0][:, 1] - vnn[0][:, 0] for vnn in vnnlib]).max() / 2
    alpha = attack_args['pgd_alpha']
    if alpha == 'auto':
        alpha = max_eps / 4
    else:
        alpha = float(alpha)

    list_target_label_arrays, data_min_repeat, data_max_repeat = build_conditions(x, vnnlib)
    C_mat, rhs_mat, cond_mat, same_number_const = list_target_label_arrays

    if torch.cuda.is_available():
        torch.cuda.synchronize()
    attack_start = time.time()
    best_deltas, last_deltas = attack_with_general_specs(
        model_ori, x, data_min_repeat[:, :len(cond_mat[0]), ...],
        data_max_repeat[:, :len(cond_mat[0]), ...], C_mat, rhs_mat, cond_mat,
        same_number_const, alpha, initialization=initialization, GAMA_loss=GAMA_loss)
    if x.is_cuda:
        torch.cuda.synchronize(device)
    print(f'PGD attack took {time.time() - attack_start:.4f}s')

    attack_image, attack_output = default_adv_example_finalizer(
        model_ori, x, best_deltas, data_max_repeat, data_min_repeat, C_mat, rhs_mat, cond_mat)

    if test_conditions(attack_image.unsqueeze(1), attack_output.unsqueeze(1), rhs_mat, cond_mat,
                       same_number_const, data_max_repeat, data_min_repeat).all():
        print('pgd attack succeed')
        verified_status = 'unsafe-pgd'
        verified_success = True
        # Re-evaluate the counterexample on CPU in float64 to make sure it is
        # not an artifact of GPU floating point error.
        cex = attack_image.detach().cpu().to(torch.float64)
        check_and_save_cex(cex, model_ori, vnnlib,
                           arguments.Config['attack']['cex_path'], verified_status)
    else:
        print('pgd attack failed')

    del best_deltas, last_deltas
    torch.cuda.empty_cache()
    return verified_status, {'attack_images': attack_image,
                             'attack_margins': attack_output,
                             'verified_success': verified_success}
