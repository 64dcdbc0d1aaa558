import logging
import os
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, List, Optional, Union

import ray
import torch
from ray.remote_function import RemoteFunction

from nuplan.planning.utils.multithreading.worker_pool import Task, WorkerPool

logger = logging.getLogger(__name__)

# Silent botocore which is polluting the terminal because of serialization and deserialization
# with following message: INFO:botocore.credentials:Credentials found in config file: ~/.aws/config
logging.getLogger('botocore').setLevel(logging.WARNING)


@dataclass(frozen=True)
class WorkerResources:
    """Data class to indicate resources used by workers."""

    number_of_nodes: int  # Number of available independent nodes
    number_of_gpus_per_node: int  # Number of GPUs per node
    # Number of CPU logical cores per node, this can be smaller than
    # current_node_cpu_count if user decides to limit it
    number_of_cpus_per_node: int

    @property
    def number_of_threads(self) -> int:
        """
        :return: the number of available threads across all nodes.
        """
        return self.number_of_nodes * self.number_of_cpus_per_node

    @staticmethod
    def current_node_cpu_count() -> int:
        """
        :return: the number of logical cores on the current machine.
        """
        return os.cpu_count() or 1

    @staticmethod
    def current_node_gpu_count() -> int:
        """
        :return: the number of GPUs on the current machine (0 if CUDA is unavailable).
        """
        return torch.cuda.device_count() if torch.cuda.is_available() else 0


def initialize_ray(
    master_node_ip: Optional[str] = None,
    threads_per_node: Optional[int] = None,
    local_mode: bool = False,
    log_to_driver: bool = True,
    use_distributed: bool = False,
) -> WorkerResources:
    """
    Initialize ray worker.
    ENV_VAR_MASTER_NODE_IP="master node IP".
    ENV_VAR_MASTER_NODE_PASSWORD="password to the master node".
    ENV_VAR_NUM_NODES="number of nodes available".
    :param master_node_ip: if available, ray will connect to remote cluster.
    :param threads_per_node: Number of threads to use per node.
    :param log_to_driver: If true, the output from all of the worker
            processes on all nodes will be directed to the driver.
    :param local_mode: If true, the code will be executed serially. This
            is useful for debugging.
    :param use_distributed: If true, and the env vars are available,
            ray will launch in distributed mode
    :return: created WorkerResources.
    """
    # Env variables which are set through SLURM script
    env_var_master_node_ip = 'ip_head'
    env_var_master_node_password = 'redis_password'
    env_var_num_nodes = 'num_nodes'

    # Read number of CPU cores on current machine
    number_of_cpus_per_node = threads_per_node if threads_per_node else WorkerResources.current_node_cpu_count()
    number_of_gpus_per_node = WorkerResources.current_node_gpu_count()
    if not number_of_gpus_per_node:
        logger.info('Not using GPU in ray')

    # Find a way in how the ray should be initialized
    if master_node_ip and use_distributed:
        # Connect to ray remotely to node ip
        logger.info(f'Connecting to cluster at: {master_node_ip}!')
        ray.init(address=f'ray://{master_node_ip}:10001', local_mode=local_mode, log_to_driver=log_to_driver)
        number_of_nodes = 1
    elif env_var_master_node_ip in os.environ and use_distributed:
        # In this way, we started ray on the current machine which generated password and master node ip:
        # It was started with "ray start --head"
        number_of_nodes = int(os.environ[env_var_num_nodes])
        master_node_ip = os.environ[env_var_master_node_ip].split(':')[0]
        logger.info(f'Connecting as part of a cluster at: {master_node_ip} with {number_of_nodes} nodes!')
        ray.init(
            address='auto',
            _node_ip_address=master_node_ip,
            _redis_password=os.environ[env_var_master_node_password],
            log_to_driver=log_to_driver,
            local_mode=local_mode,
        )
    else:
        # In this case, we will just start ray directly from this script
        number_of_nodes = 1
        logger.info('Starting ray local!')
        ray.init(
            num_cpus=number_of_cpus_per_node,
            num_gpus=number_of_gpus_per_node,
            dashboard_host='0.0.0.0',
            local_mode=local_mode,
            log_to_driver=log_to_driver,
        )

    # Return resources
    return WorkerResources(
        number_of_nodes=number_of_nodes,
        number_of_cpus_per_node=number_of_cpus_per_node,
        number_of_gpus_per_node=number_of_gpus_per_node,
    )


def _ray_object_iterator_wrapper(remote_fn: RemoteFunction, items: List[Any], log_dir: Optional[Path]) -> List[Any]:
    """
    Submits every item as its own ray task and gathers the results in order.
    """
    object_ids = [remote_fn.remote(*args) if isinstance(args, tuple) else remote_fn.remote(args) for args in items]
    return ray.get(object_ids)


def ray_map(task: Task, *item_lists: Iterable[List[Any]], log_dir: Optional[Path] = None) -> List[Any]:
    """
    Initialize ray, align item lists and map each item of a list of arguments to a callable and executes in parallel.
    :param task: callable to be run
    :param item_lists: items to be parallelized
    :param log_dir: directory to store worker logs
    :return: list of outputs
    """
    assert len(item_lists) > 0, 'No map arguments received for mapping'
    assert all(isinstance(items, list) for items in item_lists), 'All map arguments must be lists'
    assert all(len(items) == len(item_lists[0]) for items in item_lists), 'All lists must have equal size'

    remote_fn = ray.remote(task.fn).options(num_gpus=task.num_gpus, num_cpus=task.num_cpus)
    items = list(zip(*item_lists))
    try:
        return _ray_object_iterator_wrapper(remote_fn, items, log_dir)
    except (ray.exceptions.RayTaskError, Exception) as exc:
        ray.shutdown()
        logger.error(f'Ray map failed: {exc}')
        raise


class RayDistributed(WorkerPool):
    """
    This worker uses ray to distribute work across all available threads.
    """

    def __init__(
        self,
        master_node_ip: Optional[str] = None,
        threads_per_node: Optional[int] = None,
        debug_mode: bool = False,
        log_to_driver: bool = True,
        output_dir: Optional[Union[str, Path]] = None,
        logs_subdir: Optional[str] = 'logs',
        use_distributed: bool = False,
    ):
        """
        Initialize ray worker.
        :param master_node_ip: if available, ray will connect to remote cluster.
        :param threads_per_node: Number of threads to use per node.
        :param debug_mode: If true, the code will be executed serially. This
            is useful for debugging.
        :param log_to_driver: If true, the output from all of the worker
                processes on all nodes will be directed to the driver.
        :param output_dir: Experiment output directory.
        :param logs_subdir: Subdirectory inside experiment dir to store worker logs.
        :param use_distributed: Boolean flag to explicitly enable/disable distributed computation
        """
        self._master_node_ip = master_node_ip
        self._threads_per_node = threads_per_node
        self._local_mode = debug_mode
        self._log_to_driver = log_to_driver
        self._log_dir: Optional[Path] = Path(output_dir) / (logs_subdir or '') if output_dir is not None else None
        self._use_distributed = use_distributed
        super().__init__(self.initialize())

    def initialize(self) -> WorkerResources:
        """
        Initialize ray.
        :return: created WorkerResources.
        """
        # In case ray was already running, shut it down. This occurs mainly in tests
        if ray.is_initialized():
            logger.warning('Ray is running, we will shut it down before starting again!')
            ray.shutdown()

        return initialize_ray(
            master_node_ip=self._master_node_ip,
            threads_per_node=self._threads_per_node,
            local_mode=self._local_mode,
            log_to_driver=self._log_to_driver,
            use_distributed=self._use_distributed,
        )

    def shutdown(self) -> None:
        """
        Shutdown the worker and clear memory.
        """
        ray.shutdown()

    def _map(self, task: Task, *item_lists: Iterable[List[Any]], verbose: bool = False) -> List[Any]:
        """Inherited, see superclass."""
        del verbose
        return ray_map(task, *item_lists, log_dir=self._log_dir)  # type: ignore

    def submit(self, task: Task, *args: Any, **kwargs: Any) -> Future[Any]:
        """Inherited, see superclass."""
        remote_fn = ray.remote(task.fn).options(num_gpus=task.num_gpus, num_cpus=task.num_cpus)  # type: ignore
        object_ids: ray._raylet.ObjectRef = remote_fn.remote(*args, **kwargs)
        return object_ids.future()  # type: ignore
