import argparse
import logging
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta

logging.basicConfig(format='%(asctime)s %(levelname)s: %(message)s', level=logging.INFO)
LOGGER = logging.getLogger(__name__)

EXITCODE_OK = 0
EXITCODE_MISSING_DEPENDENCIES = 2
EXITCODE_TRAINING_LIKELY_NOT_FINISHED = 3

# (import name, pip name, minimum version or None)
REQUIRED_PACKAGES = [
    ('numpy', 'numpy', '1.24'),
    ('torch', 'torch', '2.2'),
    ('lightning', 'lightning', '2.1'),
    ('cupy', 'cupy-cuda12x', None),
    ('GPUtil', 'GPUtil', None),
    ('asciimatics', 'asciimatics', None),
    ('chess', 'python-chess', '0.31.4'),
]


def validate_packages():
    import importlib
    ok = True
    for import_name, pip_name, min_version in REQUIRED_PACKAGES:
        try:
            module = importlib.import_module(import_name)
        except ImportError:
            LOGGER.error(f'Missing package {pip_name}. Install it with: pip install {pip_name}')
            ok = False
            continue
        if min_version is not None:
            version = getattr(module, '__version__', '0')
            if tuple(int(x) for x in re.findall(r'\d+', version)[:2]) < tuple(int(x) for x in min_version.split('.')[:2]):
                LOGGER.error(f'Package {pip_name} is too old: {version} < {min_version}')
                ok = False
    return ok


def validate_torch_cuda():
    import torch
    if not torch.cuda.is_available():
        LOGGER.error('No CUDA capable GPU found. Training requires a GPU.')
        return False
    LOGGER.info(f'Found {torch.cuda.device_count()} CUDA device(s): ' +
                ', '.join(torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())))
    return True


class GpuStats:
    '''Periodically polls GPU utilization for the TUI.'''

    def __init__(self, gpu_ids, interval=2.0):
        self.gpu_ids = gpu_ids
        self.interval = interval
        self.lock = threading.Lock()
        self.stats = {}
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self.thread.start()

    def _run(self):
        try:
            import GPUtil
        except ImportError:
            LOGGER.warning('GPUtil not available, GPU stats will not be shown.')
            return
        while True:
            try:
                gpus = GPUtil.getGPUs()
            except Exception as e:
                LOGGER.warning(f'Could not query GPUs: {e}')
                gpus = []
            with self.lock:
                for gpu in gpus:
                    if gpu.id in self.gpu_ids:
                        self.stats[gpu.id] = (gpu.load * 100.0, gpu.memoryUsed, gpu.memoryTotal)
            time.sleep(self.interval)

    def format(self):
        with self.lock:
            lines = []
            for gpu_id in self.gpu_ids:
                if gpu_id in self.stats:
                    load, used, total = self.stats[gpu_id]
                    lines.append(f'GPU {gpu_id}: {load:5.1f}% util, {used:.0f}/{total:.0f} MB')
                else:
                    lines.append(f'GPU {gpu_id}: n/a')
            return '\n'.join(lines)


class TrainingRun:
    '''
    One invocation of train.py. Each run gets its own root dir and its own
    set of devices, so several experiments can share a machine.
    '''

    def __init__(self, run_id, root_dir, nnue_pytorch_directory, training_datasets, validation_datasets,
                 gpu_ids, num_data_loader_threads, num_pytorch_threads, num_epochs, batch_size,
                 features, lr, gamma, start_lambda, end_lambda, seed, epoch_size, validation_size,
                 network_save_period, random_fen_skipping, resume_training=True, additional_args=None):
        self.run_id = run_id
        self.root_dir = root_dir
        self.nnue_pytorch_directory = nnue_pytorch_directory
        self.training_datasets = training_datasets
        self.validation_datasets = validation_datasets
        self.gpu_ids = gpu_ids
        self.num_data_loader_threads = num_data_loader_threads
        self.num_pytorch_threads = num_pytorch_threads
        self.num_epochs = num_epochs
        self.batch_size = batch_size
        self.features = features
        self.lr = lr
        self.gamma = gamma
        self.start_lambda = start_lambda
        self.end_lambda = end_lambda
        self.seed = seed
        self.epoch_size = epoch_size
        self.validation_size = validation_size
        self.network_save_period = network_save_period
        self.random_fen_skipping = random_fen_skipping
        self.resume_training = resume_training
        self.additional_args = additional_args or []
        self.process = None
        self.current_epoch = None
        self.current_loss = None
        self.has_finished = False
        self.has_exited_unexpectedly = False

    def _get_stringified_args(self):
        args = [
            sys.executable,
            os.path.join(self.nnue_pytorch_directory, 'train.py'),
            *self.training_datasets,
            *(f'--validation-data={v}' for v in self.validation_datasets),
            f'--gpus={",".join(str(g) for g in self.gpu_ids)},',
            f'--threads={self.num_pytorch_threads}',
            f'--num-workers={self.num_data_loader_threads}',
            f'--batch-size={self.batch_size}',
            f'--random-fen-skipping={self.random_fen_skipping}',
            f'--features={self.features}',
            f'--lr={self.lr}',
            f'--gamma={self.gamma}',
            f'--start-lambda={self.start_lambda}',
            f'--end-lambda={self.end_lambda}',
            f'--max_epochs={self.num_epochs}',
            f'--seed={self.seed}',
            f'--epoch-size={self.epoch_size}',
            f'--validation-size={self.validation_size}',
            f'--network-save-period={self.network_save_period}',
            f'--default_root_dir={self.root_dir}',
        ]
        args += self.additional_args
        return args

    def run(self):
        os.makedirs(self.root_dir, exist_ok=True)
        cmd = self._get_stringified_args()
        LOGGER.info(f'Run {self.run_id}: {" ".join(cmd)}')
        env = os.environ.copy()
        # Lightning logs a lot about TPUs/IPUs we don't have; keep it quiet.
        env['PYTHONUNBUFFERED'] = '1'
        self.process = subprocess.Popen(cmd, cwd=self.nnue_pytorch_directory, env=env,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        reader = threading.Thread(target=self._read_output, daemon=True)
        reader.start()

    def _read_output(self):
        epoch_re = re.compile(r'Epoch (\d+):')
        loss_re = re.compile(r'train_loss=([0-9.]+)')
        for line in self.process.stdout:
            m = epoch_re.search(line)
            if m:
                self.current_epoch = int(m.group(1))
            m = loss_re.search(line)
            if m:
                self.current_loss = float(m.group(1))
            if 'CUDA out of memory' in line:
                LOGGER.error(f'Run {self.run_id} ran out of GPU memory, consider lowering --batch-size')
        self.process.wait()
        if self.process.returncode == 0:
            self.has_finished = True
        else:
            self.has_exited_unexpectedly = True


def parse_gpu_ids(s):
    return [int(x) for x in s.split(',') if x.strip() != '']


def main():
    parser = argparse.ArgumentParser(description='Easy training of NNUE networks with multiple runs per GPU.')
    parser.add_argument('--training-dataset', type=str, nargs='+', required=True, dest='training_dataset')
    parser.add_argument('--validation-dataset', type=str, nargs='*', default=[], dest='validation_dataset')
    parser.add_argument('--gpus', type=str, default='0', dest='gpus', help='Comma separated GPU ids.')
    parser.add_argument('--runs-per-gpu', type=int, default=1, dest='runs_per_gpu')
    parser.add_argument('--workspace-path', type=str, default='./easy_train_data', dest='workspace_path')
    parser.add_argument('--experiment-name', type=str, required=True, dest='experiment_name')
    parser.add_argument('--batch-size', type=int, default=16384, dest='batch_size')
    parser.add_argument('--num-workers', type=int, default=4, dest='num_workers')
    parser.add_argument('--threads', type=int, default=2, dest='threads')
    parser.add_argument('--max_epoch', type=int, default=400, dest='max_epoch')
    parser.add_argument('--features', type=str, default='HalfKAv2_hm^', dest='features')
    parser.add_argument('--lr', type=float, default=8.75e-4, dest='lr')
    parser.add_argument('--gamma', type=float, default=0.992, dest='gamma')
    parser.add_argument('--start-lambda', type=float, default=1.0, dest='start_lambda')
    parser.add_argument('--end-lambda', type=float, default=0.75, dest='end_lambda')
    parser.add_argument('--seed', type=int, default=42, dest='seed')
    parser.add_argument('--epoch-size', type=int, default=100000000, dest='epoch_size')
    parser.add_argument('--validation-size', type=int, default=1000000, dest='validation_size')
    parser.add_argument('--network-save-period', type=int, default=20, dest='network_save_period')
    parser.add_argument('--random-fen-skipping', type=int, default=3, dest='random_fen_skipping')
    parser.add_argument('--fail-on-experiment-exists', action='store_true', dest='fail_on_experiment_exists')
    args = parser.parse_args()

    if not validate_packages():
        sys.exit(EXITCODE_MISSING_DEPENDENCIES)
    if not validate_torch_cuda():
        sys.exit(EXITCODE_MISSING_DEPENDENCIES)

    experiment_directory = os.path.join(args.workspace_path, 'experiments', f'experiment_{args.experiment_name}')
    if os.path.exists(experiment_directory) and args.fail_on_experiment_exists:
        LOGGER.error(f'Experiment {args.experiment_name} already exists.')
        sys.exit(1)
    nnue_pytorch_directory = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))

    gpu_ids = parse_gpu_ids(args.gpus)
    runs = []
    run_id = 0
    for gpu_id in gpu_ids:
        for _ in range(args.runs_per_gpu):
            root_dir = os.path.join(experiment_directory, 'training', f'run_{run_id}')
            runs.append(TrainingRun(
                run_id=run_id, root_dir=root_dir, nnue_pytorch_directory=nnue_pytorch_directory,
                training_datasets=args.training_dataset, validation_datasets=args.validation_dataset,
                gpu_ids=[gpu_id], num_data_loader_threads=args.num_workers, num_pytorch_threads=args.threads,
                num_epochs=args.max_epoch, batch_size=args.batch_size, features=args.features,
                lr=args.lr, gamma=args.gamma, start_lambda=args.start_lambda, end_lambda=args.end_lambda,
                seed=args.seed + run_id, epoch_size=args.epoch_size, validation_size=args.validation_size,
                network_save_period=args.network_save_period, random_fen_skipping=args.random_fen_skipping))
            run_id += 1

    gpu_stats = GpuStats(gpu_ids)
    gpu_stats.start()

    for run in runs:
        run.run()

    start_time = datetime.now()
    while not all(r.has_finished or r.has_exited_unexpectedly for r in runs):
        time.sleep(30)
        elapsed = datetime.now() - start_time
        LOGGER.info(f'Elapsed {str(elapsed).split(".")[0]}')
        for r in runs:
            LOGGER.info(f'  run {r.run_id}: epoch {r.current_epoch} loss {r.current_loss}')
        LOGGER.info(gpu_stats.format())

    if any(r.has_exited_unexpectedly for r in runs):
        sys.exit(EXITCODE_TRAINING_LIKELY_NOT_FINISHED)
    sys.exit(EXITCODE_OK)


if __name__ == '__main__':
    main()
