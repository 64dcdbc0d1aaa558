"""
Copyright [2022-2023] Victor C Hall

Licensed under the GNU Affero General Public License;
You may not use this code except in compliance with the License.
You may obtain a copy of the License at

    https://www.gnu.org/licenses/agpl-3.0.en.html

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
"""
import logging
import subprocess

import torch
from pynvml.smi import nvidia_smi


class GPU:
    def __init__(self, device: torch.device):
        self.nvsmi = nvidia_smi.getInstance()
        self.device = device

    def get_gpu_memory(self):
        """
        returns the gpu memory usage in MiB as (used, total)
        """
        gpu_query = self.nvsmi.DeviceQuery("memory.used, memory.total")
        gpu_used_mem = int(gpu_query["gpu"][self.device.index]["fb_memory_usage"]["used"])
        gpu_total_mem = int(gpu_query["gpu"][self.device.index]["fb_memory_usage"]["total"])
        return gpu_used_mem, gpu_total_mem

    def driver_version(self) -> str:
        query = self.nvsmi.DeviceQuery("driver_version")
        return str(query.get("driver_version", "unknown"))

    def supports_bf16(self) -> bool:
        """Ampere and newer support native bf16; used to pick the AMP dtype."""
        major, _minor = torch.cuda.get_device_capability(self.device)
        return major >= 8

    def get_gpu_name(self) -> str:
        return torch.cuda.get_device_name(self.device)


def get_gpu_memory_smi(gpu_index: int = 0):
    """
    Fallback that shells out to nvidia-smi; used by the Windows launcher where pynvml is flaky.
    """
    try:
        output = subprocess.check_output(
            [
                "nvidia-smi",
                "--query-gpu=memory.used,memory.total",
                "--format=csv,noheader,nounits",
                f"--id={gpu_index}",
            ],
            encoding="utf-8",
        )
    except (FileNotFoundError, subprocess.CalledProcessError) as e:
        logging.warning(f"nvidia-smi not available: {e}")
        return 0, 0
    used, total = [int(x.strip()) for x in output.strip().split(",")]
    return used, total


def log_gpu_info(device: torch.device):
    gpu = GPU(device)
    used, total = gpu.get_gpu_memory()
    logging.info(f" GPU: {gpu.get_gpu_name()} driver {gpu.driver_version()}")
    logging.info(f" VRAM used: {used} / {total} MiB")
    if not gpu.supports_bf16():
        logging.info(" bf16 not supported on this GPU, AMP will use fp16")
    return gpu
