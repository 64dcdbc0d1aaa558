#!/usr/bin/env python3

# Copyright (c) Facebook, Inc. and its affiliates.
#
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.

"""
Runs a CrypTen example with every party as a local process.

All parties talk over gloo on CPU tensors through a file rendezvous, which is
what the tutorials and unit tests use. For GPU parties, launch one process per
device with the distributed launcher instead and set DISTRIBUTED_BACKEND there.
"""

import logging
import multiprocessing
import os
import uuid

import crypten


class MultiProcessLauncher:

    # run_process_fn will be run in subprocesses.
    def __init__(self, world_size, run_process_fn, fn_args=None):
        env = os.environ.copy()
        env["WORLD_SIZE"] = str(world_size)
        multiprocessing.set_start_method("spawn")

        # Use random file so multiple jobs can be run simultaneously
        INIT_METHOD = "file:///tmp/crypten-rendezvous-{}".format(uuid.uuid1())
        env["RENDEZVOUS"] = INIT_METHOD

        self.processes = []
        for rank in range(world_size):
            process_name = "process " + str(rank)
            process = multiprocessing.Process(
                target=self.__class__._run_process,
                name=process_name,
                args=(rank, world_size, env, run_process_fn, fn_args),
            )
            self.processes.append(process)

        if crypten.mpc.ttp_required():
            ttp_process = multiprocessing.Process(
                target=self.__class__._run_process,
                name="TTP",
                args=(
                    world_size,
                    world_size,
                    env,
                    crypten.mpc.provider.TTPServer,
                    None,
                ),
            )
            self.processes.append(ttp_process)

    @classmethod
    def _run_process(cls, rank, world_size, env, run_process_fn, fn_args):
        for env_key, env_value in env.items():
            os.environ[env_key] = env_value
        os.environ["RANK"] = str(rank)
        # CPU parties only: keep the tutorials reproducible on laptops without a GPU
        os.environ.setdefault("DISTRIBUTED_BACKEND", "gloo")
        orig_logging_level = logging.getLogger().level
        logging.getLogger().setLevel(logging.INFO)
        crypten.init()
        logging.getLogger().setLevel(orig_logging_level)
        if fn_args is None:
            run_process_fn()
        else:
            run_process_fn(fn_args)

    def start(self):
        for process in self.processes:
            process.start()

    def join(self):
        for process in self.processes:
            process.join()
            assert (
                process.exitcode == 0
            ), f"{process.name} has non-zero exit code {process.exitcode}"

    def terminate(self):
        for process in self.processes:
            process.terminate()


def _example_fn(args):
    """Two-party private inner product, mostly as a smoke test of the launcher."""
    import torch

    rank = int(os.environ["RANK"])
    x = torch.arange(args["n"], dtype=torch.float32)
    y = torch.ones(args["n"], dtype=torch.float32)
    x_enc = crypten.cryptensor(x, src=0)
    y_enc = crypten.cryptensor(y, src=1)
    z = (x_enc * y_enc).sum().get_plain_text()
    if rank == 0:
        logging.info("private inner product = %s (expected %s)", z.item(), float((x * y).sum()))


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    launcher = MultiProcessLauncher(2, _example_fn, {"n": 16})
    launcher.start()
    launcher.join()
    launcher.terminate()
