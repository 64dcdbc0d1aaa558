import json
import logging
import os

import pytest
import torch

import flag_gems

TO_CPU = False
QUICK_MODE = False
RECORD_LOG = False


def pytest_addoption(parser):
    parser.addoption(
        "--ref",
        action="store",
        default="cuda",
        required=False,
        choices=["cuda", "cpu"],
        help="device to run reference tests on",
    )
    parser.addoption(
        "--mode",
        action="store",
        default="normal",
        required=False,
        choices=["normal", "quick"],
        help="run tests on normal or quick mode",
    )
    parser.addoption(
        "--record",
        action="store",
        default="none",
        required=False,
        choices=["none", "log"],
        help="tests function param recorded in log files or not",
    )
    parser.addoption(
        "--gpu-ids",
        action="store",
        default=None,
        help="comma separated GPU ids for xdist workers, e.g. 0,1,2,3",
    )


def pytest_configure(config):
    global TO_CPU
    TO_CPU = config.getoption("--ref") == "cpu"

    global QUICK_MODE
    QUICK_MODE = config.getoption("--mode") == "quick"

    global RECORD_LOG
    RECORD_LOG = config.getoption("--record") == "log"
    if RECORD_LOG:
        cmd_args = [
            arg.replace(".py", "").replace("=", "_").replace("/", "_")
            for arg in config.invocation_params.args
        ]
        logging.basicConfig(
            filename="result_{}.log".format("_".join(cmd_args)).replace("_-", "-"),
            filemode="w",
            level=logging.INFO,
            format="[%(levelname)s] %(message)s",
        )

    # pin each xdist worker to its own GPU so that they do not fight over one device
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    gpu_ids = config.getoption("--gpu-ids")
    if worker is not None and gpu_ids:
        ids = gpu_ids.split(",")
        idx = int(worker.replace("gw", "")) % len(ids)
        os.environ["CUDA_VISIBLE_DEVICES"] = ids[idx]


@pytest.fixture(scope="session", autouse=True)
def enable_gems():
    flag_gems.enable()
    yield


@pytest.fixture(autouse=True)
def free_cache():
    yield
    torch.cuda.empty_cache()


def pytest_runtest_teardown(item, nextitem):
    if not RECORD_LOG:
        return
    if hasattr(item, "callspec"):
        all_params = item.callspec.params
        params = {}
        for k, v in all_params.items():
            param = str(v)
            param = param.replace("torch.", "")
            params[k] = param
        logging.info(json.dumps({item.nodeid.split("::")[-1].split("[")[0]: params}))


def pytest_report_header(config):
    if not torch.cuda.is_available():
        return "flag_gems tests: no GPU visible"
    return "flag_gems tests on {} x {} (torch {}, CUDA {})".format(
        torch.cuda.device_count(),
        torch.cuda.get_device_name(0),
        torch.__version__,
        torch.version.cuda,
    )
