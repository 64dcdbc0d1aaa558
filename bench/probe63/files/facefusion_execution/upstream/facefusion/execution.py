import shutil
import subprocess
import xml.etree.ElementTree as ElementTree
from functools import lru_cache
from typing import Any, Dict, List, Optional, Tuple

from onnxruntime import get_available_providers, set_default_logger_severity

import facefusion.choices
from facefusion.filesystem import resolve_relative_path
from facefusion.typing import ExecutionDevice, ExecutionProvider, ExecutionProviderKey, ValueAndUnit

set_default_logger_severity(3)

EXECUTION_PROVIDER_SET : Dict[ExecutionProviderKey, ExecutionProvider] =\
{
	'cpu': 'CPUExecutionProvider',
	'coreml': 'CoreMLExecutionProvider',
	'cuda': 'CUDAExecutionProvider',
	'directml': 'DmlExecutionProvider',
	'openvino': 'OpenVINOExecutionProvider',
	'rocm': 'ROCMExecutionProvider',
	'tensorrt': 'TensorrtExecutionProvider'
}


def has_execution_provider(execution_provider_key : ExecutionProviderKey) -> bool:
	return execution_provider_key in get_available_execution_providers()


def get_available_execution_providers() -> List[ExecutionProviderKey]:
	inference_execution_providers = get_available_providers()
	available_execution_providers = []

	for execution_provider, execution_provider_value in EXECUTION_PROVIDER_SET.items():
		if execution_provider_value in inference_execution_providers:
			available_execution_providers.append(execution_provider)

	return available_execution_providers


def create_inference_execution_providers(execution_device_id : str, execution_providers : List[ExecutionProviderKey]) -> List[Any]:
	inference_execution_providers : List[Any] = []

	for execution_provider in execution_providers:
		if execution_provider == 'cuda':
			inference_execution_providers.append((EXECUTION_PROVIDER_SET.get(execution_provider),
			{
				'device_id': execution_device_id,
				'cudnn_conv_algo_search': 'EXHAUSTIVE' if use_exhaustive() else 'DEFAULT'
			}))
		if execution_provider == 'tensorrt':
			inference_execution_providers.append((EXECUTION_PROVIDER_SET.get(execution_provider),
			{
				'device_id': execution_device_id,
				'trt_engine_cache_enable': True,
				'trt_engine_cache_path': resolve_relative_path('../.caches'),
				'trt_timing_cache_enable': True,
				'trt_timing_cache_path': resolve_relative_path('../.caches'),
				'trt_builder_optimization_level': 5
			}))
		if execution_provider == 'openvino':
			inference_execution_providers.append((EXECUTION_PROVIDER_SET.get(execution_provider),
			{
				'device_type': 'GPU' if execution_device_id == '0' else 'GPU.' + execution_device_id,
				'precision': 'FP32'
			}))
		if execution_provider in [ 'directml', 'rocm' ]:
			inference_execution_providers.append((EXECUTION_PROVIDER_SET.get(execution_provider),
			{
				'device_id': execution_device_id
			}))
		if execution_provider == 'coreml':
			inference_execution_providers.append(EXECUTION_PROVIDER_SET.get(execution_provider))

	if 'cpu' in execution_providers:
		inference_execution_providers.append(EXECUTION_PROVIDER_SET.get('cpu'))

	return inference_execution_providers


def use_exhaustive() -> bool:
	execution_devices = detect_static_execution_devices()
	product_names = ('GeForce GTX 1630', 'GeForce GTX 1650', 'GeForce GTX 1660')

	return any(execution_device.get('product').get('name').startswith(product_names) for execution_device in execution_devices)


def run_nvidia_smi() -> subprocess.Popen[bytes]:
	commands = [ shutil.which('nvidia-smi'), '--query', '--xml-format' ]
	return subprocess.Popen(commands, stdout = subprocess.PIPE)


@lru_cache(maxsize = None)
def detect_static_execution_devices() -> List[ExecutionDevice]:
	return detect_execution_devices()


def detect_execution_devices() -> List[ExecutionDevice]:
	execution_devices : List[ExecutionDevice] = []

	try:
		output, _ = run_nvidia_smi().communicate()
		root_element = ElementTree.fromstring(output)
	except Exception:
		root_element = ElementTree.Element('xml')

	for gpu_element in root_element.findall('gpu'):
		execution_devices.append(
		{
			'driver_version': root_element.find('driver_version').text,
			'framework':
			{
				'name': 'CUDA',
				'version': root_element.find('cuda_version').text
			},
			'product':
			{
				'vendor': 'NVIDIA',
				'name': gpu_element.find('product_name').text.replace('NVIDIA ', '')
			},
			'video_memory':
			{
				'total': create_value_and_unit(gpu_element.find('fb_memory_usage/total').text),
				'free': create_value_and_unit(gpu_element.find('fb_memory_usage/free').text)
			},
			'temperature':
			{
				'gpu': create_value_and_unit(gpu_element.find('temperature/gpu_temp').text),
				'memory': create_value_and_unit(gpu_element.find('temperature/memory_temp').text)
			},
			'utilization':
			{
				'gpu': create_value_and_unit(gpu_element.find('utilization/gpu_util').text),
				'memory': create_value_and_unit(gpu_element.find('utilization/memory_util').text)
			}
		})

	return execution_devices


def create_value_and_unit(text : str) -> Optional[ValueAndUnit]:
	if ' ' in text:
		value, unit = text.split(' ')

		return\
		{
			'value': int(value),
			'unit': str(unit)
		}
	return None


def resolve_execution_device_id(execution_device_id : Optional[str]) -> str:
	if execution_device_id is None:
		return '0'
	return execution_device_id


def get_default_execution_providers() -> List[ExecutionProviderKey]:
	for execution_provider_key in [ 'tensorrt', 'cuda', 'rocm', 'directml', 'coreml', 'openvino' ]:
		if has_execution_provider(execution_provider_key):
			return [ execution_provider_key, 'cpu' ]
	return [ 'cpu' ]


def limit_execution_queue_count(execution_providers : List[ExecutionProviderKey], execution_queue_count : int) -> int:
	if 'cuda' in execution_providers or 'tensorrt' in execution_providers:
		return execution_queue_count
	return min(execution_queue_count, 1)
