# Copyright (c) OpenMMLab. All rights reserved.
import os
import subprocess
import sys
from typing import List, Literal, Optional, Union

import torch

from .archs import autoget_backend_config, get_task
from .messages import PytorchEngineConfig, TurbomindEngineConfig
from .model import ChatTemplateConfig
from .utils import get_logger

logger = get_logger('lmdeploy')


def _get_max_batch_size(device_type: str = 'cuda') -> int:
    """Pick a default max_batch_size from the accelerator model."""
    assert device_type == 'cuda', f'unsupported device type: {device_type}'
    max_batch_size_map = {'a100': 256, 'a800': 256, 'h100': 512, 'h800': 512}
    device_name = torch.cuda.get_device_name(0).lower()
    for name, size in max_batch_size_map.items():
        if name in device_name:
            return size
    # for devices that are not in `max_batch_size_map`, set
    # the max_batch_size 128
    return 128


def _auto_tp(requested_tp: Optional[int]) -> int:
    """Use every visible GPU when tp is not given."""
    if requested_tp is not None:
        return requested_tp
    num_gpus = torch.cuda.device_count()
    tp = 1
    while tp * 2 <= num_gpus:
        tp *= 2
    return tp


def pipeline(model_path: str,
             backend_config: Optional[Union[TurbomindEngineConfig, PytorchEngineConfig]] = None,
             chat_template_config: Optional[ChatTemplateConfig] = None,
             log_level: str = 'WARNING',
             max_log_len: int = None,
             **kwargs):
    """
    Args:
        model_path (str): the path of a model.
            It could be one of the following options:
                - i) A local directory path of a turbomind model which is
                    converted by `lmdeploy convert` command or download from
                    ii) and iii).
                - ii) The model_id of a lmdeploy-quantized model hosted
                    inside a model repo on huggingface.co, such as
                    "InternLM/internlm-chat-20b-4bit",
                    "lmdeploy/llama2-chat-70b-4bit", etc.
                - iii) The model_id of a model hosted inside a model repo
                    on huggingface.co, such as "internlm/internlm-chat-7b",
                    "Qwen/Qwen-7B-Chat ", "baichuan-inc/Baichuan2-7B-Chat"
                    and so on.
        backend_config (TurbomindEngineConfig | PytorchEngineConfig): backend
            config instance. Default to None.
        chat_template_config (ChatTemplateConfig): chat template configuration.
            Default to None.
        log_level(str): set log level whose value among [CRITICAL, ERROR,
            WARNING, INFO, DEBUG]
        max_log_len(int): Max number of prompt characters or prompt tokens
            being printed in log

    Examples:
        >>> # LLM
        >>> import lmdeploy
        >>> pipe = lmdeploy.pipeline('internlm/internlm-chat-7b')
        >>> response = pipe(['hi','say this is a test'])
        >>> print(response)
    """
    if os.getenv('TM_LOG_LEVEL') is None:
        os.environ['TM_LOG_LEVEL'] = log_level
    from lmdeploy.utils import get_model

    logger.setLevel(log_level)

    # model_path is not local path.
    if not os.path.exists(model_path):
        download_dir = backend_config.download_dir \
            if backend_config is not None else None
        revision = backend_config.revision \
            if backend_config is not None else None
        model_path = get_model(model_path, download_dir, revision)

    task, pipeline_class = get_task(model_path)
    if task == 'vlm':
        if backend_config and backend_config.enable_prefix_caching:
            backend_config.enable_prefix_caching = False
            logger.warning('VLM does not support prefix caching.')

    if type(backend_config) is not PytorchEngineConfig:
        # set auto backend mode
        backend_config = autoget_backend_config(model_path, backend_config)
    backend = 'pytorch' if type(backend_config) is PytorchEngineConfig else 'turbomind'
    logger.info(f'Using {backend} engine')

    if backend_config is None:
        backend_config = PytorchEngineConfig()
    if backend_config.max_batch_size is None:
        backend_config.max_batch_size = _get_max_batch_size('cuda')
    backend_config.tp = _auto_tp(backend_config.tp)

    return pipeline_class(model_path,
                          backend=backend,
                          backend_config=backend_config,
                          chat_template_config=chat_template_config,
                          max_log_len=max_log_len,
                          **kwargs)


def serve(model_path: str,
          model_name: Optional[str] = None,
          backend: Literal['turbomind', 'pytorch'] = 'turbomind',
          backend_config: Optional[Union[TurbomindEngineConfig, PytorchEngineConfig]] = None,
          chat_template_config: Optional[ChatTemplateConfig] = None,
          server_name: str = '0.0.0.0',
          server_port: int = 23333,
          log_level: str = 'ERROR',
          api_keys: Optional[Union[List[str], str]] = None,
          ssl: bool = False,
          gpu_ids: Optional[List[int]] = None,
          **kwargs):
    """This will run the api_server in a subprocess.

    Args:
        model_path (str): the path of a model.
        model_name (str): the name of the served model. It can be accessed
            by the RESTful API `/v1/models`. If it is not specified,
            `model_path` will be adopted
        backend (str): either `turbomind` or `pytorch` backend. Default to
            `turbomind` backend.
        backend_config (TurbomindEngineConfig | PytorchEngineConfig): backend
            config instance. Default to none.
        chat_template_config (ChatTemplateConfig): chat template configuration.
            Default to None.
        server_name (str): host ip for serving
        server_port (int): server port
        log_level(str): set log level whose value among [CRITICAL, ERROR,
            WARNING, INFO, DEBUG]
        api_keys (List[str] | str | None): Optional list of API keys.
        ssl (bool): Enable SSL. Requires OS Environment variables
            'SSL_KEYFILE' and 'SSL_CERTFILE'.
        gpu_ids (List[int]): the GPUs this server instance is pinned to.

    Return:
        APIClient: A client chatbot for LLaMA series models.

    Examples:
        >>> import lmdeploy
        >>> client = lmdeploy.serve('internlm/internlm-chat-7b', 'internlm-chat-7b')
        >>> for output in client.chat('hi', 1):
        ...    print(output)
    """
    import time

    from lmdeploy.serve.openai.api_client import APIClient

    if type(backend_config) is not PytorchEngineConfig:
        # set auto backend mode
        backend_config = autoget_backend_config(model_path, backend_config)
    backend = 'pytorch' if type(backend_config) is PytorchEngineConfig else 'turbomind'

    env = os.environ.copy()
    if gpu_ids is not None:
        env['CUDA_VISIBLE_DEVICES'] = ','.join(str(i) for i in gpu_ids)
    tp = backend_config.tp if backend_config is not None else 1
    cmd = [
        sys.executable, '-m', 'lmdeploy', 'serve', 'api_server', model_path,
        '--model-name', model_name or model_path,
        '--backend', backend,
        '--tp', str(tp),
        '--server-name', server_name,
        '--server-port', str(server_port),
        '--log-level', log_level,
    ]
    if api_keys:
        if isinstance(api_keys, str):
            api_keys = [api_keys]
        cmd += ['--api-keys', *api_keys]
    if ssl:
        cmd += ['--ssl']
    proc = subprocess.Popen(cmd, env=env)

    client = APIClient(f'http://{server_name}:{server_port}')
    while True:
        time.sleep(1)
        if proc.poll() is not None:
            raise RuntimeError(f'api_server exited with code {proc.returncode}')
        try:
            client.available_models
            return client
        except:  # noqa
            pass
