# Labels for probe338 (LLM evaluation harnesses / benchmark runners, CUDA -> Ascend NPU).
# One C(...) per upstream line a careful porter would edit. See README.md for the policy.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# --------------------------------------------------------------------------- lm-evaluation-harness
E("lmeval_hf", "lm_eval/models/huggingface.py", "device_branch_or_abstraction",
  "EleutherAI lm-evaluation-harness HFLM backend (device selection, accelerate data parallelism, batch-size auto probe)", [
    C('device: Optional[str] = "cuda",', "device_type", "replace", True,
      'device: Optional[str] = "npu",',
      "Default device used when --device is not given; 'cuda' is accepted by the device_list check but "
      "gpus==0 on an NPU host so the model is never moved and inputs go to a non-existent CUDA device."),
    C("gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "gpus = torch.npu.device_count() if torch.npu.is_available() else torch.cuda.device_count()",
      "Returns 0 on an NPU host: model is never placed on the device and data-parallel setup is skipped."),
    C('+ [f"cuda:{i}" for i in range(gpus)]', "device_type", "add_branch", True,
      '+ [f"cuda:{i}" for i in range(gpus)] + ["npu"] + [f"npu:{i}" for i in range(gpus)]',
      "Whitelist of accepted --device values; without npu entries a user-passed 'npu:0' falls into the "
      "'Device not specified' branch and the model silently runs on CPU."),
    C('eval_logger.info(f"Cuda Available? {torch.cuda.is_available()}")', "torch_cuda_api", "replace", False,
      'eval_logger.info(f"NPU Available? {torch.npu.is_available()}")',
      "Log line only; prints False on NPU hosts. Cosmetic."),
    C('=torch.device("cuda")', "device_type", "add_branch", True,
      'torch.device("npu") if torch.npu.is_available() else torch.device("cuda")',
      "Auto-selected device when none is given; needs an NPU branch next to the CUDA one."),
    C("=if torch.cuda.is_available()", "torch_cuda_api", "add_branch", True,
      "if (torch.cuda.is_available() or torch.npu.is_available())",
      "False on an NPU host, so the fallback silently picks CPU."),
    C("DistributedType.MULTI_GPU,", "distributed_framework", "add_branch", True,
      "DistributedType.MULTI_GPU, DistributedType.MULTI_NPU,",
      "Under `accelerate launch` on Ascend, accelerate reports MULTI_NPU, so this assert rejects every "
      "data-parallel run."),
    C('f"cuda:{accelerator.local_process_index}"', "device_type", "replace", True,
      'f"{accelerator.device}"',
      "Per-rank device for data-parallel evaluation is hard-coded to CUDA."),
    C('device_map = {"": f"cuda:{self.accelerator.local_process_index}"}', "device_type", "replace", True,
      'device_map = {"": f"{self.accelerator.device}"}',
      "from_pretrained device_map for each accelerate rank is hard-coded to CUDA."),
    C('model_kwargs["attn_implementation"] = "flash_attention_2"', "attention_kernel", "replace", True,
      'model_kwargs["attn_implementation"] = "sdpa"',
      "flash-attn cannot be installed on NPU (knowledge §6); transformers raises when flash_attention_2 is "
      "requested without it. SDPA dispatches to the NPU flash-attention kernel."),
])

E("lmeval_model_utils", "lm_eval/models/utils.py", "device_branch_or_abstraction",
  "lm-evaluation-harness model utilities (Collator, padding, stop criteria, clear_torch_cache)", [
    C("torch.cuda.empty_cache()", "torch_cuda_api", "add_branch", False,
      "torch.npu.empty_cache() if hasattr(torch, 'npu') and torch.npu.is_available() else torch.cuda.empty_cache()",
      "torch.cuda.empty_cache is a no-op when CUDA was never initialised, so on NPU the cache after the "
      "batch-size probe is simply not released (memory headroom only)."),
])

E("lmeval_vllm", "lm_eval/models/vllm_causallms.py", "device_branch_or_abstraction",
  "lm-evaluation-harness vLLM backend with Ray data parallelism", [
    C('device: str = "cuda",', "device_type", "replace", True,
      'device: str = "auto",',
      "Passed straight into LLM(device=...); a literal 'cuda' bypasses the vllm-ascend platform plugin. "
      "vLLM's handling of 'auto' vs an explicit device is not in the knowledge base."),
    C('assert "cuda" in device or device is None, "vLLM only supports CUDA"', "device_type", "replace", True,
      'assert device in ("auto", "cuda", "npu") or device is None, "unsupported vLLM device"',
      "Rejects 'npu'/'auto', so the device cannot be changed without editing this guard."),
    C("@ray.remote(num_gpus=1 if self.tensor_parallel_size == 1 else None)", "distributed_framework", "replace", True,
      '@ray.remote(resources={"NPU": 1} if self.tensor_parallel_size == 1 else None)',
      "Ray detects no GPUs on an Ascend host, so a num_gpus=1 task is never scheduled (hangs); Ray's "
      "Ascend resource is named 'NPU' (ray PR #41256 / ray-ascend README; not in knowledge)."),
])

E("lmeval_mamba", "lm_eval/models/mamba_lm.py", "explicit_replacement",
  "lm-evaluation-harness mamba_ssm backend", [
    C("from mamba_ssm.utils.hf import load_config_hf  # noqa: F811", "custom_cuda_extension", "replace", True,
      "from transformers import AutoConfig  # mamba_ssm (nvcc-built selective_scan/causal_conv1d) not installable on NPU",
      "mamba_ssm is a CUDAExtension package (no nvcc path on Ascend, knowledge §6); importing any submodule "
      "pulls in its CUDA ops."),
    C("from mamba_ssm.models.mixer_seq_simple import (", "custom_cuda_extension", "replace", True,
      "from transformers import MambaForCausalLM as MambaLMHeadModel  # pure-PyTorch path on NPU",
      "Selective-scan and causal-conv1d kernels are CUDA-only; use the transformers Mamba port instead."),
])

E("lmeval_pyproject", "pyproject.toml", "explicit_replacement",
  "lm-evaluation-harness pyproject.toml optional extras", [
    C('gptq = ["auto-gptq[triton]>=0.6.0"]', "custom_cuda_extension", "replace", False,
      'gptq = ["auto-gptq>=0.6.0"]  # CUDA/Triton kernels unavailable on NPU',
      "Optional extra; AutoGPTQ's kernels are CUDA/Triton. NPU status of auto-gptq unconfirmed."),
    C('mamba = ["mamba_ssm", "causal-conv1d==1.0.2"]', "custom_cuda_extension", "removal", False, None,
      "Optional extra; both packages build CUDA extensions with nvcc (knowledge §6). Only breaks if the extra is requested."),
    C('vllm = ["vllm>=0.4.2"]', "distributed_framework", "replace", False,
      'vllm = ["vllm>=0.7.3", "vllm-ascend>=0.7.3"]',
      "Optional extra; on Ascend vLLM runs through the vllm-ascend hardware plugin (knowledge §6). Version pair unverified."),
])

E("lmeval_accel_cfg", "examples/accelerate/multi_gpu.yaml", "explicit_replacement",
  "accelerate config used to launch lm-eval data-parallel runs", [
    C("distributed_type: MULTI_GPU", "distributed_framework", "replace", False,
      "distributed_type: MULTI_NPU",
      "accelerate derives the backend from the hardware it finds; whether a MULTI_GPU config still launches "
      "correctly on Ascend is unconfirmed, so not marked required."),
])

E("lmeval_run_sh", "scripts/run_leaderboard_eval.sh", "explicit_replacement",
  "shell launcher for lm-eval leaderboard runs (single-GPU smoke test, accelerate DP, vLLM TP/DP)", [
    C("=set -e", "env_var", "npu_only_addition", True, SET_ENV,
      "CANN environment must be sourced before torch_npu / HCCL can load."),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime."),
    C('NUM_GPUS=$(echo "$CUDA_VISIBLE_DEVICES" | tr \',\' \'\\n\' | wc -l)', "env_var", "replace", True,
      'NUM_GPUS=$(echo "$ASCEND_RT_VISIBLE_DEVICES" | tr \',\' \'\\n\' | wc -l)',
      "Process count derived from the CUDA variable; after the rename it would silently be 1."),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False,
      "export HCCL_ASYNC_ERROR_HANDLING=1",
      "NCCL_* is ignored under HCCL; HCCL_ASYNC_ERROR_HANDLING already defaults to 1 (knowledge, MindCluster), so no-op."),
    C("--device cuda:0 \\", "device_type", "replace", True, "--device npu:0 \\",
      "Single-device smoke test pinned to CUDA."),
    C("--device cuda \\", "device_type", "replace", True, "--device npu \\",
      "Device handed to the vLLM backend."),
    C("=nvidia-smi", "device_type", "replace", True, "npu-smi info",
      "nvidia-smi does not exist on Ascend hosts; under `set -e` the script exits non-zero at the end."),
])

E("lmeval_docker", "Dockerfile", "explicit_replacement",
  "Dockerfile for an lm-eval + vLLM evaluation image", [
    C("FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04", "device_type", "replace", True,
      "FROM quay.io/ascend/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "CUDA base image has no CANN toolkit/runtime. Tag follows Ascend/cann-container-image naming (unverified)."),
    C("NVIDIA_VISIBLE_DEVICES=all \\", "env_var", "removal", False, None,
      "Consumed only by the NVIDIA container runtime; the Ascend docker runtime uses ASCEND_VISIBLE_DEVICES."),
    C("NVIDIA_DRIVER_CAPABILITIES=compute,utility \\", "env_var", "removal", False, None,
      "NVIDIA container runtime setting; meaningless on Ascend."),
    C('TORCH_CUDA_ARCH_LIST="8.0;8.6;9.0"', "custom_cuda_extension", "removal", False, None,
      "Only steers nvcc builds (flash-attn); no effect once those are gone."),
    C("RUN pip install torch==2.3.0 --index-url https://download.pytorch.org/whl/cu121", "device_type", "replace", True,
      "RUN pip install torch==2.3.1 --index-url https://download.pytorch.org/whl/cpu && pip install torch-npu==2.3.1.post4",
      "cu121 wheels; NPU needs CPU torch (x86) / PyPI torch (aarch64) plus a torch-npu whose version equals torch's (knowledge §1.1)."),
    C('RUN pip install "vllm==0.5.0.post1"', "distributed_framework", "replace", True,
      'RUN pip install "vllm==0.7.3" "vllm-ascend==0.7.3"',
      "Stock vLLM wheel pulls CUDA torch/xformers; Ascend needs the vllm-ascend plugin. Version pair unverified."),
    C("RUN pip install packaging ninja && MAX_JOBS=8 pip install flash-attn==2.5.9.post1 --no-build-isolation",
      "attention_kernel", "removal", True, None,
      "flash-attn needs nvcc and cannot be installed on NPU (knowledge §6); the build step fails."),
])

# --------------------------------------------------------------------------- OpenCompass
E("oc_local_runner", "opencompass/runners/local.py", "device_branch_or_abstraction",
  "OpenCompass LocalRunner (assigns devices to inference tasks via CUDA_VISIBLE_DEVICES)", [
    C("tmpl = 'CUDA_VISIBLE_DEVICES=' + ','.join(str(i) for i in gpu_ids)", "env_var", "replace", True,
      "tmpl = 'ASCEND_RT_VISIBLE_DEVICES=' + ','.join(str(i) for i in gpu_ids)",
      "Per-task device pinning; ignored on Ascend, so every task sees (and loads onto) NPU 0."),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu  # noqa: F401",
      "The runner process calls torch.npu.device_count(); needs torch_npu imported on torch_npu<2.5.1 (autoload afterwards)."),
    C("if 'CUDA_VISIBLE_DEVICES' in os.environ:", "env_var", "replace", True,
      "if 'ASCEND_RT_VISIBLE_DEVICES' in os.environ:",
      "The user's device restriction is read from the CUDA variable."),
    C("os.getenv('CUDA_VISIBLE_DEVICES'))", "env_var", "replace", True,
      "os.getenv('ASCEND_RT_VISIBLE_DEVICES'))",
      "Same variable, parsed into the list of schedulable device ids."),
    C("all_gpu_ids = list(range(torch.cuda.device_count()))", "torch_cuda_api", "replace", True,
      "all_gpu_ids = list(range(torch.npu.device_count()))",
      "0 on an NPU host: every task with num_gpus>0 fails the `len(gpus) >= num_gpus` assert."),
])

E("oc_slurm_runner", "opencompass/runners/slurm.py", "explicit_replacement",
  "OpenCompass SlurmRunner (srun with GPU gres)", [
    C("tmpl += f' --gres=gpu:{num_gpus}'", "device_type", "replace", False,
      "tmpl += f' --gres=npu:{num_gpus}'",
      "gres name depends on the site's Slurm configuration for Ascend nodes; unconfirmed."),
])

E("oc_infer_task", "opencompass/tasks/openicl_infer.py", "explicit_replacement",
  "OpenCompass OpenICLInferTask (subprocess entry point, torchrun for multi-process models)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu  # noqa: F401",
      "This file is the script the runner launches; NPU device APIs need torch_npu loaded (autoload only from 2.5.1)."),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(local_rank)",
      "Raises on an NPU host."),
    C("dist.init_process_group(backend='nccl')", "dist_backend", "replace", True,
      "dist.init_process_group(backend='hccl')",
      "NCCL is unavailable on Ascend; HCCL is the collective backend."),
])

E("oc_hf_model", "opencompass/models/huggingface_above_v4_33.py", "device_branch_or_abstraction",
  "OpenCompass HuggingFacewithChatTemplate model wrapper", [
    C("=return 'eager'", "attention_kernel", "replace", False, "return 'sdpa'",
      "On NPU flash_attn is never importable, so this falls back to eager attention: correct but slow. "
      "SDPA uses the NPU fused attention kernel (knowledge §5, transformers PR #36383)."),
])

E("oc_utils_run", "opencompass/utils/run.py", "device_branch_or_abstraction",
  "OpenCompass CLI config builder (--accelerator lmdeploy/vllm conversion)", [
    C("=mod = TurboMindModel", "custom_cuda_extension", "replace", True,
      "mod = LmdeployPytorchModel",
      "TurboMind is LMDeploy's CUDA-compiled engine (no NPU build); Ascend is served by LMDeploy's PyTorch engine."),
    C("engine_config=dict(session_len=model['max_seq_len'], max_batch_size=model['batch_size'], tp=model['run_cfg']['num_gpus']),",
      "device_type", "replace", False,
      "engine_config=dict(session_len=model['max_seq_len'], max_batch_size=model['batch_size'], tp=model['run_cfg']['num_gpus'], device_type='ascend'),",
      "PytorchEngineConfig device_type='ascend' per LMDeploy docs; not in the knowledge base (unconfirmed)."),
    C("engine_config=dict(max_batch_size=model.get('batch_size', 16), tp=model['run_cfg']['num_gpus']),",
      "custom_cuda_extension", "replace", True,
      "backend='pytorch', engine_config=dict(max_batch_size=model.get('batch_size', 16), tp=model['run_cfg']['num_gpus'], device_type='ascend'),",
      "TurboMindModelwithChatTemplate defaults to the CUDA-only TurboMind backend; must switch to the PyTorch engine "
      "(device_type key unconfirmed)."),
])

E("oc_eval_cfg", "configs/eval_internlm2_5_chat_accel.py", "explicit_replacement",
  "OpenCompass eval config comparing LMDeploy TurboMind / vLLM / HF backends", [
    C("engine_config=dict(session_len=16384, max_batch_size=16, tp=1),", "custom_cuda_extension", "replace", True,
      "backend='pytorch', engine_config=dict(session_len=16384, max_batch_size=16, tp=1, device_type='ascend'),",
      "TurboMind backend is CUDA-only; switch the wrapper to LMDeploy's PyTorch engine (device_type key unconfirmed)."),
    C("attn_implementation='flash_attention_2',", "attention_kernel", "replace", True,
      "attn_implementation='sdpa',",
      "Explicit flash_attention_2 makes transformers raise without the flash-attn package, which cannot be installed on NPU."),
])

E("eval_requirements", "requirements/eval-gpu.txt", "explicit_replacement",
  "pinned requirements for an OpenCompass evaluation cluster", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "device_type", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; NPU hosts use CPU torch on x86 / PyPI torch on aarch64 (knowledge §1.1)."),
    C("=torch==2.3.1", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.3.1.post4",
      "torch_npu pin must match torch x.y.z exactly (knowledge §1.1-1.2)."),
    C("=vllm==0.5.3.post1", "distributed_framework", "replace", True,
      "vllm-ascend==0.7.3  # with vllm==0.7.3 and the torch/torch-npu pair it requires",
      "Stock vLLM is CUDA-built; Ascend needs the vllm-ascend plugin and a matching torch stack."),
    C("=lmdeploy==0.5.3", "distributed_framework", "replace", False,
      "lmdeploy>=0.6.0  # Ascend support only via the PyTorch engine",
      "Ascend support in LMDeploy starts with later releases (LMDeploy docs); unconfirmed in knowledge."),
    C("=flash-attn==2.6.3", "attention_kernel", "removal", True, None,
      "Cannot be installed on NPU (knowledge §6); `pip install -r` aborts."),
    C("=xformers==0.0.27", "attention_kernel", "removal", False, None,
      "No NPU backend (knowledge §6); whether the install itself fails on an NPU host is unconfirmed."),
    C("=auto-gptq==0.7.1", "custom_cuda_extension", "removal", False, None,
      "CUDA kernels; NPU status unconfirmed."),
    C("=bitsandbytes==0.43.3", "custom_cuda_extension", "replace", False,
      "bitsandbytes>=0.45.0  # multi-backend build; only NF4 is available on Ascend",
      "Only NF4 quant/dequant exists for NPU (knowledge §6); 8-bit baselines will not run."),
    C("=nvidia-ml-py==12.555.43", "torch_cuda_api", "removal", False, None,
      "NVML does not exist on Ascend hosts; telemetry should use npu-smi / torch.npu APIs. Harmless to install."),
])

# --------------------------------------------------------------------------- FastChat
E("fc_model_adapter", "fastchat/model/model_adapter.py", "device_branch_or_abstraction",
  "FastChat model_adapter.load_model / add_model_args", [
    C('=elif device == "cuda":', "device_type", "add_branch", True,
      'elif device == "cuda" or device == "npu":',
      "load_model raises 'Invalid device' for npu; the new branch also needs `import torch_npu` and fp16 kwargs."),
    C('if (device == "cuda" and num_gpus == 1 and not cpu_offloading) or device in (', "device_type", "add_branch", True,
      'if (device in ("cuda", "npu") and num_gpus == 1 and not cpu_offloading) or device in (',
      "Without it a single-NPU model stays on CPU."),
    C('choices=["cpu", "cuda", "mps", "xpu"],', "device_type", "replace", True,
      'choices=["cpu", "cuda", "mps", "xpu", "npu"],',
      "argparse rejects --device npu."),
])

E("fc_utils", "fastchat/utils.py", "device_branch_or_abstraction",
  "FastChat utils.get_gpu_memory and helpers", [
    C("=torch.cuda.device_count()", "torch_cuda_api", "add_branch", True,
      "torch.npu.device_count() if torch.npu.is_available() else torch.cuda.device_count()",
      "0 on NPU: the per-device max_memory map for multi-NPU loading would be empty."),
    C("else min(max_gpus, torch.cuda.device_count())", "torch_cuda_api", "add_branch", True,
      "else min(max_gpus, torch.npu.device_count() if torch.npu.is_available() else torch.cuda.device_count())",
      "Same count in the max_gpus branch."),
    C("with torch.cuda.device(gpu_id):", "torch_cuda_api", "add_branch", True,
      "with (torch.npu.device(gpu_id) if torch.npu.is_available() else torch.cuda.device(gpu_id)):",
      "Entering a CUDA device context raises on an NPU host."),
    C("device = torch.cuda.current_device()", "torch_cuda_api", "add_branch", True,
      "device = torch.npu.current_device() if torch.npu.is_available() else torch.cuda.current_device()",
      "Raises without CUDA."),
    C("gpu_properties = torch.cuda.get_device_properties(device)", "torch_cuda_api", "add_branch", True,
      "gpu_properties = (torch.npu if torch.npu.is_available() else torch.cuda).get_device_properties(device)",
      "Raises without CUDA; NPU properties do provide total_memory (knowledge §2.8)."),
    C("allocated_memory = torch.cuda.memory_allocated() / (1024**3)", "torch_cuda_api", "add_branch", False,
      "allocated_memory = (torch.npu if torch.npu.is_available() else torch.cuda).memory_allocated() / (1024**3)",
      "Returns 0 when CUDA is uninitialised; at model-load time NPU allocation is ~0 anyway, so the estimate barely changes."),
])

E("fc_inference", "fastchat/serve/inference.py", "device_branch_or_abstraction",
  "FastChat generate_stream", [
    C("torch.cuda.empty_cache()", "torch_cuda_api", "add_branch", False,
      'if device == "npu": torch.npu.empty_cache()',
      "No-op on NPU (CUDA never initialised); cached NPU blocks are just not released between requests."),
])

E("fc_model_worker", "fastchat/serve/model_worker.py", "device_branch_or_abstraction",
  "FastChat model_worker (FastAPI worker process)", [
    C("def generate_stream_gate(self, params):", "torch_cuda_api", "npu_only_addition", False,
      'if self.device == "npu": import torch_npu; torch_npu.npu.set_device("npu:0")',
      "FastChat's own Ascend port sets the device inside the request thread; whether the default device is "
      "thread-local on NPU is not in the knowledge base (unconfirmed)."),
    C("except torch.cuda.OutOfMemoryError as e:", "torch_cuda_api", "replace", False,
      "except torch.OutOfMemoryError as e:",
      "Which exception type torch_npu raises on OOM is unconfirmed; if it is not torch.cuda.OutOfMemoryError "
      "the request falls through to the generic RuntimeError handler (still answered, wrong error code)."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "add_branch", False,
      'if self.device == "npu": torch.npu.empty_cache()',
      "No-op on NPU; memory-headroom only."),
    C("except torch.cuda.OutOfMemoryError as oom:", "torch_cuda_api", "replace", False,
      "except torch.OutOfMemoryError as oom:",
      "Same OOM-type question for the embedding path (unconfirmed)."),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpus', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpus',
      "--gpus is silently ignored on Ascend; every worker lands on NPU 0."),
])

E("fc_gen_answer", "fastchat/llm_judge/gen_model_answer.py", "explicit_replacement",
  "FastChat llm_judge gen_model_answer.py (MT-bench answer generation with Ray)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu  # noqa: F401",
      "Entry script (and the module Ray workers import); torch_npu must be loaded for .npu()/'npu' on torch_npu<2.5.1."),
    C("get_answers_func = ray.remote(num_gpus=num_gpus_per_model)(", "distributed_framework", "replace", True,
      'get_answers_func = ray.remote(resources={"NPU": num_gpus_per_model})(',
      "Ray sees no GPUs on an Ascend host; the remote tasks would stay pending forever."),
    C('device="cuda",', "device_type", "replace", True, 'device="npu",',
      "Hard-coded device for load_model."),
    C("torch.as_tensor(input_ids).cuda(),", "tensor_to_device", "replace", True,
      "torch.as_tensor(input_ids).to(model.device),",
      ".cuda() raises on an NPU host."),
])

E("fc_mtbench_sh", "fastchat/llm_judge/scripts/run_mt_bench_local.sh", "explicit_replacement",
  "shell driver for MT-bench answer generation + GPT-4 judging", [
    C("=set -euo pipefail", "env_var", "npu_only_addition", True,
      "set +u; " + SET_ENV + "; set -u",
      "CANN env must be sourced; set_env.sh fails under `set -u` (knowledge host-formats §3), hence the guard."),
    C('NUM_GPUS_TOTAL=${NUM_GPUS_TOTAL:-$(nvidia-smi --list-gpus | wc -l)}', "device_type", "replace", True,
      "NUM_GPUS_TOTAL=${NUM_GPUS_TOTAL:-$(npu-smi info -l | awk -F': ' '/Total Count/{print $2}')}",
      "nvidia-smi is absent; with pipefail the assignment aborts the script."),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "Ignored by the Ascend runtime."),
    C('ray start --head --num-gpus="${NUM_GPUS_TOTAL}" --disable-usage-stats', "distributed_framework", "replace", False,
      'ray start --head --resources="{\\"NPU\\": ${NUM_GPUS_TOTAL}}" --disable-usage-stats',
      "Declares fake GPU resources; once the Python side requests NPU resources this is harmless, and Ray "
      "auto-detects NPUs (ray-ascend README; unconfirmed in knowledge)."),
    C("nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv", "device_type", "replace", True,
      "npu-smi info",
      "Command not found under `set -e` aborts the script before judging."),
])

# --------------------------------------------------------------------------- HELM
E("helm_gpu_utils", "src/helm/common/gpu_utils.py", "device_branch_or_abstraction",
  "HELM common/gpu_utils.py", [
    C('return "cuda" if is_cuda_available() else "cpu"', "device_type", "add_branch", True,
      'return "cuda" if is_cuda_available() else ("npu" if is_npu_available() else "cpu")',
      "Local HELM models silently run on CPU on an Ascend host."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "add_branch", False,
      "torch.npu.empty_cache() if is_npu_available() else torch.cuda.empty_cache()",
      "Guarded by is_cuda_available(), so it never runs on NPU; cache not released (headroom only)."),
    C("return torch.cuda.device_count()", "torch_cuda_api", "add_branch", True,
      "return torch.cuda.device_count() if is_cuda_available() else torch.npu.device_count()",
      "Needs an NPU branch; otherwise the worker pool is sized from the default (0)."),
])

E("helm_hf_client", "src/helm/clients/huggingface_client.py", "device_branch_or_abstraction",
  "HELM HuggingFaceClient / HuggingFaceServer", [
    C("elif torch.cuda.is_available():", "device_type", "add_branch", True,
      'elif is_torch_npu_available():  # self.device = "npu:0"',
      "Without an NPU branch the server falls through to CPU on an Ascend host."),
    C("0 if self.device is None else self.device", "tensor_to_device", "replace", True,
      "self.model.device if self.device is None else self.device",
      "With device_map set, inputs are sent to integer device 0, which torch reads as cuda:0."),
])

E("helm_install_sh", "install-dev.sh", "explicit_replacement",
  "HELM install-dev.sh (pins a CUDA PyTorch build, installs local-model extras)", [
    C("pip install --no-cache-dir --index-url https://download.pytorch.org/whl/cu121 torch==2.2.2 torchvision==0.17.2",
      "device_type", "replace", True,
      "pip install --no-cache-dir --index-url https://download.pytorch.org/whl/cpu torch==2.2.0 torchvision==0.17.0",
      "CUDA wheels; torch must also drop to 2.2.0 because torch-npu versions equal torch's exactly (2.2.2 has no torch-npu)."),
    C("=fi", "import_torch_npu", "npu_only_addition", True, "pip install torch-npu==2.2.0",
      "torch_npu itself (2.2.0 pairs with torch 2.2.0, CANN 8.0.RC1/RC2 per knowledge §1)."),
    C('pip install "accelerate>=0.25" "bitsandbytes>=0.41" "flash-attn==2.5.8" --no-build-isolation',
      "attention_kernel", "replace", True,
      'pip install "accelerate>=0.25"',
      "flash-attn cannot be built on NPU; with `set -e` the whole install stops here."),
    C('pip install "vllm==0.4.2"', "distributed_framework", "replace", True,
      'pip install "vllm==0.7.3" "vllm-ascend==0.7.3"',
      "Stock vLLM drags in CUDA torch; Ascend needs vllm-ascend (version pair unverified)."),
    C("python -c \"import torch; assert torch.cuda.is_available(), 'CUDA not available'; print(torch.cuda.get_device_name(0))\"",
      "torch_cuda_api", "replace", True,
      "python -c \"import torch, torch_npu; assert torch.npu.is_available(), 'NPU not available'; print(torch.npu.get_device_name(0))\"",
      "The assert fails on every NPU host and `set -e` aborts the script."),
])

# --------------------------------------------------------------------------- MMLU / C-Eval scripts
E("mmlu_cot_hub", "MMLU/run_mmlu_llama.py", "explicit_replacement",
  "chain-of-thought-hub MMLU runner (tensor_parallel LLaMA, batched generate)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu  # noqa: F401",
      "Standalone script; needed before any 'npu' device use on torch_npu<2.5.1."),
    C("input_tokens[t] = input_tokens[t].to('cuda')", "tensor_to_device", "replace", True,
      "input_tokens[t] = input_tokens[t].to('npu')",
      "Hard-coded CUDA device string."),
    C("n_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "n_gpus = torch.npu.device_count()",
      "0 on NPU: tensor_parallel gets an empty device list."),
    C("model = tp.tensor_parallel(model, [i for i in range(n_gpus)])", "distributed_framework", "replace", True,
      'model = tp.tensor_parallel(model, [f"npu:{i}" for i in range(n_gpus)])',
      "Integer device ids are read as CUDA ordinals. Whether the tensor_parallel package itself works on NPU is unconfirmed."),
])

E("ceval_eval", "code/evaluator_series/eval.py", "explicit_replacement",
  "C-Eval evaluator_series/eval.py driver", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu  # noqa: F401",
      "Entry script; torch.device('npu') needs torch_npu loaded (autoload only from 2.5.1)."),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.cuda_device', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.cuda_device',
      "--cuda_device has no effect on Ascend; the model always lands on device 0."),
    C('device = torch.device("cuda")', "device_type", "replace", True,
      'device = torch.device("npu")',
      "Device passed to the ChatGLM evaluator."),
])

E("ceval_moss", "code/evaluator_series/evaluators/moss.py", "explicit_replacement",
  "C-Eval MOSS evaluator", [
    C('self.model = AutoModelForCausalLM.from_pretrained("fnlp/moss-moon-003-sft", trust_remote_code=True).half().cuda()',
      "tensor_to_device", "replace", True,
      'self.model = AutoModelForCausalLM.from_pretrained("fnlp/moss-moon-003-sft", trust_remote_code=True).half().npu()',
      ".cuda() raises on an NPU host."),
    C("inputs[k] = inputs[k].cuda()", "tensor_to_device", "replace", True,
      "inputs[k] = inputs[k].npu()",
      "Same for the tokenised inputs."),
])

E("ceval_env", "environment.yml", "explicit_replacement",
  "conda environment for the C-Eval / MMLU evaluator scripts", [
    C("=- nvidia", "device_type", "removal", False, None,
      "NVIDIA conda channel is only needed for pytorch-cuda."),
    C("=- pytorch=2.1.2", "device_type", "replace", True, "- pytorch=2.1.0",
      "torch-npu 2.1.0.postN pairs with torch 2.1.0 exactly (knowledge §1.1); 2.1.2 has no torch-npu."),
    C("=- pytorch-cuda=12.1", "device_type", "replace", True, "- cpuonly",
      "CUDA runtime metapackage; must be the CPU build on an NPU host."),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post12",
      "The torch_npu wheel itself, pinned to the torch version."),
    C("=- cpm_kernels==1.0.11", "custom_cuda_extension", "removal", False, None,
      "ChatGLM int4 kernels load CUDA libraries at runtime; only used for quantized ChatGLM (unconfirmed impact)."),
])

E("qwen_mmlu_ddp", "eval/evaluate_chat_mmlu_ddp.py", "explicit_replacement",
  "Qwen-style torchrun MMLU evaluation (InferenceSampler + all_gather_object)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu  # noqa: F401",
      "Entry script; HCCL backend and torch.npu need torch_npu loaded (autoload only from 2.5.1)."),
    C("backend='nccl',", "dist_backend", "replace", True, "backend='hccl',",
      "NCCL is unavailable on Ascend."),
    C("torch.cuda.set_device(int(os.getenv('LOCAL_RANK', 0)))", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(int(os.getenv('LOCAL_RANK', 0)))",
      "Raises on an NPU host."),
    C("args.checkpoint_path, device_map='cuda', trust_remote_code=True,", "device_type", "replace", True,
      "args.checkpoint_path, device_map=f\"npu:{os.getenv('LOCAL_RANK', 0)}\", trust_remote_code=True,",
      "device_map='cuda' places the model on a CUDA device."),
    C("pin_memory=True,", "pin_memory", "replace", False,
      "pin_memory=True, pin_memory_device='npu',",
      "Without a pin_memory_device the DataLoader pins for CUDA only (silently skipped on NPU); inputs are "
      "tiny token batches, so performance-only."),
    C("input_ids=input_ids.cuda(),", "tensor_to_device", "replace", True, "input_ids=input_ids.npu(),",
      ".cuda() raises on an NPU host."),
    C("attention_mask=attention_mask.cuda(),", "tensor_to_device", "replace", True,
      "attention_mask=attention_mask.npu(),",
      ".cuda() raises on an NPU host."),
])

# --------------------------------------------------------------------------- benchmark runners
E("bench_throughput", "benchmarks/benchmark_throughput.py", "explicit_replacement",
  "vLLM benchmarks/benchmark_throughput.py (vLLM / HF / DeepSpeed-MII backends)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu  # noqa: F401",
      "Entry script; the HF backend moves the model to NPU."),
    C("llm = llm.cuda()", "tensor_to_device", "replace", True, "llm = llm.npu()",
      "HF backend places the model on CUDA."),
    C("input_ids=input_ids.cuda(),", "tensor_to_device", "replace", True, "input_ids=input_ids.npu(),",
      ".cuda() raises on an NPU host."),
    C('f"{torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")', "torch_cuda_api", "replace", True,
      'f"{torch.npu.max_memory_allocated() / 2**30:.2f} GiB")',
      "Silently reports 0 GiB (CUDA never initialised): a wrong benchmark figure."),
    C("from mii import pipeline", "custom_cuda_extension", "replace", True,
      'raise NotImplementedError("DeepSpeed-MII has no Ascend NPU backend")',
      "MII runs on DeepSpeed's CUDA inference kernels, which are not available on NPU (knowledge §6)."),
    C('default="cuda",', "device_type", "replace", True, 'default="auto",',
      "Default --device handed to LLM(device=...); 'auto' lets the vllm-ascend platform plugin choose."),
    C('choices=["cuda", "cpu"],', "device_type", "replace", False,
      'choices=["auto", "cuda", "cpu", "npu"],',
      "argparse does not validate defaults, so only needed if users pass --device explicitly."),
])

E("longctx_ppl", "eval_ppl_latency.py", "explicit_replacement",
  "LongLoRA-style long-context perplexity eval with a CUDA-event decode-latency probe", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu  # noqa: F401",
      "Entry script."),
    C("from llama_attn_replace import replace_llama_attn", "attention_kernel", "replace", True,
      "from llama_attn_replace_npu import replace_llama_attn  # flash_attn -> torch_npu.npu_fusion_attention",
      "The patch module imports flash_attn at import time; flash-attn cannot be installed on NPU."),
    C("x, y = x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device, non_blocking=True)",
      "pin_memory", "replace", True,
      "x, y = x.pin_memory(device).to(device, non_blocking=True), y.pin_memory(device).to(device, non_blocking=True)",
      "pin_memory() without a device uses the CUDA pinned allocator; transfer_to_npu wraps Tensor.pin_memory "
      "for exactly this reason (knowledge §2.2)."),
    C('with torch.autocast("cuda", dtype=torch.float16):', "amp", "replace", True,
      'with torch.autocast("npu", dtype=torch.float16):',
      "autocast for an unavailable 'cuda' device is disabled with a warning: the loss is silently computed without AMP."),
    C("torch.cuda.synchronize()  # drain warmup work before resetting stats", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # drain warmup work before resetting stats", "Raises without CUDA."),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()", "Raises without CUDA (resolves the current CUDA device)."),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start = torch.npu.Event(enable_timing=True)", "CUDA events cannot record NPU work."),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)", "CUDA events cannot record NPU work."),
    C('torch.cuda.nvtx.range_push("prefill")', "torch_cuda_api", "replace", True,
      'prefill_range = torch_npu.npu.mstx.range_start("prefill")',
      "NVTX is not available without CUDA (stub raises); mstx is the NPU counterpart (knowledge §2.1)."),
    C("torch.cuda.synchronize()  # events must complete before elapsed_time", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # events must complete before elapsed_time", "Raises without CUDA."),
    C("torch.cuda.nvtx.range_pop()  # prefill", "torch_cuda_api", "replace", True,
      "torch_npu.npu.mstx.range_end(prefill_range)  # prefill", "NVTX stub raises."),
    C('torch.cuda.nvtx.range_push("decode")', "torch_cuda_api", "replace", True,
      'decode_range = torch_npu.npu.mstx.range_start("decode")', "NVTX stub raises."),
    C("torch.cuda.synchronize()  # wait for the last decode step", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for the last decode step", "Raises without CUDA."),
    C("torch.cuda.nvtx.range_pop()  # decode", "torch_cuda_api", "replace", True,
      "torch_npu.npu.mstx.range_end(decode_range)  # decode", "NVTX stub raises."),
    C("'peak_mem_gb': torch.cuda.max_memory_allocated() / 1024 ** 3,", "torch_cuda_api", "replace", True,
      "'peak_mem_gb': torch.npu.max_memory_allocated() / 1024 ** 3,",
      "Silently reports 0 (CUDA never initialised): wrong benchmark output."),
    C('device = "cuda:0"', "device_type", "replace", True, 'device = "npu:0"',
      "Device for the evaluation batches."),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)",
      "Raises on an NPU host."),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "torch.manual_seed on the line above already seeds every device, NPU included; redundant."),
    C('print("device", torch.cuda.get_device_name(device))', "torch_cuda_api", "replace", True,
      'print("device", torch.npu.get_device_name(device))', "Raises without CUDA."),
    C("use_bf16 = torch.cuda.get_device_capability()[0] >= 8", "device_capability_check", "replace", True,
      "use_bf16 = torch.npu.is_bf16_supported()",
      "Raises without CUDA; NPU get_device_capability returns None (knowledge §2.8), so indexing fails even after renaming."),
    C('model = torch.compile(model, mode="reduce-overhead")', "compile_mode", "replace", False,
      'model = torch.compile(model, backend="npugraphs")',
      "reduce-overhead relies on CUDA graphs; npugraphs is the NPU analogue (knowledge §3.7). Behaviour of "
      "mode='reduce-overhead' on NPU unconfirmed; only used with --compile."),
    C("with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False):",
      "attention_kernel", "removal", False, None,
      "sdp_kernel is listed unsupported (✘) in Ascend's 2.7.1 API list; the flags do not steer NPU SDPA, so it is a "
      "silent no-op there. The body must be dedented when the context manager is removed."),
])
