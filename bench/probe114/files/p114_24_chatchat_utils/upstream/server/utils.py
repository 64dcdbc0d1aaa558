import asyncio
import logging
import multiprocessing as mp
import os
import socket
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Callable, Dict, Generator, List, Literal, Optional, Tuple, Union

import httpx
from fastapi import FastAPI
from langchain.embeddings.base import Embeddings

from configs import (
    EMBEDDING_DEVICE,
    EMBEDDING_MODEL,
    FSCHAT_MODEL_WORKERS,
    HTTPX_DEFAULT_TIMEOUT,
    LLM_DEVICE,
    LLM_MODELS,
    MODEL_PATH,
    ONLINE_LLM_MODEL,
    TEMPERATURE,
    logger,
    log_verbose,
)


async def wrap_done(fn: Callable, event: asyncio.Event):
    """Wrap an awaitable with a event to signal when it's done or an exception is raised."""
    try:
        await fn
    except Exception as e:
        logging.exception(e)
        msg = f"Caught exception: {e}"
        logger.error(f"{e.__class__.__name__}: {msg}", exc_info=e if log_verbose else None)
    finally:
        # Signal the aiter to stop.
        event.set()


def torch_gc():
    try:
        import torch

        if torch.cuda.is_available():  # 清理 CUDA 显存缓存
            # with torch.cuda.device(DEVICE):
            torch.cuda.empty_cache()
            torch.cuda.ipc_collect()
        elif torch.backends.mps.is_available():
            try:
                from torch.mps import empty_cache

                empty_cache()
            except Exception as e:
                msg = (
                    "如果您使用的是 macOS 建议将 pytorch 版本升级至 2.0.0 或更高版本，"
                    "以支持及时清理 torch 产生的内存占用。"
                )
                logger.error(f"{e.__class__.__name__}: {msg}", exc_info=e if log_verbose else None)
    except Exception:
        ...


def get_model_path(model_name: str, type: str = None) -> Optional[str]:
    if type in MODEL_PATH:
        paths = MODEL_PATH[type]
    else:
        paths = {}
        for v in MODEL_PATH.values():
            paths.update(v)

    if path_str := paths.get(model_name):  # 以 "chatglm-6b": "THUDM/chatglm-6b-new" 为例，以下都是支持的路径
        path = Path(path_str)
        if path.is_dir():  # 任意绝对路径
            return str(path)

        root_path = Path(MODEL_ROOT_PATH)
        if root_path.is_dir():
            path = root_path / model_name
            if path.is_dir():  # use key, {MODEL_ROOT_PATH}/chatglm-6b
                return str(path)
            path = root_path / path_str
            if path.is_dir():  # use value, {MODEL_ROOT_PATH}/THUDM/chatglm-6b-new
                return str(path)
            path = root_path / path_str.split("/")[-1]
            if path.is_dir():  # use value split by "/", {MODEL_ROOT_PATH}/chatglm-6b-new
                return str(path)
        return path_str  # THUDM/chatglm06b


MODEL_ROOT_PATH = os.environ.get("MODEL_ROOT_PATH", "")


# 从server_config中获取服务信息
def get_model_worker_config(model_name: str = None) -> dict:
    """
    加载model worker的配置项。
    优先级:FSCHAT_MODEL_WORKERS[model_name] > ONLINE_LLM_MODEL[model_name] > FSCHAT_MODEL_WORKERS["default"]
    """
    from configs.model_config import ONLINE_LLM_MODEL
    from configs.server_config import FSCHAT_MODEL_WORKERS

    config = FSCHAT_MODEL_WORKERS.get("default", {}).copy()
    config.update(ONLINE_LLM_MODEL.get(model_name, {}).copy())
    config.update(FSCHAT_MODEL_WORKERS.get(model_name, {}).copy())

    if model_name in ONLINE_LLM_MODEL:
        config["online_api"] = True
        if provider := config.get("provider"):
            try:
                from server import model_workers

                config["worker_class"] = getattr(model_workers, provider)
            except Exception as e:
                msg = f"在线模型 ‘{model_name}’ 的provider没有正确配置"
                logger.error(f"{e.__class__.__name__}: {msg}", exc_info=e if log_verbose else None)
    # 本地模型
    if model_name in MODEL_PATH["llm_model"]:
        path = get_model_path(model_name)
        config["model_path"] = path
        if path and os.path.isdir(path):
            config["model_path_exists"] = True
        config["device"] = llm_device(config.get("device"))
    return config


def fschat_controller_address() -> str:
    from configs.server_config import FSCHAT_CONTROLLER

    host = FSCHAT_CONTROLLER["host"]
    if host == "0.0.0.0":
        host = "127.0.0.1"
    port = FSCHAT_CONTROLLER["port"]
    return f"http://{host}:{port}"


def detect_device() -> Literal["cuda", "mps", "cpu"]:
    try:
        import torch

        if torch.cuda.is_available():
            return "cuda"
        if torch.backends.mps.is_available():
            return "mps"
    except:
        pass
    return "cpu"


def llm_device(device: str = None) -> Literal["cuda", "mps", "cpu"]:
    device = device or LLM_DEVICE
    if device not in ["cuda", "mps", "cpu"]:
        device = detect_device()
    return device


def embedding_device(device: str = None) -> Literal["cuda", "mps", "cpu"]:
    device = device or EMBEDDING_DEVICE
    if device not in ["cuda", "mps", "cpu"]:
        device = detect_device()
    return device


def run_in_thread_pool(
    func: Callable,
    params: List[Dict] = [],
) -> Generator:
    """
    在线程池中批量运行任务，并将运行结果以生成器的形式返回。
    请确保任务中的所有操作是线程安全的，任务函数请全部使用关键字参数。
    """
    tasks = []
    with ThreadPoolExecutor() as pool:
        for kwargs in params:
            thread = pool.submit(func, **kwargs)
            tasks.append(thread)

        for obj in as_completed(tasks):
            yield obj.result()


def get_httpx_client(
    use_async: bool = False,
    proxies: Union[str, Dict] = None,
    timeout: float = HTTPX_DEFAULT_TIMEOUT,
    **kwargs,
) -> Union[httpx.Client, httpx.AsyncClient]:
    """
    helper to get httpx client with default proxies that bypass local addesses.
    """
    default_proxies = {
        # do not use proxy for locahost
        "all://127.0.0.1": None,
        "all://localhost": None,
    }
    # do not use proxy for user deployed fastchat servers
    for x in [
        fschat_controller_address(),
    ]:
        host = ":".join(x.split(":")[:2])
        default_proxies.update({host: None})

    # get proxies from system envionrent
    default_proxies.update(
        {
            "http://": os.environ.get("http_proxy") or None,
            "https://": os.environ.get("https_proxy") or None,
            "all://": os.environ.get("all_proxy") or None,
        }
    )
    for host in os.environ.get("no_proxy", "").split(","):
        if host := host.strip():
            default_proxies.update({"all://" + host: None})

    # merge default proxies with user provided proxies
    if isinstance(proxies, str):
        proxies = {"all://": proxies}

    if isinstance(proxies, dict):
        default_proxies.update(proxies)

    # construct Client
    kwargs.update(timeout=timeout, proxies=default_proxies)

    if use_async:
        return httpx.AsyncClient(**kwargs)
    else:
        return httpx.Client(**kwargs)


def load_local_embeddings(model: str = None, device: str = embedding_device()) -> Embeddings:
    """
    从缓存中加载embeddings，可以避免多线程时竞争加载。
    """
    from server.knowledge_base.kb_cache.base import embeddings_pool

    model = model or EMBEDDING_MODEL
    return embeddings_pool.load_embeddings(model=model, device=device)


def get_server_configs() -> Dict:
    """
    获取configs中的原始配置项，供前端使用
    """
    from configs.kb_config import DEFAULT_VS_TYPE, CHUNK_SIZE, OVERLAP_SIZE, SCORE_THRESHOLD, VECTOR_SEARCH_TOP_K
    from configs.model_config import LLM_MODELS, HISTORY_LEN, TEMPERATURE
    from configs.prompt_config import PROMPT_TEMPLATES

    _custom = {
        "controller_address": fschat_controller_address(),
    }

    return {**{k: v for k, v in locals().items() if k[0] != "_"}, **_custom}
