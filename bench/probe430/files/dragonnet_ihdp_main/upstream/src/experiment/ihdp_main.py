import argparse
import copy
import glob
import os
import time

import numpy as np
import torch
import torch.nn as nn
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from torch.utils.data import DataLoader, TensorDataset

from experiment.idhp_data import load_and_format_covariates_ihdp, load_all_other_crap
from experiment.models import (
    binary_classification_loss,
    dragonnet_loss_binarycross,
    make_dragonnet,
    make_tarnet,
    make_tarreg_loss,
    regression_loss,
    track_epsilon,
    treatment_accuracy,
)

USE_CUDA = torch.cuda.is_available()
torch.backends.cudnn.benchmark = True


def _split_output(yt_hat, t, y, y_scaler, x, index):
    q_t0 = y_scaler.inverse_transform(yt_hat[:, 0].copy().reshape(-1, 1)).squeeze()
    q_t1 = y_scaler.inverse_transform(yt_hat[:, 1].copy().reshape(-1, 1)).squeeze()
    g = yt_hat[:, 2].copy()

    if yt_hat.shape[1] == 4:
        eps = yt_hat[:, 3][0]
    else:
        eps = np.zeros_like(yt_hat[:, 2])

    y = y_scaler.inverse_transform(y.copy())
    var = "average propensity for treated: {} and untreated: {}".format(
        g[t.squeeze() == 1.0].mean(), g[t.squeeze() == 0.0].mean()
    )
    print(var)

    return {"q_t0": q_t0, "q_t1": q_t1, "g": g, "t": t, "y": y, "x": x, "index": index, "eps": eps}


def _to_tensor(array):
    tensor = torch.from_numpy(np.asarray(array, dtype=np.float32))
    if USE_CUDA:
        tensor = tensor.cuda(non_blocking=True)
    return tensor


def _predict(model, x):
    model.eval()
    with torch.no_grad():
        out = model(_to_tensor(x))
    return out.cpu().numpy()


def _fit(model, loss_fn, x, yt, optimizer, epochs, batch_size, val_split, patience,
         lr_patience, min_delta, scheduler_min_delta, verbose):
    """Keras-style fit loop: validation split, early stopping on val loss and
    ReduceLROnPlateau on the training loss."""
    x_tr, x_val, yt_tr, yt_val = train_test_split(x, yt, test_size=val_split, shuffle=False)
    train_set = TensorDataset(torch.from_numpy(x_tr).float(), torch.from_numpy(yt_tr).float())
    loader = DataLoader(train_set, batch_size=batch_size, shuffle=True,
                        num_workers=2, pin_memory=USE_CUDA, drop_last=False)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(
        optimizer, mode="min", factor=0.5, patience=lr_patience,
        threshold=scheduler_min_delta, threshold_mode="abs", min_lr=0)
    x_val_t, yt_val_t = _to_tensor(x_val), _to_tensor(yt_val)

    best_val, best_state, wait = np.inf, None, 0
    for epoch in range(epochs):
        model.train()
        running = 0.0
        for xb, yb in loader:
            if USE_CUDA:
                xb, yb = xb.cuda(non_blocking=True), yb.cuda(non_blocking=True)
            optimizer.zero_grad()
            pred = model(xb)
            loss = loss_fn(yb, pred) + _l2(model)
            if torch.isnan(loss):
                print("NaN loss at epoch {}, terminating".format(epoch))
                return
            loss.backward()
            optimizer.step()
            running += loss.item()
        scheduler.step(running)

        model.eval()
        with torch.no_grad():
            val_pred = model(x_val_t)
            val_loss = (loss_fn(yt_val_t, val_pred) + _l2(model)).item()
        if verbose:
            print("epoch {:3d}  loss {:.4f}  val_loss {:.4f}  eps {:.4f}".format(
                epoch, running, val_loss, track_epsilon(yt_val_t, val_pred).item()))
        if val_loss < best_val - min_delta:
            best_val, wait = val_loss, 0
            best_state = copy.deepcopy(model.state_dict())
        else:
            wait += 1
            if wait > patience:
                break
    if best_state is not None:
        model.load_state_dict(best_state)


def _l2(model):
    core = model.module if isinstance(model, nn.DataParallel) else model
    return core.l2_penalty()


def train_and_predict_dragons(t, y_unscaled, x, targeted_regularization=True, output_dir='',
                              knob_loss=dragonnet_loss_binarycross, ratio=1., dragon='',
                              val_split=0.2, batch_size=64):
    verbose = 0
    y_scaler = StandardScaler().fit(y_unscaled)
    y = y_scaler.transform(y_unscaled)
    train_outputs = []
    test_outputs = []

    if dragon == 'tarnet':
        dragonnet = make_tarnet(x.shape[1], 0.01)
    elif dragon == 'dragonnet':
        print("I am here making dragonnet")
        dragonnet = make_dragonnet(x.shape[1], 0.01)

    if USE_CUDA:
        dragonnet = dragonnet.cuda()
        if torch.cuda.device_count() > 1:
            print("Let's use", torch.cuda.device_count(), "GPUs!")
            dragonnet = nn.DataParallel(dragonnet)

    metrics = [regression_loss, binary_classification_loss, treatment_accuracy, track_epsilon]

    if targeted_regularization:
        loss = make_tarreg_loss(ratio=ratio, dragonnet_loss=knob_loss)
    else:
        loss = knob_loss

    # for reporducing the IHDP experimemt

    i = 0
    torch.manual_seed(i)
    np.random.seed(i)
    train_index, test_index = train_test_split(np.arange(x.shape[0]), test_size=0, random_state=1)
    test_index = train_index

    x_train, x_test = x[train_index], x[test_index]
    y_train, y_test = y[train_index], y[test_index]
    t_train, t_test = t[train_index], t[test_index]

    yt_train = np.concatenate([y_train, t_train], 1)

    initial_weights = copy.deepcopy(dragonnet.state_dict())

    if USE_CUDA:
        torch.cuda.synchronize()
    start_time = time.time()

    optimizer = torch.optim.Adam(dragonnet.parameters(), lr=1e-3)
    _fit(dragonnet, loss, x_train, yt_train, optimizer, epochs=100, batch_size=batch_size,
         val_split=val_split, patience=2, lr_patience=5, min_delta=0., scheduler_min_delta=1e-8,
         verbose=verbose)

    optimizer = torch.optim.SGD(dragonnet.parameters(), lr=1e-5, momentum=0.9, nesterov=True)
    _fit(dragonnet, loss, x_train, yt_train, optimizer, epochs=300, batch_size=batch_size,
         val_split=val_split, patience=40, lr_patience=5, min_delta=0., scheduler_min_delta=0.,
         verbose=verbose)

    if USE_CUDA:
        torch.cuda.synchronize()  # wait for queued kernels before reading the clock
        print("peak GPU memory: {:.1f} MiB".format(torch.cuda.max_memory_allocated() / 2 ** 20))
    elapsed_time = time.time() - start_time
    print("***************************** elapsed_time is: ", elapsed_time)

    yt_hat_test = _predict(dragonnet, x_test)
    yt_hat_train = _predict(dragonnet, x_train)

    test_outputs += [_split_output(yt_hat_test, t_test, y_test, y_scaler, x_test, test_index)]
    train_outputs += [_split_output(yt_hat_train, t_train, y_train, y_scaler, x_train, train_index)]

    if output_dir:
        core = dragonnet.module if isinstance(dragonnet, nn.DataParallel) else dragonnet
        torch.save(core.state_dict(), os.path.join(output_dir, "{}_weights.pt".format(dragon)))

    dragonnet.load_state_dict(initial_weights)
    if USE_CUDA:
        torch.cuda.empty_cache()

    return test_outputs, train_outputs


def load_pretrained(dragon, input_dim, weights_path):
    model = make_tarnet(input_dim, 0.01) if dragon == 'tarnet' else make_dragonnet(input_dim, 0.01)
    state = torch.load(weights_path, map_location="cuda:0" if USE_CUDA else "cpu")
    model.load_state_dict(state)
    return model.cuda() if USE_CUDA else model


def run_ihdp(data_base_dir='/Users/claudiashi/data/ihdp_csv', output_dir='~/result/ihdp/',
             knob_loss=dragonnet_loss_binarycross,
             ratio=1., dragon=''):
    print("the dragon is {}".format(dragon))

    simulation_files = sorted(glob.glob("{}/*.csv".format(data_base_dir)))

    for idx, simulation_file in enumerate(simulation_files):

        simulation_output_dir = os.path.join(output_dir, str(idx))

        os.makedirs(simulation_output_dir, exist_ok=True)

        x = load_and_format_covariates_ihdp(simulation_file)
        t, y, y_cf, mu_0, mu_1 = load_all_other_crap(simulation_file)
        np.savez_compressed(os.path.join(simulation_output_dir, "simulation_outputs.npz"),
                            t=t, y=y, y_cf=y_cf, mu_0=mu_0, mu_1=mu_1)

        for is_targeted_regularization in [True, False]:
            print("Is targeted regularization: {}".format(is_targeted_regularization))
            test_outputs, train_output = train_and_predict_dragons(t, y, x,
                                                                   targeted_regularization=is_targeted_regularization,
                                                                   output_dir=simulation_output_dir,
                                                                   knob_loss=knob_loss, ratio=ratio, dragon=dragon,
                                                                   val_split=0.2, batch_size=64)

            if is_targeted_regularization:
                train_output_dir = os.path.join(simulation_output_dir, "targeted_regularization")
            else:
                train_output_dir = os.path.join(simulation_output_dir, "baseline")
            os.makedirs(train_output_dir, exist_ok=True)

            # save the outputs of for each split (1 per npz file)
            for num, output in enumerate(test_outputs):
                np.savez_compressed(os.path.join(train_output_dir, "{}_replication_test.npz".format(num)),
                                    **output)

            for num, output in enumerate(train_output):
                np.savez_compressed(os.path.join(train_output_dir, "{}_replication_train.npz".format(num)),
                                    **output)


def turn_knob(data_base_dir='/Users/claudiashi/data/test/', knob='dragonnet',
              output_base_dir=''):
    output_dir = os.path.join(output_base_dir, knob)

    if knob == 'dragonnet':
        run_ihdp(data_base_dir=data_base_dir, output_dir=output_dir, dragon='dragonnet')

    if knob == 'tarnet':
        run_ihdp(data_base_dir=data_base_dir, output_dir=output_dir, dragon='tarnet')


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--data_base_dir', type=str, help="path to directory LBIDD")
    parser.add_argument('--knob', type=str, default='early_stopping',
                        help="dragonnet or tarnet")

    parser.add_argument('--output_base_dir', type=str, help="directory to save the output")

    args = parser.parse_args()
    print("Running on {}".format("GPU" if USE_CUDA else "CPU"))
    turn_knob(args.data_base_dir, args.knob, args.output_base_dir)


if __name__ == '__main__':
    main()
