# Copyright (c) 2017-2019 Uber Technologies, Inc.
# SPDX-License-Identifier: Apache-2.0

import contextlib
import numbers
import os
import shutil
import tempfile
import warnings
from itertools import product

import numpy as np
import pytest
import torch
import torch.cuda
from numpy.testing import assert_allclose
from pytest import approx

torch.set_printoptions(precision=12)

"""
Contains test utilities for assertions, approximate comparison (of tensors and other objects).

Code has been largely adapted from pytorch/test/common.py
Source : https://github.com/pytorch/pytorch/blob/master/test/common.py
"""

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
RESOURCE_DIR = os.path.join(TESTS_DIR, "resources")
EXAMPLES_DIR = os.path.join(os.path.dirname(TESTS_DIR), "examples")


def xfail_param(*args, **kwargs):
    kwargs.setdefault("reason", "unknown")
    return pytest.param(*args, marks=[pytest.mark.xfail(**kwargs)])


def skipif_param(*args, **kwargs):
    return pytest.param(*args, marks=[pytest.mark.skipif(kwargs["condition"], reason=kwargs["reason"])])


def suppress_warnings(fn):
    def wrapper(*args, **kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(*args, **kwargs)

    return wrapper


# backwards compatibility: the name is used all over the suite
requires_cuda = pytest.mark.skipif(
    not torch.cuda.is_available(), reason="cuda is not available"
)

requires_funsor = pytest.mark.skipif(
    "PYRO_TEST_FUNSOR" not in os.environ, reason="funsor tests are slow"
)

requires_horovod = pytest.mark.skipif(
    "PYRO_TEST_HOROVOD" not in os.environ, reason="horovod is not enabled"
)


def get_cpu_type(t):
    assert t.__module__ == "torch.cuda"
    return getattr(torch, t.__class__.__name__)


def get_gpu_type(t):
    assert t.__module__ == "torch"
    return getattr(torch.cuda, t.__name__)


@contextlib.contextmanager
def tensors_default_to(host):
    """
    Context manager to temporarily use Cpu or Cuda tensors in PyTorch.

    :param str host: Either "cuda" or "cpu".
    """
    assert host in ("cpu", "cuda"), host
    old_module, name = torch.Tensor().type().rsplit(".", 1)
    new_module = "torch.cuda" if host == "cuda" else "torch"
    torch.set_default_tensor_type("{}.{}".format(new_module, name))
    try:
        yield
    finally:
        torch.set_default_tensor_type("{}.{}".format(old_module, name))


@contextlib.contextmanager
def freeze_rng_state():
    rng_state = torch.get_rng_state()
    cuda_rng_state = torch.cuda.get_rng_state() if torch.cuda.is_available() else None
    yield
    if cuda_rng_state is not None:
        torch.cuda.set_rng_state(cuda_rng_state)
    torch.set_rng_state(rng_state)


@contextlib.contextmanager
def xfail_if_not_implemented(msg="Not implemented"):
    try:
        yield
    except NotImplementedError as e:
        pytest.xfail(reason="{}: {}".format(msg, e))


@contextlib.contextmanager
def TemporaryDirectory():
    try:
        path = tempfile.mkdtemp()
        yield path
    finally:
        if os.path.exists(path):
            shutil.rmtree(path)


def is_iterable(obj):
    try:
        iter(obj)
        return True
    except BaseException:
        return False


def assert_tensors_equal(a, b, prec=0.0, msg=""):
    assert a.size() == b.size(), msg
    if isinstance(prec, numbers.Number) and prec == 0:
        assert (a == b).all(), msg
        return
    if a.size() == 0 and b.size() == 0:
        return
    b = b.type_as(a)
    b = b.cuda(device=a.get_device()) if a.is_cuda else b.cpu()
    if not a.dtype.is_floating_point:
        assert (a == b).all(), msg
        return
    # check that NaNs are in the same locations
    nan_mask = a != a
    assert torch.equal(nan_mask, b != b), msg
    diff = a - b
    diff[a == b] = 0  # handle inf
    diff[nan_mask] = 0
    if diff.is_signed():
        diff = diff.abs()
    if isinstance(prec, torch.Tensor):
        assert (diff <= prec).all(), msg
    else:
        max_err = diff.max().item()
        assert max_err <= prec, msg


def assert_close(actual, expected, atol=1e-7, rtol=0, msg=""):
    if not msg:
        msg = "{} vs {}".format(actual, expected)
    if isinstance(actual, numbers.Number) and isinstance(expected, numbers.Number):
        assert actual == approx(expected, abs=atol, rel=rtol), msg
    # Placing this as a second check allows for coercing of numeric types above;
    # this can be moved up to harden type checks.
    elif type(actual) != type(expected):
        raise AssertionError(
            "cannot compare {} and {}".format(type(actual), type(expected))
        )
    elif torch.is_tensor(actual) and torch.is_tensor(expected):
        prec = atol + rtol * abs(expected) if rtol > 0 else atol
        assert_tensors_equal(actual, expected, prec, msg)
    elif type(actual) == np.ndarray and type(expected) == np.ndarray:
        assert_allclose(actual, expected, atol=atol, rtol=rtol, equal_nan=True, err_msg=msg)
    elif isinstance(actual, numbers.Number) and isinstance(expected, numbers.Number):
        assert actual == approx(expected, abs=atol, rel=rtol), msg
    elif isinstance(actual, dict):
        assert set(actual.keys()) == set(expected.keys())
        for key, x_val in actual.items():
            assert_close(x_val, expected[key], atol=atol, rtol=rtol, msg="At key{}: {} vs {}".format(key, x_val, expected[key]))
    elif isinstance(actual, str):
        assert actual == expected, msg
    elif is_iterable(actual) and is_iterable(expected):
        assert len(actual) == len(expected), msg
        for xi, yi in zip(actual, expected):
            assert_close(xi, yi, atol=atol, rtol=rtol, msg="{} vs {}".format(xi, yi))
    else:
        assert actual == expected, msg


# TODO: Remove `prec` arg, and move usages to assert_close
def assert_equal(actual, expected, prec=1e-5, msg=""):
    if prec > 0.0:
        return assert_close(actual, expected, atol=prec, msg=msg)
    if not msg:
        msg = "{} vs {}".format(actual, expected)
    if isinstance(actual, numbers.Number) and isinstance(expected, numbers.Number):
        assert actual == expected, msg
    elif torch.is_tensor(actual) and torch.is_tensor(expected):
        assert actual.is_sparse == expected.is_sparse, msg
        assert_tensors_equal(actual, expected, prec, msg)
    else:
        assert actual == expected, msg


def assert_not_equal(x, y, prec=1e-5, msg=""):
    try:
        assert_equal(x, y, prec)
    except AssertionError:
        return
    raise AssertionError(
        "{} \nValues are equal: x={}, y={}, prec={}".format(msg, x, y, prec)
    )


def str_erase_pointers(s):
    """Erases pointers like 0x7ff5f9f73ed0 from a string."""
    return ''.join(c for c in s if not c.isdigit())


def product_params(**kwargs):
    """Cartesian product of keyword argument lists, as pytest params."""
    keys = sorted(kwargs)
    return [dict(zip(keys, vals)) for vals in product(*(kwargs[k] for k in keys))]
