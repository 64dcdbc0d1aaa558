"""Labels for probe444 (LLM math reasoning training: PRMs, RFT, self-consistency evaluation).

One C(...) per upstream line a careful porter would edit for Ascend NPU + torch_npu (explicit port,
no transfer_to_npu). `required` = with every other labelled line already ported, would leaving this
line unchanged fail, compute something wrong or silently do the wrong thing on an NPU host?
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


CANN_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ----------------------------------------------------------------------------------------------
# MetaMath (meta-math/MetaMath): Alpaca-style HF Trainer SFT with FSDP + vLLM greedy eval
# ----------------------------------------------------------------------------------------------
E("metamath_train", "train_math.py", "explicit_replacement",
  "meta-math/MetaMath train_math.py (Alpaca-derived HF Trainer SFT on MetaMathQA)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu",
      "Hygiene only: the script never calls torch.cuda/torch.npu itself, and transformers/accelerate "
      "import torch_npu on their own when they probe is_torch_npu_available() while setting up the "
      "Trainer device. Not required."),
])

E("metamath_eval_gsm8k", "eval_gsm8k.py", "explicit_replacement",
  "meta-math/MetaMath eval_gsm8k.py (vLLM greedy decoding, answer extraction)", [])

E("metamath_util", "util.py", "explicit_replacement",
  "meta-math/MetaMath util.py (MATH answer normalisation, from the Hendrycks/PRM800K graders)", [])

E("metamath_run", "run.sh", "explicit_replacement",
  "meta-math/MetaMath README training/eval command (torch.distributed.launch + FSDP, then vLLM eval)", [
    C("export MODEL_PATH='meta-llama/Llama-2-7b-hf'", "env_var", "npu_only_addition", False,
      CANN_ENV,
      "CANN environment must be sourced before torch_npu can load; environment-dependent (many "
      "hosts/containers already source it in the profile), so not counted as required."),
    C('export NCCL_SOCKET_IFNAME="lo"', "env_var", "replace", False,
      'export HCCL_SOCKET_IFNAME="lo"',
      "NCCL variable is inert under HCCL; HCCL_SOCKET_IFNAME is the counterpart. Single-node run, so "
      "the NIC choice does not matter: not required."),
    C("CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 python3 -m torch.distributed.launch", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 python3 -m torch.distributed.launch --master_addr ${MASTER_ADDR} "
      "--master_port ${MASTER_PORT} --nproc_per_node=8 --use_env train_math.py \\",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; here it lists all 8 devices and "
      "nproc_per_node=8, so leaving it selects the same devices. Not required."),
    C("--tf32 True", "device_capability_check", "replace", True,
      "--tf32 False",
      "TrainingArguments(tf32=True) checks is_torch_tf32_available() (CUDA/Ampere check; listed in "
      "transfer_to_npu's apis_config as a CUDA probe) and raises ValueError when it is False, as on an "
      "NPU host with the transformers versions this project uses. Must be dropped/False."),
])

E("metamath_requirements", "requirements.txt", "explicit_replacement",
  "meta-math/MetaMath requirements.txt", [
    C("torch==2.0.1", "import_torch_npu", "npu_only_addition", True,
      "torch_npu==2.0.1.post1",
      "torch_npu wheel must match torch exactly; 2.0.1.post1 pairs with torch 2.0.1 / CANN 7.0.0 "
      "(historical matrix). Without it there is no NPU backend at all."),
    C("transformers==4.29.2", "distributed_framework", "replace", True,
      "transformers>=4.32.0",
      "Native NPU support (is_torch_npu_available, Trainer device selection) starts at transformers "
      "4.32.0; 4.29.2 would run the Trainer on CPU."),
    C("accelerate==0.20.3", "distributed_framework", "replace", True,
      "accelerate>=0.22.0",
      "accelerate gained NPU support in 0.22.0; the HF Trainer (and its FSDP path) goes through it."),
    C("vllm==0.1.4", "distributed_framework", "replace", True,
      "vllm-ascend  # with the matching vllm release; needs its own newer torch/torch_npu env",
      "vLLM's CUDA build has no Ascend backend; the eval scripts need the vllm-ascend hardware plugin, "
      "which pins far newer vllm/torch/torch-npu (per its README torch 2.9.0 + torch-npu 2.9.0.post2, "
      "CANN 8.5.0), i.e. a separate evaluation environment."),
])

# ----------------------------------------------------------------------------------------------
# ToRA (microsoft/ToRA): tool-integrated reasoning inference with vLLM + python executor
# ----------------------------------------------------------------------------------------------
E("tora_infer", "src/infer/inference.py", "explicit_replacement",
  "microsoft/ToRA src/infer/inference.py (vLLM batch inference, tool-integrated rounds, n_sampling)", [
    C('available_gpus = os.environ["CUDA_VISIBLE_DEVICES"].split(",")', "env_var", "replace", True,
      'available_gpus = os.environ["ASCEND_RT_VISIBLE_DEVICES"].split(",")',
      "The vLLM tensor-parallel size is derived from the visible-device env var. On the ported "
      "launcher only ASCEND_RT_VISIBLE_DEVICES is set, so reading CUDA_VISIBLE_DEVICES raises KeyError "
      "(and if stale, gives a TP size unrelated to the visible NPUs)."),
])

E("tora_utils", "src/utils/utils.py", "explicit_replacement",
  "microsoft/ToRA src/utils/utils.py (set_seed, jsonl io, prompt construction)", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "No-op on an NPU host (lazy CUDA seeding is queued, never run). torch.manual_seed on the line "
      "above already seeds registered accelerator generators (torch >= 2.1 behaviour, unconfirmed in the knowledge base), and in this process sampling happens "
      "inside vLLM, which seeds itself. Not required."),
])

E("tora_executor", "src/utils/python_executor.py", "explicit_replacement",
  "microsoft/ToRA src/utils/python_executor.py (pebble process pool running model-written code)", [])

E("tora_grader", "src/eval/grader.py", "explicit_replacement",
  "microsoft/ToRA src/eval/grader.py (math_equal, sympy symbolic check; PRM800K-derived)", [])

E("tora_infer_sh", "src/scripts/infer.sh", "explicit_replacement",
  "microsoft/ToRA src/scripts/infer.sh", [
    C('export CUDA_VISIBLE_DEVICES="0,1,2,3"', "env_var", "replace", True,
      'export ASCEND_RT_VISIBLE_DEVICES="0,1,2,3"',
      "inference.py (ported) reads ASCEND_RT_VISIBLE_DEVICES to size vLLM tensor parallelism; without "
      "it the script dies with KeyError, and CUDA_VISIBLE_DEVICES does not restrict NPUs."),
    C("CUDA_LAUNCH_BLOCKING=0 TOKENIZERS_PARALLELISM=false", "env_var", "replace", False,
      "ASCEND_LAUNCH_BLOCKING=0 TOKENIZERS_PARALLELISM=false \\",
      "Set to 0 (the default) and CUDA-only: inert either way. Cosmetic rename to the Ascend "
      "counterpart."),
])

# ----------------------------------------------------------------------------------------------
# Qwen2.5-Math evaluation (QwenLM/Qwen2.5-Math evaluation/, ToRA-derived): maj@k / RM@k
# ----------------------------------------------------------------------------------------------
E("qwen_math_eval", "evaluation/math_eval.py", "explicit_replacement",
  "QwenLM/Qwen2.5-Math evaluation/math_eval.py (vLLM or HF generation, n_sampling, TIR rounds)", [
    C('available_gpus = os.environ["CUDA_VISIBLE_DEVICES"].split(",")', "env_var", "replace", True,
      'available_gpus = os.environ["ASCEND_RT_VISIBLE_DEVICES"].split(",")',
      "Read unconditionally in setup() (even for the HF path); KeyError once the launcher exports "
      "ASCEND_RT_VISIBLE_DEVICES instead, and it sizes tensor_parallel_size for vLLM-Ascend."),
])

E("qwen_model_utils", "evaluation/model_utils.py", "explicit_replacement",
  "QwenLM/Qwen2.5-Math evaluation/model_utils.py (from allenai/open-instruct: HF loading + generate_completions)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "The ported lines call torch.npu.is_available() / Tensor.npu(); on the torch versions this code "
      "targets (<2.5, no backend autoload) the npu device module only exists after import torch_npu."),
    C('if model.device.type == "cuda":', "device_type", "replace", True,
      'if model.device.type == "npu":',
      "With the model on the NPU the comparison is False, the prompt tensors stay on CPU and "
      "model.generate fails with a device mismatch."),
    C("batch_input_ids = batch_input_ids.cuda()", "tensor_to_device", "replace", True,
      "batch_input_ids = batch_input_ids.npu()",
      "Tensor.cuda() fails on a torch build without CUDA."),
    C("attention_mask = attention_mask.cuda()", "tensor_to_device", "replace", True,
      "attention_mask = attention_mask.npu()",
      "Tensor.cuda() fails on a torch build without CUDA."),
    C('device="cuda:0",', "device_type", "replace", False,
      'device="npu:0",',
      "Only on the gptq_model=True path, which math_eval.py never enables; auto_gptq has no NPU "
      "kernels anyway. Not required for this pipeline."),
    C("use_triton=True,", "triton_kernel_tuning", "replace", False,
      "use_triton=False,",
      "auto_gptq Triton kernels are CUDA Triton; same dead gptq path as above. Not required."),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():",
      "device_map='auto' already places the model on the NPU through accelerate, so skipping the "
      "explicit move (condition False on NPU hosts) leaves the model correctly placed. Not required."),
    C("model = model.cuda()", "tensor_to_device", "replace", True,
      "model = model.npu()",
      "Once the guard above is ported this line runs and Module.cuda() fails without CUDA."),
])

E("qwen_rm_maj", "evaluation/rm_maj_eval.py", "explicit_replacement",
  "Qwen2.5-Math evaluation: outcome-RM best-of-N (RM@k) vs. majority vote (maj@k), in the repo's style", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu",
      "The first torch.npu use happens after AutoModel.from_pretrained(device_map='auto'), by which "
      "point accelerate/transformers have imported torch_npu. Hygiene, not required."),
    C('kwargs["attn_implementation"] = "flash_attention_2"', "attention_kernel", "replace", True,
      'kwargs["attn_implementation"] = "sdpa"',
      "eval.sh passes --flash_attn. The flash-attn package cannot be installed on Ascend; SDPA "
      "dispatches to the NPU fused attention (transformers PR #36383 recommends sdpa on NPU)."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "torch.cuda.empty_cache() is a no-op when CUDA was never initialised, so nothing fails; the NPU "
      "caching allocator just is not trimmed. Memory hygiene only."),
    C('print(f"RM loaded on {torch.cuda.device_count()} GPU(s)")', "torch_cuda_api", "replace", False,
      'print(f"RM loaded on {torch.npu.device_count()} NPU(s)")',
      "Log line only: prints 0 devices on an NPU host, nothing depends on it."),
])

E("qwen_eval_sh", "evaluation/sh/eval.sh", "explicit_replacement",
  "QwenLM/Qwen2.5-Math evaluation/sh/eval.sh (greedy + 64-sample self-consistency + RM@64)", [
    C('export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-"0,1,2,3"}', "env_var", "replace", True,
      'export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-"0,1,2,3"}',
      "math_eval.py (ported) reads ASCEND_RT_VISIBLE_DEVICES for the vLLM TP size; without the "
      "export it raises KeyError."),
])

# ----------------------------------------------------------------------------------------------
# Math-Shepherd style: automatic process annotation + PRM training + PRM verification
# ----------------------------------------------------------------------------------------------
E("shep_gpu_utils", "utils/gpu_utils.py", "explicit_replacement",
  "Math-Shepherd-style annotation pipeline utils/gpu_utils.py (NVML free-GPU polling, research-code idiom)", [
    C("=import pynvml", "import_torch_npu", "replace", True,
      "import torch; import torch_npu  # device queries via torch.npu instead of NVML",
      "NVML does not exist on Ascend; the rewritten query below needs torch + torch_npu."),
    C("pynvml.nvmlInit()", "torch_cuda_api", "removal", True, None,
      "nvmlInit raises NVMLError (no libnvidia-ml) on an NPU host; the fallback then runs nvidia-smi "
      "and crashes with FileNotFoundError."),
    C("n = pynvml.nvmlDeviceGetCount()", "torch_cuda_api", "replace", True,
      "n = torch.npu.device_count()",
      "NVML device count is unavailable on Ascend."),
    C("handle = pynvml.nvmlDeviceGetHandleByIndex(i)", "torch_cuda_api", "removal", True, None,
      "No NVML handles on Ascend."),
    C("mem = pynvml.nvmlDeviceGetMemoryInfo(handle)", "torch_cuda_api", "replace", True,
      'mem = SimpleNamespace(**dict(zip(("free", "total"), torch.npu.mem_get_info(i))))',
      "torch.npu.mem_get_info(i) returns (free, total) bytes; wrapped so the next line's mem.free / "
      "mem.total keep working (needs from types import SimpleNamespace)."),
    C("pynvml.nvmlShutdown()", "torch_cuda_api", "removal", True, None,
      "NVML call; raises/NameError once NVML is gone."),
    C('["nvidia-smi", "--query-gpu=index,memory.free,memory.total"', "torch_cuda_api", "replace", False,
      '["npu-smi", "info"],  # needs a table parser; npu-smi has no --query-gpu CSV mode',
      "Fallback only reached when the primary query raises; with the torch.npu query it is not hit. "
      "npu-smi has no CSV query mode, so a porter rewrites it with a parser. Not required."),
    C("except pynvml.NVMLError as e:", "torch_cuda_api", "replace", False,
      "except RuntimeError as e:",
      "The except expression is only evaluated if the try block raises, so with a working torch.npu "
      "query the stale name is never looked up. Cleanup, not required."),
    C('env = os.environ.get("CUDA_VISIBLE_DEVICES")', "env_var", "replace", True,
      'env = os.environ.get("ASCEND_RT_VISIBLE_DEVICES")',
      "Decides which device ids are handed to the vLLM workers; reading the CUDA variable ignores an "
      "outer ASCEND_RT_VISIBLE_DEVICES restriction and silently schedules workers on excluded NPUs."),
])

E("shep_sample", "annotation/sample_completions.py", "explicit_replacement",
  "Math-Shepherd (Wang et al. 2024) automatic process annotation: per-step completion rollouts with vLLM", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "torch.npu.device_count() (ported line below) needs the npu module registered by torch_npu; "
      "nothing else imports torch_npu in the parent process before it runs."),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu_id)', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(gpu_id)',
      "Per-worker device pinning before vLLM starts. The Ascend runtime ignores CUDA_VISIBLE_DEVICES, "
      "so every vLLM-Ascend engine would land on NPU 0 and run out of memory."),
    C("torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_gpus = args.num_gpus if args.num_gpus > 0 else torch.npu.device_count()",
      "Returns 0 on an NPU host: zero workers, then a ZeroDivisionError in the sharding."),
])

E("shep_labels", "annotation/assign_labels.py", "explicit_replacement",
  "Math-Shepherd hard/soft estimation of step labels from rollouts (pure Python)", [])

E("shep_train", "prm/train_prm.py", "explicit_replacement",
  "Math-Shepherd-style PRM training: step-tag token, +/- candidate logits, torchrun + DDP", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Plain torchrun/DDP script: torch.npu.set_device, 'npu' devices and the hccl backend need "
      "torch_npu imported (torch < 2.5, no autoload)."),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "torch.manual_seed on the previous line seeds registered accelerator generators as well (unconfirmed); the "
      "CUDA call is a queued no-op. Not required."),
    C("with torch.cuda.amp.autocast(enabled=True, dtype=torch.bfloat16):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=True, dtype=torch.bfloat16):",
      "CUDA autocast on an NPU host only warns and disables itself. The model is loaded in bf16 "
      "already, so the forward still runs in bf16; only autocast's fp32 upcasts of softmax/norm are "
      "lost. Not a failure: not required."),
    C('dist.init_process_group(backend="nccl")', "dist_backend", "replace", True,
      'dist.init_process_group(backend="hccl")',
      "NCCL is not available on Ascend; init fails."),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(local_rank)",
      "Fails without CUDA; every rank must bind its own NPU."),
    C('device = torch.device(f"cuda:{local_rank}")', "device_type", "replace", True,
      'device = torch.device(f"npu:{local_rank}")',
      "Model and batches are moved to this device."),
    C('attn_implementation="flash_attention_2",', "attention_kernel", "replace", True,
      'attn_implementation="sdpa",',
      "flash-attn cannot be installed on Ascend (ImportError at load); SDPA uses the NPU fused "
      "attention kernel."),
    C("=pin_memory=True,", "pin_memory", "replace", False,
      'pin_memory=True, pin_memory_device="npu",',
      "Performance only: without an explicit NPU pin device the loader may skip pinning (unconfirmed "
      "for the torch/torch_npu version). Not required."),
    C("num_workers=2, pin_memory=True,", "pin_memory", "replace", False,
      'num_workers=2, pin_memory=True, pin_memory_device="npu",',
      "Same as the train loader: performance only, unconfirmed."),
    C("with torch.cuda.amp.autocast(dtype=torch.bfloat16):", "amp", "replace", False,
      "with torch.npu.amp.autocast(dtype=torch.bfloat16):",
      "Same reasoning as the eval autocast: disabled with a warning, bf16 weights keep the compute in "
      "bf16. Not required."),
    C("mem = torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", "replace", False,
      "mem = torch.npu.max_memory_allocated() / 2**30",
      "Returns 0 without raising when CUDA was never initialised; only the logged peak memory is "
      "wrong. Not required."),
])

E("shep_score", "prm/score_steps.py", "explicit_replacement",
  "Math-Shepherd PRM step scoring (HF model card snippet: candidate tokens +/-, step tag ки)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "The module-level DEVICE line calls torch.npu.is_available() at import time, before any HF code "
      "has imported torch_npu."),
    C('DEVICE = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'DEVICE = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "On an NPU host the CUDA check is False and the 7B PRM silently runs on CPU."),
    C("batch = batch.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "batch = batch.to(DEVICE, non_blocking=True)",
      "Tensor.cuda() fails without CUDA; also keeps the batch on the model's device."),
    C("mask = mask.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "mask = mask.to(DEVICE, non_blocking=True)",
      "Tensor.cuda() fails without CUDA."),
])

E("shep_bon", "verify/best_of_n.py", "explicit_replacement",
  "Math-Shepherd verification: PRM best-of-N (min/prod) vs. self-consistency and SC+PRM voting", [
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "torch.cuda.synchronize() lazily initialises CUDA and raises on a torch build without CUDA."),
    C("torch.cuda.synchronize()  # wait for the scoring kernels", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for the scoring kernels before reading the clock",
      "Same: raises without CUDA. Also needed for correct timing because NPU kernels run asynchronously."),
])

E("shep_annot_sh", "scripts/run_annotation.sh", "explicit_replacement",
  "Math-Shepherd-style annotation launcher (per-GPU background jobs, then rollouts and labels)", [
    C("set -euo pipefail", "env_var", "npu_only_addition", False,
      CANN_ENV,
      "CANN environment; environment-dependent, not counted as required."),
    C("NUM_GPUS=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)", "torch_cuda_api", "replace", True,
      "NUM_GPUS=$(ls /dev/davinci[0-9]* | wc -l)",
      "nvidia-smi is absent on Ascend hosts; with pipefail + set -e the script aborts (and without "
      "them NUM_GPUS would be 0). /dev/davinciN nodes are one per NPU (npu-smi info could be parsed "
      "instead)."),
    C("CUDA_VISIBLE_DEVICES=$i python -m generation.sample_solutions", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=$i python -m generation.sample_solutions \\",
      "One background job per device; with the CUDA variable every job would see all NPUs and start on "
      "NPU 0 (OOM / serialisation)."),
])

E("shep_train_sh", "scripts/train_prm.sh", "explicit_replacement",
  "Math-Shepherd-style PRM training launcher (torchrun, NCCL env)", [
    C("=set -x", "env_var", "npu_only_addition", False,
      CANN_ENV,
      "CANN environment; environment-dependent, not counted as required."),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False,
      "export HCCL_SOCKET_IFNAME=eth0",
      "NCCL_* variables are inert under HCCL. For multi-node runs HCCL_SOCKET_IFNAME (or HCCL_IF_IP) "
      "selects the host NIC; default selection may work, so not required (unconfirmed)."),
])

# ----------------------------------------------------------------------------------------------
# OpenRLHF (OpenRLHF/OpenRLHF): PRM training (PRM800K / Math-Shepherd format) with DeepSpeed
# ----------------------------------------------------------------------------------------------
E("orlhf_cli", "openrlhf/cli/train_prm.py", "explicit_replacement",
  "OpenRLHF/OpenRLHF openrlhf/cli/train_prm.py", [])

E("orlhf_ds", "openrlhf/utils/deepspeed/deepspeed.py", "explicit_replacement",
  "OpenRLHF/OpenRLHF openrlhf/utils/deepspeed/deepspeed.py (DeepspeedStrategy)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu",
      "`import deepspeed` (line above) runs DeepSpeed's accelerator detection, which imports torch_npu "
      "when it is installed; explicit import is hygiene (unconfirmed for every DeepSpeed version)."),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "Covered by torch.manual_seed on the line above (unconfirmed for custom devices); queued no-op on an NPU host. Not required."),
    C("torch.cuda.set_device(self.args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(self.args.local_rank)",
      "Fails without CUDA; each rank must bind its NPU before deepspeed.init_distributed (whose "
      "backend then comes from the NPU accelerator: hccl)."),
    C('group = dist.new_group(ranks=ring_attn_ranks, backend="nccl")', "dist_backend", "replace", True,
      'group = dist.new_group(ranks=ring_attn_ranks, backend="hccl")',
      "Ring-attention path only (--ring_attn_size > 1), but when reached the NCCL group cannot be "
      "created on Ascend."),
    C("from ring_flash_attn import substitute_hf_flash_attn", "attention_kernel", "replace", True,
      "raise NotImplementedError('ring_flash_attn needs CUDA flash-attn; on NPU use ring_attn_size=1 "
      "or an NPU context-parallel implementation')",
      "ring_flash_attn is built on the CUDA flash-attn kernels and cannot be installed on Ascend; "
      "ring-attention path only."),
    C("AdamOptimizer = DeepSpeedCPUAdam if self.adam_offload else FusedAdam", "fused_optimizer", "replace", False,
      "AdamOptimizer = DeepSpeedCPUAdam if self.adam_offload else torch_npu.optim.NpuFusedAdamW",
      "DeepSpeed's FusedAdam loads a CUDA op builder; DeepSpeed's NPU accelerator may supply an NPU "
      "builder instead (unconfirmed in the knowledge base), so a porter switches to the torch_npu fused "
      "AdamW. Marked not required because it may work as-is."),
    C("data = data.to(torch.cuda.current_device())", "tensor_to_device", "replace", True,
      "data = data.to(torch.npu.current_device())",
      "all_reduce of the per-step logs: torch.cuda.current_device() raises without CUDA; called every "
      "training step."),
    C("ret = [torch.zeros_like(data).to(torch.cuda.current_device())", "tensor_to_device", "replace", True,
      "ret = [torch.zeros_like(data).to(torch.npu.current_device()) for _ in range(self.world_size)]",
      "Raises without CUDA."),
    C("dist.all_gather(ret, data.to(torch.cuda.current_device()))", "tensor_to_device", "replace", True,
      "dist.all_gather(ret, data.to(torch.npu.current_device()))",
      "Raises without CUDA."),
])

E("orlhf_actor", "openrlhf/models/actor.py", "explicit_replacement",
  "OpenRLHF/OpenRLHF openrlhf/models/actor.py (Actor wrapper used for the PRM)", [
    C('attn_implementation = "flash_attention_2" if use_flash_attention_2 else "eager"', "attention_kernel",
      "replace", True,
      'attn_implementation = "sdpa" if use_flash_attention_2 else "eager"',
      "The launcher passes --flash_attn (and packing forces it). flash-attn cannot be installed on "
      "Ascend; with the transformers pin of this project flash_attention_2 needs that package. SDPA "
      "reaches the NPU fused attention."),
])

E("orlhf_mutils", "openrlhf/models/utils.py", "explicit_replacement",
  "OpenRLHF/OpenRLHF openrlhf/models/utils.py (log-probs, KL, packing helpers)", [
    C("from flash_attn.bert_padding import index_first_axis, pad_input, rearrange, unpad_input",
      "attention_kernel", "replace", True,
      "from openrlhf.models.padding_utils import index_first_axis, pad_input, rearrange, unpad_input  "
      "# pure-torch copies",
      "Module-level import: openrlhf.models fails to import at all without flash-attn, which cannot be "
      "installed on Ascend. The padding helpers are plain torch indexing and can be vendored."),
])

E("orlhf_trainer", "openrlhf/trainer/prm_trainer.py", "explicit_replacement",
  "OpenRLHF/OpenRLHF openrlhf/trainer/prm_trainer.py (ProcessRewardModelTrainer)", [
    C("=inputs = inputs.to(torch.cuda.current_device())", "tensor_to_device", "replace", True,
      "inputs = inputs.to(torch.npu.current_device())",
      "Packing branch; torch.cuda.current_device() raises without CUDA."),
    C("=attention_mask = attention_masks.to(torch.cuda.current_device())", "tensor_to_device", "replace", True,
      "attention_mask = attention_masks.to(torch.npu.current_device())",
      "Packing branch; raises without CUDA."),
    C("inputs = inputs.to(torch.cuda.current_device()).squeeze(1)", "tensor_to_device", "replace", True,
      "inputs = inputs.to(torch.npu.current_device()).squeeze(1)",
      "Non-packed branch (the one used once --packing_samples is dropped); raises without CUDA."),
    C("attention_mask = attention_masks.to(torch.cuda.current_device()).squeeze(1)", "tensor_to_device",
      "replace", True,
      "attention_mask = attention_masks.to(torch.npu.current_device()).squeeze(1)",
      "Raises without CUDA."),
    C("labels = labels.to(torch.cuda.current_device()).squeeze(1)", "tensor_to_device", "replace", True,
      "labels = labels.to(torch.npu.current_device()).squeeze(1)",
      "Raises without CUDA."),
    C("device = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "device = torch.npu.current_device()",
      "Eval loop device; raises without CUDA."),
])

E("orlhf_sh", "examples/scripts/train_prm_mistral.sh", "explicit_replacement",
  "OpenRLHF/OpenRLHF examples/scripts/train_prm_mistral.sh (Math-Shepherd data, ки placeholder)", [
    C("--packing_samples \\", "attention_kernel", "removal", True, None,
      "Packing relies on flash-attn varlen semantics via position_ids with attention_mask=None. With "
      "the NPU port's SDPA attention nothing separates the packed samples, so tokens attend across "
      "sample boundaries: silently wrong PRM training. Drop packing (or implement TND "
      "npu_fusion_attention with actual_seq_qlen)."),
])

E("orlhf_docker", "dockerfile/Dockerfile", "explicit_replacement",
  "OpenRLHF/OpenRLHF dockerfile/Dockerfile", [
    C("FROM nvcr.io/nvidia/pytorch:24.07-py3", "env_var", "replace", True,
      "FROM quay.io/ascend/cann:8.5.0-910b-ubuntu22.04-py3.11",
      "NGC CUDA base image cannot drive NPUs; use a CANN image (tag naming per Ascend/cann-container-image "
      "cann/8.5.0-910b-ubuntu22.04-py3.11; registry path unconfirmed)."),
    C("RUN pip uninstall xgboost transformer_engine flash_attn pynvml opencv-python-headless -y",
      "import_torch_npu", "npu_only_addition", True,
      "RUN pip install torch==2.9.0 torch_npu==2.9.0.post2",
      "The CANN image has no PyTorch; torch_npu must be installed with the exactly matching torch "
      "(vllm-ascend README pairs torch 2.9.0 + torch-npu 2.9.0.post2 with CANN 8.5.0). The uninstall "
      "line itself is inert on the new base and left alone."),
    C("RUN pip install vllm==0.6.4.post1", "distributed_framework", "replace", True,
      "RUN VLLM_TARGET_DEVICE=empty pip install vllm==0.13.0 && pip install vllm-ascend==0.13.0",
      "The CUDA vLLM wheel pulls a CUDA torch and has no Ascend backend; vllm-ascend is the hardware "
      "plugin (install recipe unconfirmed in the knowledge base)."),
    C("RUN pip install flash-attn==2.7.0.post2 --no-build-isolation", "attention_kernel", "removal", True, None,
      "flash-attn needs nvcc/CUDA to build; the image build fails on a CANN base."),
])

E("orlhf_req", "requirements.txt", "explicit_replacement",
  "OpenRLHF/OpenRLHF requirements.txt", [
    C("flash-attn==2.7.0.post2", "attention_kernel", "removal", True, None,
      "Cannot be built/installed on Ascend; `pip install -r` fails."),
    C("=torch", "import_torch_npu", "npu_only_addition", True,
      "torch_npu==2.9.0.post2  # pin torch==2.9.0 to match",
      "No NPU backend without torch_npu; its version must equal torch's."),
])

# ----------------------------------------------------------------------------------------------
# gsm8k-ScRel (OFA-Sys/gsm8k-ScRel): rejection-sampling fine-tuning
# ----------------------------------------------------------------------------------------------
E("screl_infer", "single_inference.py", "explicit_replacement",
  "OFA-Sys/gsm8k-ScRel single_inference.py (RFT sampling: k paths per question, one process per GPU)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Plain HF script calling Module.npu()/torch.npu.*; nothing imports torch_npu before the model is "
      "moved (from_pretrained without device_map does not probe the NPU)."),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(seed)",
      "transformers.set_seed (two lines up) already seeds the NPU generator when torch_npu is "
      "available, and torch.manual_seed seeds all devices. Not required."),
    C("model = model.cuda()", "tensor_to_device", "replace", True,
      "model = model.npu()",
      "Module.cuda() fails without CUDA."),
    C('print(f"loaded {args.base_model} on {torch.cuda.get_device_name(0)}")', "torch_cuda_api", "replace", True,
      'print(f"loaded {args.base_model} on {torch.npu.get_device_name(0)}")',
      "get_device_name initialises CUDA and raises on an NPU host, even though it only feeds a log line."),
    C("input_ids = enc.input_ids.cuda()", "tensor_to_device", "replace", True,
      "input_ids = enc.input_ids.npu()",
      "Tensor.cuda() fails without CUDA."),
    C("attention_mask = enc.attention_mask.cuda()", "tensor_to_device", "replace", True,
      "attention_mask = enc.attention_mask.npu()",
      "Tensor.cuda() fails without CUDA."),
    C("peak mem {torch.cuda.max_memory_allocated() / 1e9:.1f} GB", "torch_cuda_api", "replace", False,
      'f"{(time.time() - t0) / 60:.1f} min, peak mem {torch.npu.max_memory_allocated() / 1e9:.1f} GB"',
      "Returns 0 without raising when CUDA is uninitialised; only the log is wrong. Not required."),
])

E("screl_group", "group_rft_data.py", "explicit_replacement",
  "OFA-Sys/gsm8k-ScRel RFT data grouping (dedup by equation list)", [])

E("screl_train", "train.py", "explicit_replacement",
  "OFA-Sys/gsm8k-ScRel train.py (Alpaca-style HF Trainer + DeepSpeed ZeRO-3)", [
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "The DeepSpeed save path is always taken (--deepspeed); torch.cuda.synchronize() raises without "
      "CUDA after the whole training run, losing the final save."),
])

E("screl_ds", "ds_config.json", "explicit_replacement",
  "OFA-Sys/gsm8k-ScRel ds_config.json (ZeRO-3, auto fields)", [])

E("screl_sample_sh", "sample_rft.sh", "explicit_replacement",
  "OFA-Sys/gsm8k-ScRel RFT pipeline launcher (8 sampling jobs per round, group, DeepSpeed SFT)", [
    C("=set -e", "env_var", "npu_only_addition", False,
      CANN_ENV,
      "CANN environment; environment-dependent, not counted as required."),
    C("CUDA_VISIBLE_DEVICES=${i} python single_inference.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${i} python single_inference.py \\",
      "Per-job device pinning; the CUDA variable is ignored on Ascend so all 8 jobs would load a 7B "
      "model onto NPU 0."),
    C("--tf32 True", "device_capability_check", "replace", True,
      "--tf32 False \\",
      "TrainingArguments raises ValueError for tf32=True when is_torch_tf32_available() (a CUDA/Ampere "
      "probe) is False, as on an NPU host."),
])
