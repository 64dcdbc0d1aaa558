import argparse
import time
import timeit

import pkbar
import torch
import torchani
from torchani.units import hartree2kcalmol

summary = '\n'
runcounter = 0
N = 200
last_time = 0
timers = {}


def time_func(key, func):
    timers[key] = 0

    def wrapper(*args, **kwargs):
        start = timeit.default_timer()
        ret = func(*args, **kwargs)
        sync_cuda(synchronize)
        end = timeit.default_timer()
        timers[key] += end - start
        return ret

    return wrapper


def sync_cuda(sync):
    if sync:
        torch.cuda.synchronize()


def hartree2kcalmol_(x):
    return hartree2kcalmol(x)


def print_timer(label, t):
    if t < 1:
        t = f'{t * 1000:.1f} ms'
    else:
        t = f'{t:.3f} sec'
    print(f'{label} - {t}')


def benchmark(parser, dataset, use_cuda_extension, force_train=False):
    global runcounter
    runcounter += 1
    synchronize = True if parser.synchronize else False
    timers.clear()

    aev_computer = torchani.AEVComputer.like_1x(use_cuda_extension=use_cuda_extension)
    nn = torchani.ANIModel.like_1x()
    model = torch.nn.Sequential(aev_computer, nn).to(parser.device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.000001)
    mse = torch.nn.MSELoss(reduction='none')

    # enable timers
    torchani.aev.cutoff_cosine = time_func('torchani.aev.cutoff_cosine', torchani.aev.cutoff_cosine)
    torchani.aev.radial_terms = time_func('torchani.aev.radial_terms', torchani.aev.radial_terms)
    torchani.aev.angular_terms = time_func('torchani.aev.angular_terms', torchani.aev.angular_terms)
    torchani.aev.compute_shifts = time_func('torchani.aev.compute_shifts', torchani.aev.compute_shifts)
    torchani.aev.neighbor_pairs_nopbc = time_func('torchani.aev.neighbor_pairs_nopbc', torchani.aev.neighbor_pairs_nopbc)
    torchani.aev.triu_index = time_func('torchani.aev.triu_index', torchani.aev.triu_index)
    torchani.aev.cumsum_from_zero = time_func('torchani.aev.cumsum_from_zero', torchani.aev.cumsum_from_zero)
    torchani.aev.triple_by_molecule = time_func('torchani.aev.triple_by_molecule', torchani.aev.triple_by_molecule)
    model[0]._compute_aev = time_func('total', model[0]._compute_aev)
    model[1].forward = time_func('forward', model[1].forward)
    optimizer.step = time_func('optimizer.step', optimizer.step)

    print('=> start training')
    start = time.time()
    loss_time = 0
    force_time = 0

    for epoch in range(0, parser.num_epochs):

        print('Epoch: %d/%d' % (epoch + 1, parser.num_epochs))
        progbar = pkbar.Kbar(target=len(dataset) - 1, width=8)

        for i, properties in enumerate(dataset):
            species = properties['species'].to(parser.device)
            coordinates = properties['coordinates'].to(parser.device).float().requires_grad_(force_train)
            true_energies = properties['energies'].to(parser.device).float()
            num_atoms = (species >= 0).sum(dim=1, dtype=true_energies.dtype)
            if parser.nvtx:
                torch.cuda.nvtx.range_push("network forward")
            _, predicted_energies = model((species, coordinates))
            if parser.nvtx:
                torch.cuda.nvtx.range_pop()
            # TODO add sync after aev is done
            sync_cuda(synchronize)
            energy_loss = (mse(predicted_energies, true_energies) / num_atoms.sqrt()).mean()
            if force_train:
                sync_cuda(synchronize)
                force_coefficient = 0.1
                true_forces = properties['forces'].to(parser.device).float()
                force_start = time.time()
                try:
                    sync_cuda(synchronize)
                    forces = -torch.autograd.grad(predicted_energies.sum(), coordinates, create_graph=True, retain_graph=True)[0]
                    sync_cuda(synchronize)
                except Exception as e:
                    alert('Error: {}'.format(e))
                    return
                force_time += time.time() - force_start
                force_loss = (mse(true_forces, forces).sum(dim=(1, 2)) / num_atoms).mean()
                loss = energy_loss + force_coefficient * force_loss
                sync_cuda(synchronize)
            else:
                loss = energy_loss
            rmse = hartree2kcalmol((mse(predicted_energies, true_energies)).mean()).detach().cpu().numpy()
            progbar.update(i, values=[("rmse", rmse)])
            sync_cuda(synchronize)
            loss_start = time.time()
            optimizer.zero_grad()
            loss.backward()
            sync_cuda(synchronize)
            loss_stop = time.time()
            loss_time += loss_stop - loss_start
            optimizer.step()
            sync_cuda(synchronize)

        checkgpu()
    sync_cuda(synchronize)
    stop = time.time()

    print('=> More detail about benchmark PERCENTAGE (NON JIT)')
    for k in timers:
        if k.startswith('torchani.'):
            print('{} - {:.1f}%'.format(k, timers[k] / (stop - start) * 100))
    total_time = (stop - start) / parser.num_epochs
    loss_time = loss_time / parser.num_epochs
    force_time = force_time / parser.num_epochs
    opti_time = timers['optimizer.step'] / parser.num_epochs
    forward_time = timers['forward'] / parser.num_epochs
    aev_time = timers['total'] / parser.num_epochs
    print_timer('Total AEV', aev_time)
    print_timer('Forward', forward_time)
    print_timer('Backward', loss_time)
    print_timer('Force', force_time)
    print_timer('Optimizer', opti_time)
    print_timer('Others', total_time - loss_time - aev_time - forward_time - opti_time - force_time)
    print_timer('Epoch time', total_time)

    if runcounter == 1:
        global summary
        summary += '\n' + 'RUN'.ljust(27) + 'Total AEV'.ljust(13) + 'Forward'.ljust(13) + 'Backward'.ljust(13) + 'Force'.ljust(13) + \
            'Optimizer'.ljust(13) + 'Others'.ljust(13) + 'Epoch time'.ljust(13) + 'GPU'.ljust(13) + '\n'
    if runcounter >= 0:
        summary += f'{runcounter} {parser.runname}'.ljust(27) + f'{aev_time:.3f} sec'.ljust(13) + f'{forward_time:.3f} sec'.ljust(13) + \
            f'{loss_time:.3f} sec'.ljust(13) + f'{force_time:.3f} sec'.ljust(13) + f'{opti_time:.3f} sec'.ljust(13) + \
            f'{total_time - loss_time - aev_time - forward_time - opti_time - force_time:.3f} sec'.ljust(13) + \
            f'{total_time:.3f} sec'.ljust(13) + f'{checkgpu(silent=True)}'.ljust(13) + '\n'


def alert(text):
    print('\033[91m{}\33[0m'.format(text))  # red


def checkgpu(silent=False):
    # get current device max memory
    i = torch.cuda.device(torch.cuda.current_device()).idx
    GPU_MEM = torch.cuda.max_memory_allocated(i) / 1024 ** 2
    info = f'GPU {i}: {torch.cuda.get_device_name(i)} - {GPU_MEM:.0f} MB'
    if not silent:
        print(info)
    return f'{GPU_MEM:.0f} MB'


if __name__ == "__main__":
    # parse command line arguments
    parser = argparse.ArgumentParser()
    parser.add_argument('dataset_path',
                        help='Path of the dataset, can a hdf5 file \
                            or a directory containing hdf5 files')
    parser.add_argument('-d', '--device',
                        help='Device of modules and tensors',
                        default=('cuda' if torch.cuda.is_available() else 'cpu'))
    parser.add_argument('-b', '--batch_size',
                        help='Number of conformations of each batch',
                        default=2560, type=int)
    parser.add_argument('-y', '--synchronize',
                        action='store_true',
                        help='whether to insert torch.cuda.synchronize() at the end of each function')
    parser.add_argument('-n', '--num_epochs',
                        help='epochs',
                        default=1, type=int)
    parser.add_argument('--nvtx',
                        action='store_true',
                        help='whether to use NVTX ranges for nsys profiling')
    parser = parser.parse_args()

    print('=> loading dataset...')
    shifter = torchani.EnergyShifter(None)
    # parser.batch_size = 1280
    dataset = torchani.data.load(parser.dataset_path, additional_properties=('forces',)).subtract_self_energies(shifter).species_to_indices()
    dataset = dataset.shuffle().collate(parser.batch_size).cache()
    synchronize = True if parser.synchronize else False

    runs = [
        ('cu Energy train', True, False),
        ('py Energy train', False, False),
        ('cu Energy + Force train', True, True),
        ('py Energy + Force train', False, True),
    ]
    for n, (runname, use_cuaev, force_train) in enumerate(runs, 1):
        print(f'=> Test {n}: {"USE" if use_cuaev else "NO"} cuda extension, {runname}')
        torch.cuda.empty_cache()
        parser.runname = runname
        benchmark(parser, dataset, use_cuda_extension=use_cuaev, force_train=force_train)

    print(summary)
