# Labels for probe99 (LLM evaluation harnesses / benchmarking suites, CUDA -> Ascend NPU).
# One entry per upstream file; one C(...) per line a careful porter would edit.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


NO_AUTOLOAD = ("the torch 2.0/2.1-era stack this script targets has no device-backend autoload (only torch>=2.5 "
               "loads torch_npu implicitly), so torch.npu / 'npu' devices do not exist without this import")

# ---------------------------------------------------------------------------------------------
# lm-evaluation-harness
# ---------------------------------------------------------------------------------------------
E("lmeval_hflm", "lm_eval/models/huggingface.py", "device_branch_or_abstraction",
  "lm-evaluation-harness HFLM wrapper (device pick, accelerate DP, parallelize=True, auto batch size)", [
    C("gpus = torch.cuda.device_count()", "torch_cuda_api", "add_branch", True,
      "gpus = torch.npu.device_count() if is_torch_npu_available() else torch.cuda.device_count()",
      "returns 0 on an NPU host: the model is never moved to the device (`gpus >= 1` guard) and the "
      "accelerate data-parallel setup (`gpus > 1`) is skipped, so every rank silently evaluates everything on CPU"),
    C('["cuda", "cpu"]', "device_type", "add_branch", True,
      '["cuda", "cpu", "npu"]',
      "device='npu' is not in the accepted list, so it falls through to 'Device not specified' and the CPU"),
    C('+ [f"cuda:{i}" for i in range(torch.cuda.device_count())]', "device_type", "add_branch", True,
      '+ [f"cuda:{i}" for i in range(torch.cuda.device_count())] + [f"npu:{i}" for i in range(torch.npu.device_count())]',
      "indexed NPU devices (npu:1 ...) must be accepted as well"),
    C('torch.device("cuda")', "device_type", "add_branch", True,
      'torch.device("npu") if is_torch_npu_available() else torch.device("cuda")',
      "default device when none is given; on NPU this path silently selects the CPU"),
    C("=if torch.cuda.is_available()", "torch_cuda_api", "add_branch", True,
      "if (is_torch_npu_available() or torch.cuda.is_available())",
      "is_available() is False on an NPU host, so the conditional expression picks torch.device('cpu')"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "add_branch", False,
      "if torch.cuda.is_available() or is_torch_npu_available():",
      "debug-only headroom log; on NPU it is silently skipped, nothing breaks"),
    C("free_bytes, total_bytes = torch.cuda.mem_get_info()", "torch_cuda_api", "add_branch", False,
      "free_bytes, total_bytes = (torch.npu if is_torch_npu_available() else torch.cuda).mem_get_info()",
      "debug log only; torch.npu.mem_get_info is the supported NPU form"),
])

E("lmeval_models_utils", "lm_eval/models/utils.py", "device_branch_or_abstraction",
  "lm-evaluation-harness lm_eval/models/utils.py (Collator, stop criteria, clear_torch_cache)", [
    C("torch.cuda.empty_cache()", "torch_cuda_api", "add_branch", False,
      "torch.npu.empty_cache() if is_torch_npu_available() else torch.cuda.empty_cache()",
      "torch.cuda.empty_cache() returns without doing anything when CUDA was never initialised, so on NPU the "
      "cached blocks are simply not released between batch-size probes: memory headroom only, no error"),
])

E("lmeval_vllm", "lm_eval/models/vllm_causallms.py", "device_branch_or_abstraction",
  "lm-evaluation-harness vLLM backend (tensor_parallel_size, ray data parallelism)", [
    C('assert "cuda" in device or device is None, "vLLM only supports CUDA"', "device_type", "replace", False,
      'assert device is None or any(d in device for d in ("cuda", "npu")), "vLLM only supports CUDA/NPU"',
      "only trips if the user passes device=npu; with the default 'cuda' the value is unused and vLLM "
      "(vllm-ascend plugin) detects the platform itself"),
    C("@ray.remote(num_gpus=1 if self.tensor_parallel_size == 1 else None)", "distributed_framework", "replace", True,
      '@ray.remote(resources={"NPU": 1} if self.tensor_parallel_size == 1 else None)',
      "an NPU host advertises no GPU resource to Ray, so a num_gpus=1 task is never scheduled and data_parallel_size>1 "
      "hangs; the Ray resource name 'NPU' is from Ray's accelerator support and is unconfirmed in the knowledge notes"),
])

E("lmeval_mamba", "lm_eval/models/mamba_lm.py", "explicit_replacement",
  "lm-evaluation-harness mamba_ssm backend", [
    C("from mamba_ssm.utils.hf import load_config_hf", "custom_cuda_extension", "replace", True,
      "from transformers import MambaConfig",
      "mamba_ssm ships nvcc-built selective-scan / causal-conv1d kernels with no Ascend build; use the pure-torch "
      "transformers Mamba implementation instead"),
    C("self._config = load_config_hf(pretrained)", "custom_cuda_extension", "replace", True,
      "self._config = MambaConfig.from_pretrained(pretrained)",
      "follows from dropping mamba_ssm"),
    C("from mamba_ssm.models.mixer_seq_simple import MambaLMHeadModel", "custom_cuda_extension", "replace", True,
      "from transformers import MambaForCausalLM",
      "mamba_ssm cannot be installed on an NPU host"),
    C("self._model = MambaLMHeadModel.from_pretrained(", "custom_cuda_extension", "replace", True,
      "self._model = MambaForCausalLM.from_pretrained(",
      "transformers' Mamba takes the slow pure-torch path when mamba_ssm kernels are absent (needs -hf checkpoints)"),
])

E("lmeval_tests_gpu", "tests/models/test_huggingface_gpu.py", "explicit_replacement",
  "lm-evaluation-harness style GPU smoke tests for HFLM (pytest skipif guards)", [
    C('not torch.cuda.is_available(), reason="requires a CUDA device"', "torch_cuda_api", "replace", True,
      'not torch.npu.is_available(), reason="requires an NPU device"',
      "unchanged, every accelerator test is silently skipped on the NPU host, so the port is never exercised"),
    C('torch.cuda.device_count() < 2, reason="requires at least 2 GPUs"', "torch_cuda_api", "replace", True,
      'torch.npu.device_count() < 2, reason="requires at least 2 NPUs"',
      "device_count() is 0 on NPU: the parallelize test is always skipped"),
    C('return HFLM(pretrained=TEST_MODEL, device="cuda", dtype="float16", batch_size=8)', "device_type", "replace", True,
      'return HFLM(pretrained=TEST_MODEL, device="npu", dtype="float16", batch_size=8)',
      "'cuda' is not usable on an NPU host"),
    C("assert param.is_cuda", "device_type", "replace", True,
      "assert param.is_npu",
      "is_cuda is False for NPU tensors, the assertion fails"),
    C('assert str(gpu_lm.device).startswith("cuda")', "device_type", "replace", True,
      'assert str(gpu_lm.device).startswith("npu")',
      "device string is npu / npu:N"),
    C('device="cuda:0"', "device_type", "replace", True,
      'lm = HFLM(pretrained=TEST_MODEL, device="npu:0", dtype="float16", batch_size="auto", max_batch_size=32)',
      "explicit cuda:0 device"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "silent no-op when CUDA was never initialised; cleanup only"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()",
      "resolves the current CUDA device and raises on a host without CUDA"),
    C("peak_mb = torch.cuda.max_memory_allocated() / 2**20", "torch_cuda_api", "replace", True,
      "peak_mb = torch.npu.max_memory_allocated() / 2**20",
      "returns 0 when CUDA is uninitialised, so the memory assertion passes vacuously (silently wrong)"),
])

E("lmeval_pyproject", "pyproject.toml", "device_branch_or_abstraction",
  "lm-evaluation-harness pyproject.toml optional extras", [
    C('gptq = ["auto-gptq[triton]>=0.6.0"]', "custom_cuda_extension", "removal", False, None,
      "auto-gptq's CUDA/exllama/Triton kernels have no Ascend build; optional extra, only fails if selected (unconfirmed)"),
    C('neuronx = ["optimum[neuronx]"]', "import_torch_npu", "npu_only_addition", False,
      'npu = ["torch-npu"]',
      "an opt-in extra for the Ascend stack; torch-npu must match the installed torch exactly, so it is not a hard dep"),
    C('mamba = ["mamba_ssm", "causal-conv1d==1.0.2"]', "custom_cuda_extension", "replace", False,
      'mamba = ["transformers>=4.39.0"]',
      "mamba_ssm / causal-conv1d compile CUDA kernels and fail to build on an NPU host; optional extra"),
    C('vllm = ["vllm>=0.4.2"]', "custom_cuda_extension", "replace", False,
      'vllm = ["vllm", "vllm-ascend"]',
      "the stock vLLM wheel is CUDA-built; on Ascend the vllm-ascend hardware plugin is needed; optional extra"),
])

E("lmeval_launch_sh", "scripts/run_leaderboard_eval.sh", "explicit_replacement",
  "shell launcher for lm-eval leaderboard runs (accelerate DP / parallelize / vLLM TP)", [
    C("=set -euo pipefail", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "torch_npu fails to import (libhccl.so / libascendcl.so not found) unless the CANN environment is sourced"),
    C('if [[ -z "${CUDA_VISIBLE_DEVICES:-}" ]]; then', "env_var", "replace", True,
      'if [[ -z "${ASCEND_RT_VISIBLE_DEVICES:-}" ]]; then',
      "the Ascend runtime reads ASCEND_RT_VISIBLE_DEVICES"),
    C("export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((NUM_GPUS - 1)))", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=$(seq -s, 0 $((NUM_GPUS - 1)))",
      "CUDA_VISIBLE_DEVICES is ignored on NPU, every card stays visible"),
    C('echo "Using GPUs: ${CUDA_VISIBLE_DEVICES}"', "env_var", "replace", True,
      'echo "Using NPUs: ${ASCEND_RT_VISIBLE_DEVICES}"',
      "with `set -u` the script aborts on the now-unset CUDA_VISIBLE_DEVICES"),
    C("nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv", "torch_cuda_api", "replace", True,
      "npu-smi info",
      "nvidia-smi does not exist on an Ascend host and `set -e` aborts the script"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None,
      "NCCL-only knob, no HCCL counterpart; ignored on NPU"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False,
      "export HCCL_SOCKET_IFNAME=eth0",
      "HCCL_SOCKET_IFNAME selects the host NIC for HCCL; single-node run, so the default choice usually works"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False,
      "export HCCL_ASYNC_ERROR_HANDLING=1",
      "torch_npu watchdog variable; documented default is already 1"),
    C('--model_args "pretrained=${MODEL},dtype=bfloat16,attn_implementation=flash_attention_2"', "attention_kernel",
      "replace", True,
      '--model_args "pretrained=${MODEL},dtype=bfloat16,attn_implementation=sdpa"',
      "flash-attn cannot be installed on NPU; SDPA dispatches to the NPU fused attention kernel"),
    C("--device cuda \\", "device_type", "replace", True,
      "--device npu \\",
      "with parallelize=True HFLM keeps this device for its input tensors, so 'cuda' fails"),
])

# ---------------------------------------------------------------------------------------------
# OpenCompass
# ---------------------------------------------------------------------------------------------
E("oc_eval_config", "configs/eval_llama3_qwen2_chat.py", "explicit_replacement",
  "OpenCompass eval config (HF + vLLM model dicts, run_cfg num_gpus, LocalRunner)", [
    C("attn_implementation='flash_attention_2',", "attention_kernel", "replace", True,
      "attn_implementation='sdpa',",
      "flash_attention_2 needs the flash-attn package, which has no NPU build; sdpa uses the NPU fused kernel"),
    C("model_kwargs=dict(device_map='cuda:0', torch_dtype='torch.bfloat16'),", "device_type", "replace", True,
      "model_kwargs=dict(device_map='npu:0', torch_dtype='torch.bfloat16'),",
      "explicit CUDA device map"),
])

E("oc_local_runner", "opencompass/runners/local.py", "device_branch_or_abstraction",
  "OpenCompass LocalRunner (packs tasks onto free GPUs via CUDA_VISIBLE_DEVICES prefixes)", [
    C("tmpl = 'CUDA_VISIBLE_DEVICES=' + ','.join(str(i) for i in gpu_ids)", "env_var", "add_branch", True,
      "tmpl = ('ASCEND_RT_VISIBLE_DEVICES=' if is_npu_available() else 'CUDA_VISIBLE_DEVICES=') + ','.join(str(i) for i in gpu_ids)",
      "the per-task device pinning is ignored on NPU: every task lands on npu:0 and they OOM / contend"),
    C("if 'CUDA_VISIBLE_DEVICES' in os.environ:", "env_var", "add_branch", True,
      "if 'ASCEND_RT_VISIBLE_DEVICES' in os.environ or 'CUDA_VISIBLE_DEVICES' in os.environ:",
      "the user's card restriction on Ascend is ASCEND_RT_VISIBLE_DEVICES"),
    C("os.getenv('CUDA_VISIBLE_DEVICES'))", "env_var", "add_branch", True,
      "os.getenv('ASCEND_RT_VISIBLE_DEVICES') or os.getenv('CUDA_VISIBLE_DEVICES'))",
      "read the visible-card list from the Ascend variable"),
    C("all_gpu_ids = list(range(torch.cuda.device_count()))", "torch_cuda_api", "add_branch", True,
      "all_gpu_ids = list(range(torch.npu.device_count() if is_npu_available() else torch.cuda.device_count()))",
      "0 on NPU, so the GPU pool is empty and any task with num_gpus>0 trips `assert len(gpus) >= num_gpus`"),
])

E("oc_slurm_runner", "opencompass/runners/slurm.py", "device_branch_or_abstraction",
  "OpenCompass SlurmRunner (srun --gres=gpu:N)", [
    C("tmpl += f' --gres=gpu:{num_gpus}'", "device_type", "add_branch", False,
      "tmpl += f' --gres={self.gres_name}:{num_gpus}'  # 'npu' on Ascend partitions",
      "the generic-resource name is site configuration (gres.conf); Ascend clusters commonly name it npu, "
      "but that is unconfirmed here"),
])

E("oc_hf_model", "opencompass/models/huggingface.py", "explicit_replacement",
  "OpenCompass HuggingFace model wrapper (_load_model, generate, get_ppl)", [
    C("not torch.cuda.is_bf16_supported():", "torch_cuda_api", "replace", True,
      "not torch.npu.is_bf16_supported():",
      "torch.cuda.is_bf16_supported() cannot query a CUDA device on an NPU host (raises or reports False), so bf16 "
      "configs are silently downgraded to fp16 or crash"),
    C("self.model = self.model.to(f'cuda:{torch.cuda.current_device()}')", "tensor_to_device", "replace", True,
      "self.model = self.model.to(f'npu:{torch.npu.current_device()}')",
      "torch.cuda.current_device() raises without CUDA; model must go to the runner-assigned NPU"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "silent no-op on NPU; only affects cached memory between ppl batches"),
])

E("oc_collect_env", "opencompass/utils/collect_env.py", "device_branch_or_abstraction",
  "OpenCompass / mmengine collect_env for bug reports", [
    C("cuda_available = torch.cuda.is_available()", "torch_cuda_api", "add_branch", False,
      "npu_available = hasattr(torch, 'npu') and torch.npu.is_available()  # + NPU names via torch.npu.get_device_name, CANN version",
      "diagnostics only: on NPU the report just says 'CUDA available: False' and omits the accelerator; "
      "nvcc / nvidia-smi lines below sit inside the CUDA branch and are never reached"),
])

E("oc_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "OpenCompass evaluation Docker image (CUDA base, flash-attn, vLLM, LMDeploy)", [
    C("FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04", "custom_cuda_extension", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "the image needs CANN (and its set_env exports) instead of the CUDA toolkit; base image tag is illustrative"),
    C("ENV CUDA_HOME=/usr/local/cuda", "env_var", "removal", False, None,
      "no CUDA toolkit in the image; harmless leftover"),
    C('ENV TORCH_CUDA_ARCH_LIST="8.0 8.6 8.9 9.0+PTX"', "env_var", "removal", False, None,
      "only read by nvcc extension builds; harmless"),
    C("RUN pip install torch==2.1.2 torchvision==0.16.2 --index-url https://download.pytorch.org/whl/cu121",
      "import_torch_npu", "replace", True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post10 --extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu wheels pair with an exact torch version (2.1.0, not 2.1.2) and the CPU torch build; torch-npu itself must be installed"),
    C("RUN pip install flash-attn==2.5.6 --no-build-isolation", "attention_kernel", "removal", True, None,
      "flash-attn needs nvcc / CUDA and fails to build, breaking `docker build`"),
    C("RUN pip install vllm==0.4.0 lmdeploy==0.2.6", "custom_cuda_extension", "removal", True, None,
      "CUDA wheels; vllm 0.4.0 also pulls torch 2.1.2+cu121 over the NPU-matched torch; use a vllm-ascend image for the vLLM backend"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False,
      "ENV ASCEND_VISIBLE_DEVICES=all",
      "read by the NVIDIA container runtime only; on Ascend the Docker runtime / --device flags decide (value 'all' unconfirmed)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA container runtime knob, ignored on Ascend"),
])

# ---------------------------------------------------------------------------------------------
# FastChat / MT-Bench
# ---------------------------------------------------------------------------------------------
E("fastchat_gen_answer", "fastchat/llm_judge/gen_model_answer.py", "explicit_replacement",
  "FastChat llm_judge gen_model_answer.py (MT-Bench answers, ray num_gpus_per_model)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401", NO_AUTOLOAD),
    C("get_answers_func = ray.remote(num_gpus=num_gpus_per_model)(", "distributed_framework", "replace", True,
      'get_answers_func = ray.remote(resources={"NPU": num_gpus_per_model})(',
      "Ray sees no GPUs on an Ascend host, so the num_gpus workers never start; Ray's 'NPU' resource name is "
      "unconfirmed in the knowledge notes"),
    C('device="cuda",', "device_type", "replace", True,
      'device="npu",',
      "load_model needs the NPU branch (see fastchat_model_adapter)"),
    C("torch.as_tensor(input_ids).cuda(),", "tensor_to_device", "replace", True,
      "torch.as_tensor(input_ids).npu(),",
      ".cuda() raises on a host without CUDA"),
])

E("fastchat_model_adapter", "fastchat/model/model_adapter.py", "device_branch_or_abstraction",
  "FastChat model_adapter.load_model device branches", [
    C('elif device == "cuda":', "device_type", "add_branch", True,
      'elif device == "npu": kwargs = {"torch_dtype": torch.float16}  # new branch before this one, same num_gpus/max_memory handling',
      "without an npu branch load_model raises ValueError('Invalid device: npu')"),
    C('="xpu",', "device_type", "add_branch", True,
      '"xpu", "npu",',
      "single-card NPU models must be moved with model.to(device); otherwise they stay on CPU and the .npu() inputs mismatch"),
    C('choices=["cpu", "cuda", "mps", "xpu"],', "device_type", "add_branch", True,
      'choices=["cpu", "cuda", "mps", "xpu", "npu"],',
      "argparse rejects --device npu"),
])

E("fastchat_utils", "fastchat/utils.py", "device_branch_or_abstraction",
  "FastChat fastchat/utils.py get_gpu_memory", [
    C("=torch.cuda.device_count()", "torch_cuda_api", "add_branch", True,
      "_accel().device_count()  # _accel() -> torch.npu on Ascend, else torch.cuda",
      "0 on NPU: the max_memory map for multi-card loading is built from an empty list (KeyError)"),
    C("else min(max_gpus, torch.cuda.device_count())", "torch_cuda_api", "add_branch", True,
      "else min(max_gpus, _accel().device_count())",
      "same as above"),
    C("with torch.cuda.device(gpu_id):", "torch_cuda_api", "add_branch", True,
      "with _accel().device(gpu_id):",
      "raises on a host without CUDA once the loop runs"),
    C("device = torch.cuda.current_device()", "torch_cuda_api", "add_branch", True,
      "device = _accel().current_device()",
      "raises without CUDA"),
    C("gpu_properties = torch.cuda.get_device_properties(device)", "torch_cuda_api", "add_branch", True,
      "gpu_properties = _accel().get_device_properties(device)",
      "NPU properties expose total_memory, which is all this uses"),
    C("allocated_memory = torch.cuda.memory_allocated() / (1024**3)", "torch_cuda_api", "add_branch", True,
      "allocated_memory = _accel().memory_allocated() / (1024**3)",
      "would report 0 allocated (uninitialised CUDA) and overstate free memory"),
])

E("fastchat_mtbench_sh", "scripts/run_mt_bench.sh", "explicit_replacement",
  "MT-Bench end-to-end launcher (gen_model_answer + GPT-4 judge)", [
    C("=set -e", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced before torch_npu can load"),
    C("BUSY=$(nvidia-smi", "torch_cuda_api", "replace", False,
      "BUSY=$(npu-smi info -t usages -i 0 | awk -F: '/HBM Usage Rate/ {if ($2+0 > 5) print}' | wc -l)",
      "nvidia-smi is missing, but the pipeline's exit status is wc's, so BUSY=0 and the busy-card check silently passes"),
    C("export CUDA_VISIBLE_DEVICES=${GPU_IDS}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPU_IDS}",
      "the card subset is ignored on NPU; Ray and the workers see and use every NPU"),
    C("unset CUDA_VISIBLE_DEVICES", "env_var", "replace", False,
      "unset ASCEND_RT_VISIBLE_DEVICES",
      "judging is API-only; harmless"),
])

# ---------------------------------------------------------------------------------------------
# AlpacaEval, HumanEval, EvalPlus
# ---------------------------------------------------------------------------------------------
E("alpaca_hf_decoder", "src/alpaca_eval/decoders/huggingface_local.py", "device_branch_or_abstraction",
  "AlpacaEval huggingface_local_completions decoder", [
    C("if not torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      "if not (torch.cuda.is_available() or is_torch_npu_available()):",
      "True on an NPU host, so torch_dtype is reset to None and the model silently loads in fp32 "
      "(twice the memory, much slower) even though device_map='auto' places it on the NPUs"),
])

E("humaneval_execution", "human_eval/execution.py", "device_branch_or_abstraction",
  "openai/human-eval execution.py (sandboxed check_correctness, reliability_guard)", [
    C("os.environ['CUDA_VISIBLE_DEVICES'] = ''", "env_var", "add_branch", False,
      "os.environ['CUDA_VISIBLE_DEVICES'] = os.environ['ASCEND_RT_VISIBLE_DEVICES'] = ''",
      "hygiene only: generated HumanEval solutions do not touch accelerators; how the Ascend runtime treats an empty "
      "value is unconfirmed"),
])

E("evalplus_hf_provider", "evalplus/provider/hf.py", "device_branch_or_abstraction",
  "EvalPlus HuggingFaceDecoder", [
    C('self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "add_branch", True,
      'self.device = torch.device("npu" if is_torch_npu_available() else ("cuda" if torch.cuda.is_available() else "cpu"))',
      "on NPU the decoder silently moves the model to CPU (and undoes a device_map placement)"),
])

E("evalplus_provider_init", "evalplus/provider/__init__.py", "device_branch_or_abstraction",
  "EvalPlus make_model backend factory", [
    C("tp = torch.cuda.device_count()", "torch_cuda_api", "add_branch", True,
      "tp = torch.npu.device_count() if is_torch_npu_available() else torch.cuda.device_count()",
      "tensor_parallel_size=0 is rejected by vLLM"),
])

# ---------------------------------------------------------------------------------------------
# Long-context: needle-in-a-haystack, LongBench
# ---------------------------------------------------------------------------------------------
E("needle_vllm", "needle/run_needle_vllm.py", "explicit_replacement",
  "needle-in-a-haystack pressure test on a tensor-parallel vLLM engine", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401",
      "torch.npu.* is called before vLLM (and the vllm-ascend plugin) is imported"),
    C('os.environ.setdefault("VLLM_ATTENTION_BACKEND", "FLASH_ATTN")', "attention_kernel", "removal", False, None,
      "CUDA FlashAttention backend selector; vllm-ascend picks its own attention backend (effect of the variable there "
      "is unconfirmed)"),
    C('os.environ["NCCL_CUMEM_ENABLE"] = "0"', "env_var", "removal", False, None,
      "NCCL-only knob, ignored by HCCL"),
    C("tp = args.tp or torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "tp = args.tp or torch.npu.device_count()",
      "0 on NPU: the script exits with 'no GPUs visible'"),
    C("gpu_name = torch.cuda.get_device_name(0)", "torch_cuda_api", "replace", True,
      "gpu_name = torch.npu.get_device_name(0)",
      "raises without CUDA"),
])

E("needle_flash_patch", "needle/patches/llama_flash_attn_monkey_patch.py", "kernel_rewrite",
  "FastChat/LongChat-style llama_flash_attn_monkey_patch (FlashAttention-2 varlen)", [
    C("from flash_attn import __version__ as flash_attn_version", "attention_kernel", "replace", True,
      "import torch_npu",
      "flash-attn cannot be installed on NPU (the except branch turns this into a hard ImportError)"),
    C("from flash_attn.bert_padding import pad_input, unpad_input", "attention_kernel", "replace", True,
      "from needle.patches.bert_padding import pad_input, unpad_input  # vendored pure-torch helpers",
      "pad/unpad are plain torch but live in the flash_attn package, whose import fails"),
    C("from flash_attn.flash_attn_interface import flash_attn_func, flash_attn_varlen_kvpacked_func", "attention_kernel",
      "removal", True, None,
      "CUDA kernels; replaced by torch_npu.npu_fusion_attention"),
    C("major, minor = torch.cuda.get_device_capability()", "device_capability_check", "removal", True, None,
      "compute capability is meaningless on NPU (get_device_capability returns None unless TORCH_NPU_DEVICE_CAPABILITY "
      "is set), so the tuple unpack fails; the rest of _check_gpu goes with it"),
    C('assert flash_attn_version >= "2.1.0", "past_key_value support requires flash-attn >= 2.1.0"', "attention_kernel",
      "removal", True, None,
      "flash_attn_version no longer exists"),
    C("past_key_value = (k.transpose(1, 2), v.transpose(1, 2)) if use_cache else None", "attention_kernel",
      "npu_only_addition", True,
      "causal_mask = torch.triu(torch.ones(2048, 2048, dtype=torch.bool, device=q.device), diagonal=1)",
      "npu_fusion_attention's causal sparse_mode=3 takes an explicit 2048x2048 upper-triangular bool mask"),
    C("output = flash_attn_func(q, k, v, 0.0, softmax_scale=None, causal=True).view(", "attention_kernel", "replace", True,
      'output = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, "BSND", atten_mask=causal_mask, '
      'scale=1.0 / math.sqrt(self.head_dim), sparse_mode=3)[0].view(',
      "BSND layout matches flash_attn_func's (b, s, h, d); sparse_mode=3 is right-down causal, correct with a KV cache"),
    C("output_unpad = flash_attn_varlen_kvpacked_func(", "attention_kernel", "replace", True,
      'output_unpad = torch_npu.npu_fusion_attention(q, kv[:, 0], kv[:, 1], self.num_heads, "TND", atten_mask=causal_mask, '
      'scale=1.0 / math.sqrt(self.head_dim), sparse_mode=3, actual_seq_qlen=cu_q_lens[1:].tolist(), '
      'actual_seq_kvlen=cu_k_lens[1:].tolist())[0]',
      "varlen path: TND layout with cumulative sequence lengths (host lists); the following argument lines go too"),
    C('device = torch.device("cuda")', "device_type", "replace", True,
      'device = torch.device("npu")',
      "self-test (`python -m ...`) cannot run on cuda"),
])

E("longbench_pred", "LongBench/pred.py", "explicit_replacement",
  "THUDM LongBench pred.py (one spawned process per GPU)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401", NO_AUTOLOAD),
    C("device = torch.device(f'cuda:{rank}')", "device_type", "replace", True,
      "device = torch.device(f'npu:{rank}')",
      "each spawned worker must target its own NPU"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(seed)",
      "torch.manual_seed above already seeds registered accelerator backends; this CUDA call is a silent no-op"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "same: redundant with torch.manual_seed, no-op on NPU"),
    C("world_size = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "world_size = torch.npu.device_count()",
      "0 on NPU: no worker processes are spawned and every dataset silently produces an empty prediction file"),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", False,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "dead value: get_pred overwrites it with the per-rank device; edited for consistency only"),
])

# ---------------------------------------------------------------------------------------------
# MMLU / C-Eval scripts from Chinese model repos
# ---------------------------------------------------------------------------------------------
E("qwen_mmlu_dist", "eval/evaluate_mmlu_dist.py", "explicit_replacement",
  "Qwen/InternLM-style distributed MMLU eval script (torchrun, InferenceSampler, all_gather_object)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401", NO_AUTOLOAD),
    C("input_ids = torch.tensor(input_ids).cuda()", "tensor_to_device", "replace", True,
      "input_ids = torch.tensor(input_ids).npu()",
      ".cuda() raises without CUDA"),
    C("pin_memory=True,", "pin_memory", "replace", False,
      'pin_memory=True, pin_memory_device="npu",',
      "without an NPU pin device the DataLoader warns and skips pinning; host->device copy speed only"),
    C('backend="nccl",', "dist_backend", "replace", True,
      'backend="hccl",',
      "NCCL is unavailable on Ascend; HCCL is the collective backend"),
    C('torch.cuda.set_device(int(os.getenv("LOCAL_RANK", 0)))', "torch_cuda_api", "replace", True,
      'torch.npu.set_device(int(os.getenv("LOCAL_RANK", 0)))',
      "raises without CUDA; HCCL also needs the per-rank device set before collectives"),
    C("use_flash_attn=True,", "attention_kernel", "replace", False,
      "use_flash_attn=False,",
      "Qwen(1) remote code only warns and falls back when flash_attn is missing, so this is not fatal; "
      "set explicitly to avoid the failed import (fallback behaviour taken from the remote code, unconfirmed in the notes)"),
    C(").cuda().eval()", "tensor_to_device", "replace", True,
      ").npu().eval()",
      ".cuda() raises without CUDA"),
])

E("ceval_chatglm", "code/evaluator_series/evaluators/chatglm.py", "explicit_replacement",
  "C-Eval ChatGLM evaluator (device passed in by eval.py)", [])

E("ceval_eval_main", "code/evaluator_series/eval.py", "explicit_replacement",
  "C-Eval evaluator_series eval.py (--cuda_device flag)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401", NO_AUTOLOAD),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.cuda_device', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.cuda_device',
      "card selection is ignored on NPU, so the run silently lands on npu:0 (set before the first NPU call; "
      "device init is lazy)"),
    C('device = torch.device("cuda")', "device_type", "replace", True,
      'device = torch.device("npu")',
      "the ChatGLM evaluator moves the model to this device"),
])

E("cmmlu_envyml", "environment.yml", "explicit_replacement",
  "conda environment.yml of a CMMLU/C-Eval style eval repo", [
    C("=- nvidia", "custom_cuda_extension", "removal", False, None,
      "only provides CUDA runtime packages"),
    C("=- pytorch=2.1.2", "import_torch_npu", "replace", True,
      "- pytorch=2.1.0",
      "torch_npu 2.1.0.postN requires exactly torch 2.1.0"),
    C("=- pytorch-cuda=12.1", "custom_cuda_extension", "replace", False,
      "- cpuonly",
      "Ascend pairs torch_npu with the CPU build of torch; whether a CUDA build breaks torch_npu is unconfirmed"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True,
      "- torch-npu==2.1.0.post10",
      "the Ascend adapter itself"),
    C("- bitsandbytes==0.42.0", "unsupported_op_workaround", "removal", False, None,
      "installs, but LLM.int8 has no Ascend backend; only the optional 8-bit paths would need it"),
    C("- flash-attn==2.5.6", "attention_kernel", "removal", True, None,
      "requires nvcc; `conda env create` fails at the pip step"),
])

# ---------------------------------------------------------------------------------------------
# Reward-model scoring, benchmarking
# ---------------------------------------------------------------------------------------------
E("rm_score", "scripts/run_rm.py", "explicit_replacement",
  "RewardBench-style run_rm.py (sequence-classification RM scoring with accelerate)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401",
      "torch.npu.* is used below; accelerate alone does not guarantee the import before these calls"),
    C('logger.info(f"Using {torch.cuda.device_count()} GPUs, this is process {current_device}")', "torch_cuda_api",
      "replace", False,
      'logger.info(f"Using {torch.npu.device_count()} NPUs, this is process {current_device}")',
      "log line only; would print 0"),
    C("if torch.cuda.get_device_capability(current_device)[0] >= 8 and args.torch_dtype == torch.float16:",
      "device_capability_check", "replace", True,
      "if torch.npu.is_bf16_supported() and args.torch_dtype == torch.float16:",
      "capability has no NPU meaning (None unless TORCH_NPU_DEVICE_CAPABILITY is set) and indexing it fails"),
    C('"load_in_8bit": True,', "unsupported_op_workaround", "replace", True,
      '"load_in_8bit": False,  # bitsandbytes LLM.int8 has no Ascend backend',
      "reached only with --load_in_8bit; 8-bit bitsandbytes is not available on NPU"),
    C('"torch_dtype": args.torch_dtype if torch.cuda.is_available() else None,', "torch_cuda_api", "replace", True,
      '"torch_dtype": args.torch_dtype,',
      "False on NPU, so the 8-bit branch would silently load fp32"),
    C('"device_map": {"": f"cuda:{current_device}"},', "device_type", "replace", True,
      '"device_map": {"": f"npu:{current_device}"},',
      "explicit CUDA device map"),
    C("pin_memory=True,", "pin_memory", "replace", False,
      'pin_memory=True, pin_memory_device="npu",',
      "pinning is skipped without an accelerator pin device; performance only"),
    C("with torch.no_grad(), torch.cuda.amp.autocast(dtype=args.torch_dtype):", "amp", "replace", True,
      'with torch.no_grad(), torch.autocast("npu", dtype=args.torch_dtype):',
      "CUDA autocast is disabled with a warning on a host without CUDA, so the RM silently runs without the requested "
      "mixed precision"),
    C("mem = torch.cuda.max_memory_allocated(current_device) / 2**30", "torch_cuda_api", "replace", False,
      "mem = torch.npu.max_memory_allocated(current_device) / 2**30",
      "progress log only; would report 0 GiB"),
])

E("bench_latency_hf", "benchmarks/benchmark_generate_latency.py", "transfer_to_npu",
  "HF generate() latency / peak-memory benchmark (CUDA events, NVTX, pynvml)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "from torch_npu.contrib import transfer_to_npu  # noqa: F401",
      "the whole file is ported by the transfer_to_npu patch: torch.cuda.Event/synchronize/memory stats, "
      "device='cuda' and .to(device) are redirected to NPU and are left unlabelled"),
    C("pynvml.nvmlInit()", "torch_cuda_api", "removal", True, None,
      "NVML library is absent on an Ascend host (NVMLError_LibraryNotFound); no torch_npu equivalent of pynvml"),
    C("handle = pynvml.nvmlDeviceGetHandleByIndex(index)", "torch_cuda_api", "removal", True, None,
      "NVML handle; not available"),
    C('"name": pynvml.nvmlDeviceGetName(handle),', "torch_cuda_api", "replace", True,
      '"name": torch.npu.get_device_name(index),',
      "device name via torch_npu"),
    C('"driver": pynvml.nvmlSystemGetDriverVersion(),', "torch_cuda_api", "replace", True,
      '"driver": open("/usr/local/Ascend/driver/version.info").read().split("Version=")[1].split()[0],',
      "the NPU driver version lives in the Ascend driver's version.info"),
    C("pynvml.nvmlShutdown()", "torch_cuda_api", "removal", True, None,
      "NVML not initialised"),
    C("torch.cuda.nvtx.range_push(nvtx_name)", "torch_cuda_api", "replace", True,
      "range_id = torch_npu.npu.mstx.range_start(nvtx_name)",
      "torch.cuda.nvtx is not redirected by transfer_to_npu and raises without a CUDA build (only with --nvtx)"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True,
      "torch_npu.npu.mstx.range_end(range_id)",
      "same as range_push"),
    C('model.forward = torch.compile(model.forward, mode="reduce-overhead", fullgraph=True)', "compile_mode", "replace",
      False,
      'model.forward = torch.compile(model.forward, backend="npugraphs", fullgraph=True)',
      "reduce-overhead relies on CUDA graphs; npugraphs is the NPU graph-capture backend; behaviour of the default "
      "mode under transfer_to_npu (has_triton=False) is unconfirmed (only with --compile)"),
    C("torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False)",
      "attention_kernel", "replace", False,
      "nullcontext()  # SDPA backend flags have no effect on NPU",
      "torch.backends.cuda.sdp_kernel is marked unsupported in Ascend's 2.7.1 API list; it only toggles CUDA SDPA "
      "flags, so on NPU it is a silent no-op (only with --flash-sdp-only)"),
])

E("longctx_requirements", "requirements.txt", "explicit_replacement",
  "requirements.txt of a long-context eval harness (needle / LongBench / RULER style)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "custom_cuda_extension", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "Ascend installs the CPU torch build on x86 (plain PyPI on aarch64); whether the cu121 build still works "
      "under torch_npu is unconfirmed"),
    C("torch==2.3.0", "import_torch_npu", "replace", True,
      "torch==2.5.1",
      "torch_npu has no 2.3.0 wheel (2.3.1.postN) and vllm-ascend needs a newer torch; the pin must match torch-npu"),
    C("vllm==0.4.2", "custom_cuda_extension", "replace", True,
      "vllm==0.7.3  # + vllm-ascend==0.7.3",
      "stock vLLM 0.4.2 is a CUDA build; Ascend needs the vllm-ascend plugin with its matching vLLM"),
    C("flash-attn==2.5.8", "attention_kernel", "removal", True, None,
      "needs nvcc; `pip install -r` fails"),
    C("xformers==0.0.26.post1", "attention_kernel", "removal", True, None,
      "CUDA-only kernels and pins torch 2.3.0, conflicting with the NPU torch pin"),
    C("nvidia-ml-py>=12.535", "custom_cuda_extension", "removal", False, None,
      "pure-python bindings install fine; only calls into NVML fail"),
    C("=tqdm", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.5.1",
      "the Ascend adapter, version-matched to torch"),
])
