import os
import smtplib
import json
import numpy as np
import torch
from scipy import interpolate


def move_dict_to_cuda(dictionary_of_tensors, gpu):
    if isinstance(dictionary_of_tensors, dict):
        return {
            key: move_dict_to_cuda(value, gpu)
            for key, value in dictionary_of_tensors.items()
        }
    elif isinstance(dictionary_of_tensors, torch.Tensor):
        return dictionary_of_tensors.to(gpu, dtype=torch.float)
    else:
        return dictionary_of_tensors


def move_list_to_cuda(list_of_dicts, gpu):
    for i in range(len(list_of_dicts)):
        list_of_dicts[i] = move_dict_to_cuda(list_of_dicts[i], gpu)
    return list_of_dicts


def move_batch_to_cuda(batch, gpu):
    # Batches of the warm-start loader are lists of dicts, the standard loader returns a dict
    if isinstance(batch, list):
        return move_list_to_cuda(batch, gpu)
    return move_dict_to_cuda(batch, gpu)


def get_values_from_key(input_list, key):
    # Returns all the values with the same key from
    # a list filled with dicts of the same kind
    out = []
    for i in input_list:
        out.append(i[key])
    return out


def create_save_path(subdir, name):
    # Check if sub-folder exists, and create if necessary
    if not os.path.exists(subdir):
        os.mkdir(subdir)
    # Create a new folder (named after the name defined in the config file)
    path = os.path.join(subdir, name)
    # Check if the folder already exists, else create a new folder
    if os.path.exists(path):
        # Append a counter to the name
        i = 1
        while os.path.exists(path + "_" + str(i)):
            i += 1
        path = path + '_' + str(i)
        os.mkdir(path)
    else:
        os.mkdir(path)
    return path


def get_nth_element_of_all_dict_keys(dict, idx):
    out_dict = {}
    for k in dict.keys():
        d = dict[k][idx]
        if isinstance(d, torch.Tensor):
            out_dict[k] = d.detach().cpu().item()
        else:
            out_dict[k] = d
    return out_dict


def get_number_of_saved_elements(path, template, first=1):
    i = first
    while True:
        if os.path.exists(os.path.join(path, template.format(i))):
            i += 1
        else:
            break
    return range(first, i)


def create_file_path(subdir, name):
    # Check if sub-folder exists, else raise exception
    if not os.path.exists(subdir):
        raise Exception("Path {} does not exist!".format(subdir))
    # Folder exists, create file path
    return os.path.join(subdir, name)


def load_config(path, default_path=None):
    with open(path) as f:
        config = json.load(f)
    if default_path is not None:
        with open(default_path) as f:
            default = json.load(f)
        for k, v in default.items():
            config.setdefault(k, v)
    return config


def forward_interpolate(flow):
    # Warm start: propagate the low resolution flow of the previous sample forward in time.
    # Runs on the CPU (scipy), the result is sent back to the device by the caller.
    flow = flow.detach().cpu().numpy()
    dx, dy = flow[0], flow[1]

    ht, wd = dx.shape
    x0, y0 = np.meshgrid(np.arange(wd), np.arange(ht))

    x1 = x0 + dx
    y1 = y0 + dy

    x1 = x1.reshape(-1)
    y1 = y1.reshape(-1)
    dx = dx.reshape(-1)
    dy = dy.reshape(-1)

    valid = (x1 > 0) & (x1 < wd) & (y1 > 0) & (y1 < ht)
    x1 = x1[valid]
    y1 = y1[valid]
    dx = dx[valid]
    dy = dy[valid]

    flow_x = interpolate.griddata(
        (x1, y1), dx, (x0, y0), method='nearest', fill_value=0)

    flow_y = interpolate.griddata(
        (x1, y1), dy, (x0, y0), method='nearest', fill_value=0)

    flow = np.stack([flow_x, flow_y], axis=0)
    return torch.from_numpy(flow).float()


def send_notification_mail(subject, body, to='me@localhost'):
    # Used to get notified when long evaluation runs on the cluster are done
    try:
        server = smtplib.SMTP('localhost')
        msg = 'Subject: {}\n\n{}'.format(subject, body)
        server.sendmail('eraft@localhost', [to], msg)
        server.quit()
    except Exception as e:
        print('Could not send notification mail: {}'.format(e))
