#! /usr/bin/env python3
"""Influence functions (Koh & Liang, ICML 2017) with the LiSSA inverse-HVP.

    I_up,loss(z, z_test) = - grad L(z_test)^T  H^-1  grad L(z)

s_test = H^-1 grad L(z_test) is estimated with the stochastic LiSSA recursion
and then dotted with the per-example training gradients.  The training
gradients can be computed either one by one (grad_z) or batched with
torch.func (functorch) vmap, which is ~20x faster on a GPU.
"""
import copy
import json
import logging
import time

import torch
from torch.autograd import grad
from torch.func import functional_call, vmap
from torch.func import grad as func_grad

from pytorch_influence_functions.utils import display_progress


def s_test(z_test, t_test, model, z_loader, gpu=-1, damp=0.01, scale=25.0,
           recursion_depth=5000):
    """s_test can be precomputed for each test point of interest, and then
    multiplied with grad_z to get the desired value for each training point.
    Here, stochastic estimation is used to calculate s_test. s_test is the
    Inverse Hessian Vector Product.

    Arguments:
        z_test: torch tensor, test data points, such as test images
        t_test: torch tensor, contains all test data labels
        model: torch NN, model used to evaluate the dataset
        z_loader: torch Dataloader, can load the training dataset
        gpu: int, GPU id to use if >=0 and -1 means use CPU
        damp: float, dampening factor
        scale: float, scaling factor
        recursion_depth: int, number of iterations aka recursion depth
            should be enough so that the value stabilises.

    Returns:
        h_estimate: list of torch tensors, s_test"""
    v = grad_z(z_test, t_test, model, gpu)
    h_estimate = v.copy()

    ################################
    # TODO: Dynamically set the recursion depth so that iterations stops
    # once h_estimate stabilises
    ################################
    for i in range(recursion_depth):
        # take just one random sample from training dataset
        # easiest way to just use the DataLoader once, break at the end of loop
        #########################
        # TODO: do x, t really have to be chosen RANDOMLY from the train set?
        #########################
        for x, t in z_loader:
            if gpu >= 0:
                x, t = x.cuda(), t.cuda()
            y = model(x)
            loss = calc_loss(y, t)
            params = [p for p in model.parameters() if p.requires_grad]
            hv = hvp(loss, params, h_estimate)
            # Recursively caclulate h_estimate
            h_estimate = [
                _v + (1 - damp) * _h_e - _hv / scale
                for _v, _h_e, _hv in zip(v, h_estimate, hv)]
            break
        display_progress("Calc. s_test recursions: ", i, recursion_depth)
    return h_estimate


def calc_loss(y, t):
    """Calculates the loss

    Arguments:
        y: torch tensor, input with size (minibatch, nr_of_classes)
        t: torch tensor, target expected by loss of size (0 to nr_of_classes-1)

    Returns:
        loss: scalar, the loss"""
    ####################
    # if dim == [0, 1, 3] then dim=0; else dim=1
    ####################
    # y = torch.nn.functional.log_softmax(y, dim=0)
    y = torch.nn.functional.log_softmax(y)
    loss = torch.nn.functional.nll_loss(
        y, t, weight=None, reduction='mean')
    return loss


def grad_z(z, t, model, gpu=-1):
    """Calculates the gradient z. One grad_z should be computed for each
    training sample.

    Arguments:
        z: torch tensor, training data points
            e.g. an image sample (batch_size, 3, 256, 256)
        t: torch tensor, training data labels
        model: torch NN, model used to evaluate the dataset
        gpu: int, device id to use for GPU, -1 for CPU

    Returns:
        grad_z: list of torch tensor, containing the gradients
            from model parameters to loss"""
    model.eval()
    # initialize
    if gpu >= 0:
        z, t = z.cuda(), t.cuda()
    y = model(z)
    loss = calc_loss(y, t)
    # Compute sum of gradients from model parameters to loss
    params = [p for p in model.parameters() if p.requires_grad]
    return list(grad(loss, params, create_graph=True))


def hvp(y, w, v):
    """Multiply the Hessians of y and w by v.
    Uses a backprop-like approach to compute the product between the Hessian
    and another vector efficiently, which even works for large Hessians.
    Example: if: y = 0.5 * w^T A x then hvp(y, w, v) returns and expression
    which evaluates to the same values as (A + A.t) v.

    Arguments:
        y: scalar/tensor, for example the output of the loss function
        w: list of torch tensors, tensors over which the Hessian
            should be constructed
        v: list of torch tensors, same shape as w,
            will be multiplied with the Hessian

    Returns:
        return_grads: list of torch tensors, contains product of Hessian and v.

    Raises:
        ValueError: `y` and `w` have a different length."""
    if len(w) != len(v):
        raise(ValueError("w and v must have the same length."))

    # First backprop
    first_grads = grad(y, w, retain_graph=True, create_graph=True)

    # Elementwise products
    elemwise_products = 0
    for grad_elem, v_elem in zip(first_grads, v):
        elemwise_products += torch.sum(grad_elem * v_elem)

    # Second backprop
    return_grads = grad(elemwise_products, w, create_graph=True)

    return return_grads


def batched_train_grads(model, x, t, gpu=-1):
    """Per-example gradients for a whole batch with torch.func.

    Returns a dict name -> tensor of shape (B, *param.shape)."""
    if gpu >= 0:
        x = x.to(torch.device("cuda:%d" % gpu))
        t = t.to(torch.device("cuda:%d" % gpu))
    params = {k: v.detach() for k, v in model.named_parameters() if v.requires_grad}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def loss_fn(p, b, xi, ti):
        out = functional_call(model, (p, b), (xi.unsqueeze(0),))
        return calc_loss(out, ti.unsqueeze(0))

    per_sample = vmap(func_grad(loss_fn), in_dims=(None, None, 0, 0))(params, buffers, x, t)
    return per_sample


def influence_batched(s_test_vec, model, x, t, n_train, gpu=-1):
    """Influence of every example in the batch (x, t) on the test point whose
    s_test is given, using batched_train_grads."""
    names = [k for k, v in model.named_parameters() if v.requires_grad]
    g = batched_train_grads(model, x, t, gpu)
    total = 0
    for name, s in zip(names, s_test_vec):
        total = total + (g[name] * s.unsqueeze(0)).flatten(1).sum(1)
    return (-total / n_train).detach().cpu()


def calc_influence_single(model, train_loader, test_loader, test_id_num, gpu,
                          recursion_depth, r, s_test_vec=None, time_logging=False,
                          batched=True):
    """Calculates the influences of all training data points on a single
    test dataset image."""
    # Calculate s_test vectors if not provided
    if not s_test_vec:
        z_test, t_test = test_loader.dataset[test_id_num]
        z_test = test_loader.collate_fn([z_test])
        t_test = test_loader.collate_fn([t_test])
        s_test_vec = calc_s_test_single(model, z_test, t_test, train_loader,
                                        gpu, recursion_depth=recursion_depth,
                                        r=r)

    # Calculate the influence function
    train_dataset_size = len(train_loader.dataset)
    influences = []
    if batched:
        for x, t in train_loader:
            influences.extend(influence_batched(s_test_vec, model, x, t, train_dataset_size, gpu).tolist())
            if gpu >= 0:
                torch.cuda.empty_cache()
    else:
        for i in range(train_dataset_size):
            z, t = train_loader.dataset[i]
            z = train_loader.collate_fn([z])
            t = train_loader.collate_fn([t])
            grad_z_vec = grad_z(z, t, model, gpu=gpu)
            tmp_influence = -sum(
                [torch.sum(k * j).data for k, j in zip(grad_z_vec, s_test_vec)]) / train_dataset_size
            influences.append(tmp_influence.cpu())
            display_progress("Calc. influence function: ", i, train_dataset_size)

    harmful = sorted(range(len(influences)), key=lambda k: influences[k])
    helpful = harmful[::-1]

    return influences, harmful, helpful, test_id_num


def calc_s_test_single(model, z_test, t_test, train_loader, gpu=-1,
                       damp=0.01, scale=25, recursion_depth=5000, r=1):
    """Calculates s_test for a single test image taking into account the whole
    training dataset. s_test = invHessian * nabla(Loss(test_img, model params))"""
    s_test_vec_list = []
    for i in range(r):
        s_test_vec_list.append(s_test(z_test, t_test, model, train_loader,
                                      gpu=gpu, damp=damp, scale=scale,
                                      recursion_depth=recursion_depth))
        display_progress("Averaging r-times: ", i, r)

    s_test_vec = s_test_vec_list[0]
    for i in range(1, r):
        s_test_vec += s_test_vec_list[i]

    s_test_vec = [i / r for i in s_test_vec]

    return s_test_vec


def get_default_config():
    """Returns a default config file"""
    config = {
        'outdir': 'outdir',
        'seed': 42,
        'gpu': 0,
        'dataset': 'CIFAR10',
        'num_classes': 10,
        'test_sample_num': 1,
        'test_start_index': 0,
        'recursion_depth': 1,
        'r_averaging': 1,
        'scale': None,
        'damp': None,
        'calc_method': 'img_wise',
        'log_filename': None,
    }

    return config


def save_s_test(s_test_vec, outdir, idx):
    path = "%s/s_test_%06d.s_test" % (outdir, idx)
    torch.save([v.detach().cpu() for v in s_test_vec], path)
    return path


def load_s_test(outdir, idx, gpu=-1):
    """Loads a precomputed s_test vector; moves it to the GPU if gpu >= 0."""
    path = "%s/s_test_%06d.s_test" % (outdir, idx)
    map_location = "cuda:%d" % gpu if gpu >= 0 else "cpu"
    return torch.load(path, map_location=map_location)


def calc_img_wise(config, model, train_loader, test_loader):
    """Calculates the influence function one test point at a time. Calculates
    the `s_test` and `grad_z` values on the fly and discards them afterwards.

    Arguments:
        config: dict, contains the configuration from cli params"""
    influences_meta = copy.deepcopy(config)
    test_sample_num = config['test_sample_num']
    test_start_index = config['test_start_index']
    outdir = config['outdir']

    if config['gpu'] >= 0:
        model = model.cuda(config['gpu'])

    influences = {}
    for j, i in enumerate(range(test_start_index, test_start_index + test_sample_num)):
        start_time = time.time()
        influence, harmful, helpful, _ = calc_influence_single(
            model, train_loader, test_loader, test_id_num=i, gpu=config['gpu'],
            recursion_depth=config['recursion_depth'], r=config['r_averaging'])
        end_time = time.time()

        influences[str(i)] = {}
        _, label = test_loader.dataset[i]
        influences[str(i)]['label'] = label
        influences[str(i)]['num_in_dataset'] = j
        influences[str(i)]['time_calc_influence_s'] = end_time - start_time
        infl = [x.cpu().numpy().tolist() if torch.is_tensor(x) else x for x in influence]
        influences[str(i)]['influence'] = infl
        influences[str(i)]['harmful'] = harmful[:500]
        influences[str(i)]['helpful'] = helpful[:500]

        tmp_influences_path = "%s/influence_results_tmp_%d_%d_last-i_%d.json" % (
            outdir, test_start_index, test_sample_num, i)
        with open(tmp_influences_path, "w") as fp:
            json.dump(influences, fp)
        display_progress("Test samples processed: ", j, test_sample_num)

    logging.info("Influences computed for %d test points in %s", test_sample_num, outdir)
    influences_meta['test_sample_index_list'] = list(range(test_start_index, test_start_index + test_sample_num))
    influences_path = "%s/influence_results_%d_%d.json" % (outdir, test_start_index, test_sample_num)
    with open(influences_path, "w") as fp:
        json.dump({"meta": influences_meta, "influences": influences}, fp)
    return influences


def init_logging(filename=None):
    """Initialises log/stdout output"""
    log_format = "%(asctime)s %(levelname)s: %(message)s"
    logging.basicConfig(level=logging.INFO, format=log_format)
    if filename:
        logging.getLogger().addHandler(logging.FileHandler(filename))
    if torch.cuda.is_available():
        logging.info("CUDA device: %s", torch.cuda.get_device_name(torch.cuda.current_device()))
