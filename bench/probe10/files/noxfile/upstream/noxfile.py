"""Nox sessions for linting, type checking and the test matrix.

    nox -s lint
    nox -s "tests(device='cpu', torch='2.3')"
    nox -s "tests(device='cuda', torch='2.3')"      # on a GPU box
    nox -s docs
"""
import os
import pathlib
import shutil
import subprocess

import nox

nox.options.sessions = ["lint", "tests"]
nox.options.reuse_existing_virtualenvs = True

ROOT = pathlib.Path(__file__).parent
PYTHON_VERSIONS = ["3.9", "3.10", "3.11"]
TORCH_VERSIONS = ["2.1", "2.3"]
DEVICES = ["cpu", "cuda"]

TORCH_INDEX = {
    "cpu": "https://download.pytorch.org/whl/cpu",
    "cuda": "https://download.pytorch.org/whl/cu121",
}

TORCH_PINS = {
    "2.1": "torch==2.1.2",
    "2.3": "torch==2.3.1",
}

LINT_PATHS = ["src", "tests", "noxfile.py", "setup.py"]


def _gpu_count() -> int:
    """Number of NVIDIA GPUs on this machine (0 if nvidia-smi is missing)."""
    if shutil.which("nvidia-smi") is None:
        return 0
    out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, check=False).stdout
    return sum(1 for line in out.splitlines() if line.startswith("GPU "))


def _install_torch(session: nox.Session, device: str, torch_version: str) -> None:
    session.install(TORCH_PINS[torch_version], "--index-url", TORCH_INDEX[device])


def _pytest_args(session: nox.Session, device: str) -> list:
    args = ["-sv", "--durations=20", f"--junitxml=reports/{device}-{session.python}.xml"]
    if device == "cpu":
        args += ["-m", "not gpu and not multi_gpu"]
    else:
        args += ["-m", "not slow"]
    return args + list(session.posargs) + ["tests/"]


@nox.session(python="3.10")
def lint(session: nox.Session) -> None:
    session.install("ruff==0.4.4", "black==24.4.2")
    session.run("ruff", "check", *LINT_PATHS)
    session.run("black", "--check", *LINT_PATHS)


@nox.session(python="3.10")
def typecheck(session: nox.Session) -> None:
    _install_torch(session, "cpu", TORCH_VERSIONS[-1])
    session.install("-e", ".[typing]")
    session.run("mypy", "src")


@nox.session(python=PYTHON_VERSIONS)
@nox.parametrize("torch_version", TORCH_VERSIONS)
@nox.parametrize("device", DEVICES)
def tests(session: nox.Session, device: str, torch_version: str) -> None:
    if device == "cuda" and _gpu_count() == 0:
        session.skip("no NVIDIA GPU on this machine")

    _install_torch(session, device, torch_version)
    session.install("-e", ".[testing]")

    env = {
        "MYLIB_TEST_DEVICE": device,
        "OMP_NUM_THREADS": "4",
    }
    if device == "cuda":
        env["CUDA_VISIBLE_DEVICES"] = os.environ.get("CUDA_VISIBLE_DEVICES", "0")
        env["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
    session.run("python", "-m", "pytest", *_pytest_args(session, device), env=env)


@nox.session(python="3.10")
def multi_gpu(session: nox.Session) -> None:
    n = _gpu_count()
    if n < 2:
        session.skip("needs at least two GPUs")
    _install_torch(session, "cuda", TORCH_VERSIONS[-1])
    session.install("-e", ".[testing]")
    session.run(
        "torchrun",
        f"--nproc_per_node={n}",
        "-m",
        "pytest",
        "-sv",
        "tests/test_multidevice.py",
        env={"NCCL_DEBUG": "WARN", "MYLIB_TEST_DEVICE": "cuda"},
    )


@nox.session(python="3.10")
def docs(session: nox.Session) -> None:
    _install_torch(session, "cpu", TORCH_VERSIONS[-1])
    session.install("-e", ".[docs]")
    build_dir = ROOT / "docs" / "_build"
    if build_dir.exists():
        shutil.rmtree(build_dir)
    session.run("sphinx-build", "-W", "-b", "html", "docs", str(build_dir / "html"))


@nox.session(python="3.10")
def build(session: nox.Session) -> None:
    session.install("build", "twine")
    dist = ROOT / "dist"
    if dist.exists():
        shutil.rmtree(dist)
    session.run("python", "-m", "build")
    session.run("twine", "check", *[str(p) for p in dist.glob("*")])


@nox.session(python="3.10")
def env_report(session: nox.Session) -> None:
    """Print what the test job sees: python, torch, devices."""
    _install_torch(session, "cpu", TORCH_VERSIONS[-1])
    session.install("-e", ".")
    session.run(
        "python",
        "-c",
        "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available(), torch.cuda.device_count())",
    )
    if _gpu_count():
        session.run("nvidia-smi", external=True)


@nox.session(python=False)
def clean(session: nox.Session) -> None:
    for path in ["build", "dist", "reports", ".pytest_cache", ".mypy_cache"]:
        shutil.rmtree(ROOT / path, ignore_errors=True)
    for egg in ROOT.glob("src/*.egg-info"):
        shutil.rmtree(egg, ignore_errors=True)
