import os
from enum import Enum
from .device_id import DeviceId

#NOTE:  This must be called first before any torch imports in order to work properly!

class DeviceException(Exception):
    pass

class _Device:
    def __init__(self):
        self.set(DeviceId.CPU)

    def is_gpu(self):
        ''' Returns `True` if the current device is GPU, `False` otherwise. '''
        return self.current() is not DeviceId.CPU

    def current(self):
        return self._current_device

    def set(self, device:DeviceId):
        if device == DeviceId.CPU:
            os.environ['CUDA_VISIBLE_DEVICES']=''
        else:
            os.environ['CUDA_VISIBLE_DEVICES']=str(device.value)
            import torch
            torch.backends.cudnn.benchmark=False
            if not torch.cuda.is_available():
                raise DeviceException(
                    'Requested {} but torch cannot see a CUDA device. '
                    'Check the driver / CUDA_VISIBLE_DEVICES, or use DeviceId.CPU.'.format(device.name))

        self._current_device = device
        return device

    def describe(self) -> str:
        ''' Human readable description of the selected device, used in the notebooks' first cell. '''
        if not self.is_gpu():
            return 'CPU'
        import torch  # already imported by set()
        # after CUDA_VISIBLE_DEVICES the selected card is always index 0
        return '{} ({})'.format(self._current_device.name, torch.cuda.get_device_name(0))
