import subprocess
import numpy as np
from visdom import Visdom


def get_avail_gpu():
    '''
    works for linux
    '''
    result = subprocess.run(['nvidia-smi', '--query-gpu=memory.used', '--format=csv,nounits,noheader'],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True)
    gpu_memory = [int(x) for x in result.stdout.decode('utf-8').strip().split('\n')]
    if len(gpu_memory) == 0:
        raise RuntimeError('nvidia-smi did not report any GPU')

    # pick the GPU that currently uses the least memory
    gpu_id = int(np.argmin(gpu_memory))
    print('Using GPU {} ({} MiB in use)'.format(gpu_id, gpu_memory[gpu_id]))
    return gpu_id


def get_num_gpus():
    result = subprocess.run(['nvidia-smi', '-L'], stdout=subprocess.PIPE, check=False)
    return len([l for l in result.stdout.decode('utf-8').split('\n') if l.startswith('GPU')])


class VisdomLinePlotter(object):
    """Plots to Visdom"""
    def __init__(self, env_name='main'):
        self.viz = Visdom()
        self.env = env_name
        self.plots = {}

    def plot(self, var_name, split_name, title_name, x, y):
        if var_name not in self.plots:
            self.plots[var_name] = self.viz.line(X=np.array([x, x]), Y=np.array([y, y]), env=self.env, opts=dict(
                legend=[split_name],
                title=title_name,
                xlabel='Epochs',
                ylabel=var_name
            ))
        else:
            self.viz.line(X=np.array([x]), Y=np.array([y]), env=self.env, win=self.plots[var_name], name=split_name, update='append')


def output2labels(outputs):
    """Convert softmax probability map (n_cells x n_classes) to integer labels."""
    return np.argmax(outputs, axis=-1).astype(np.int32)


def refine_labels_by_neighbours(labels, neighbours, n_iter=3):
    """Majority vote over the 1-ring neighbourhood of every cell (cheap post-processing
    used when pygco is not installed)."""
    labels = labels.copy()
    for _ in range(n_iter):
        new_labels = labels.copy()
        for i, nb in enumerate(neighbours):
            if len(nb) == 0:
                continue
            vals, counts = np.unique(labels[nb], return_counts=True)
            new_labels[i] = vals[np.argmax(counts)]
        labels = new_labels
    return labels
