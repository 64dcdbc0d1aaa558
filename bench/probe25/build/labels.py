"""Labels for probe25 (hand-written synthetic upstream files; see ../README.md).

C(sub, kind, change_type, required, ported, note) -> one labelled change; `sub` must match exactly one line
("=text": the stripped line equals text).
E(id, path, style, imitates, changes) -> one file entry.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required,
            "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


R, A, B, X = "replace", "npu_only_addition", "add_branch", "removal"


K = "/work/shared/knowledge/torch-npu-migration.md"
TSV = "/work/shared/knowledge/ops/torch_api_npu_support_2.7.1.tsv"

# ---------------------------------------------------------------- transformers
E("hf_import_utils", "src/transformers/utils/import_utils.py", "device_branch_or_abstraction",
  "transformers utils/import_utils.py availability helpers", [
    C("def is_torch_mps_available():", "import_torch_npu", A, True,
      "def is_torch_npu_available(check_device=False):  # find_spec('torch_npu'); import torch_npu; torch.npu.is_available()",
      "New availability helper (imports torch_npu) that every NPU branch in the library keys on; without it no NPU path "
      "exists. HF libraries gate NPU support on is_torch_npu_available (knowledge §6 'HF transformers / accelerate ...')."),
    C("return torch.cuda.is_available() and torch.cuda.is_bf16_supported()", "device_capability_check", B, True,
      "if is_torch_npu_available(): return torch.npu.is_bf16_supported()",
      "bf16 check only knows CUDA, so bf16=True is rejected/mis-detected on an NPU host; torch.npu.is_bf16_supported "
      "exists in torch_npu.npu.__all__ (" + K + " §2.1); transfer_to_npu patches this very helper (§2.7)."),
    C('return version.parse(_torch_version) >= version.parse("2.1.1")', "attention_kernel", B, False,
      'if is_torch_npu_available(): return version.parse(_torch_version) >= version.parse("2.1.0")',
      "The 2.1.1 floor works around a CUDA memory-efficient-kernel bug; on NPU SDPA is fine from torch 2.1.0, the "
      "torch version of the widely used torch_npu 2.1.0.postN wheels (" + K + " §1.2). Without it those hosts get eager "
      "attention: slower, not wrong."),
])

E("hf_training_args", "src/transformers/training_args.py", "device_branch_or_abstraction",
  "transformers training_args.py __post_init__ and _setup_devices", [
    C("=is_torch_bf16_gpu_available,", "import_torch_npu", A, True,
      "is_torch_npu_available,",
      "Helper import needed by the NPU device branch in _setup_devices and the fp16 device check."),
    C('"choices": ["nccl", "gloo", "mpi", "ccl"],', "dist_backend", R, False,
      '"choices": ["nccl", "gloo", "mpi", "ccl", "hccl"],',
      "Lets users pass --ddp_backend hccl explicitly (HCCL is the Ascend collective backend, ascend-distributed.md); "
      "the default (None) lets accelerate pick the backend, so not required."),
    C('and (self.device.type != "cuda")', "device_type", R, True,
      'and (self.device.type not in ["cuda", "npu"])',
      "Without it --fp16 raises 'can only be used on CUDA devices' on an NPU host although torch_npu AMP works "
      "(" + TSV + ": torch.cuda.amp.* -> torch_npu.npu.amp.*)."),
    C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", B, True,
      'elif is_torch_npu_available(): device = torch.device("npu:0"); torch.npu.set_device(device)',
      "Non-distributed path falls back to CPU on an NPU host (torch.cuda.is_available() is False there); "
      "the NPU branch goes beside this CUDA line. The CUDA line itself stays for GPU users."),
    C('ADAMW_TORCH_FUSED = "adamw_torch_fused"', "fused_optimizer", A, False,
      'ADAMW_TORCH_NPU_FUSED = "adamw_torch_npu_fused"',
      "New optimizer name mapped to torch_npu.optim.NpuFusedAdamW (" + K + " §5 fused optimizers); performance only."),
])

E("hf_trainer", "src/transformers/trainer.py", "device_branch_or_abstraction",
  "transformers trainer.py amp, empty-cache and RNG-state paths", [
    C("from .utils import is_apex_available, is_sagemaker_mp_enabled, logging", "import_torch_npu", A, False,
      "from .utils import is_apex_available, is_sagemaker_mp_enabled, is_torch_npu_available, logging",
      "Helper import for the empty-cache and RNG-state branches (all optional), hence not required."),
    C("self.scaler = torch.cuda.amp.GradScaler()", "amp", R, True,
      "self.scaler = torch.amp.GradScaler(args.device.type)",
      "torch.cuda.amp.GradScaler is disabled without CUDA, so fp16 on NPU runs without loss scaling; "
      "NPU form torch_npu.npu.amp.GradScaler (" + TSV + ")."),
    C("ctx_manager = torch.cuda.amp.autocast(cache_enabled=cache_enabled, dtype=self.amp_dtype)", "amp", R, True,
      "ctx_manager = torch.autocast(device_type=self.args.device.type, cache_enabled=cache_enabled, dtype=self.amp_dtype)",
      "CUDA autocast does not cast NPU tensors, so mixed precision silently does nothing on NPU; torch.autocast ✔ (" + TSV + ")."),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", B, False,
      "elif is_torch_npu_available(): torch.npu.empty_cache()",
      "torch.cuda.empty_cache() is a silent no-op without CUDA; adding the NPU branch only frees cached NPU memory."),
    C('rng_states["cuda"] = torch.cuda.random.get_rng_state_all()', "torch_cuda_api", B, False,
      'if is_torch_npu_available(): rng_states["npu"] = torch.npu.random.get_rng_state_all()',
      "Resume reproducibility only; get_rng_state_all exists in torch_npu.npu (" + K + " §2.1); transfer_to_npu patches "
      "Trainer._save_rng_state (§2.7)."),
    C('torch.cuda.random.set_rng_state_all(checkpoint_rng_state["cuda"])', "torch_cuda_api", B, False,
      'if is_torch_npu_available(): torch.npu.random.set_rng_state_all(checkpoint_rng_state["npu"])',
      "Counterpart of the save branch; reproducibility only."),
    C('if self.args.device.type == "cuda":', "torch_cuda_api", B, False,
      'elif self.args.device.type == "npu": torch.npu.synchronize()',
      "Timing accuracy of speed metrics only (NPU ops are asynchronous)."),
    C('elif args.optim == "adamw_apex_fused":', "fused_optimizer", B, False,
      'elif args.optim == "adamw_torch_npu_fused": from torch_npu.optim import NpuFusedAdamW; optimizer_cls = NpuFusedAdamW; optimizer_kwargs.update(adam_kwargs)',
      "NPU fused AdamW beside the apex FusedAdam branch (" + K + " §5; apex's CUDA FusedAdam is not available on NPU, §6)."),
    C('metrics[f"{prefix}_mem_gpu_alloc"] = torch.cuda.memory_allocated()', "torch_cuda_api", B, False,
      'elif is_torch_npu_available(): metrics[f"{prefix}_mem_npu_alloc"] = torch.npu.memory_allocated() ...',
      "Memory metrics only; transfer_to_npu patches TrainerMemoryTracker.start for the same device split (" + K + " §2.7)."),
])

E("hf_modeling_utils", "src/transformers/modeling_utils.py", "device_branch_or_abstraction",
  "transformers modeling_utils.py flash-attn check, device_map and allocator warm-up", [
    C("=is_flash_attn_2_available,", "import_torch_npu", A, False,
      "is_torch_npu_available,", "Helper import for the NPU flash-attention branch (optional path)."),
    C('if device.type == "cuda":', "torch_cuda_api", R, False,
      'if device.type in ("cuda", "npu"):',
      "Warm-up allocation is never capped by free memory on NPU; a device-agnostic rewrite uses the NPU module."),
    C("index = device.index if device.index is not None else torch.cuda.current_device()", "torch_cuda_api", R, False,
      "index = device.index if device.index is not None else getattr(torch, device.type).current_device()",
      "Only reached inside the branch above once it admits npu."),
    C("device_memory = torch.cuda.mem_get_info(index)[0]", "torch_cuda_api", R, False,
      "device_memory = getattr(torch, device.type).mem_get_info(index)[0]",
      "torch.cuda.mem_get_info -> torch_npu.npu.mem_get_info ✔ (" + TSV + ")."),
    C("if not is_flash_attn_2_available():", "attention_kernel", B, False,
      "if is_torch_npu_available(): logger.info('Detect using FlashAttention2 on Ascend NPU.'); return config",
      "flash-attn cannot be installed on NPU; transformers maps flash_attention_2 onto npu_fusion_attention "
      "(" + K + " §5 attention mapping). Not required: sdpa works on NPU (PR #36383)."),
])

E("hf_sdpa_attention", "src/transformers/integrations/sdpa_attention.py", "device_branch_or_abstraction",
  "transformers integrations/sdpa_attention.py (no change needed)", [])

E("hf_flash_attention_utils", "src/transformers/modeling_flash_attention_utils.py", "device_branch_or_abstraction",
  "transformers modeling_flash_attention_utils.py flash_attn imports", [
    C("from .utils import is_flash_attn_2_available, is_flash_attn_greater_or_equal_2_10, logging", "import_torch_npu", A,
      False, "from .utils import is_flash_attn_2_available, is_flash_attn_greater_or_equal_2_10, is_torch_npu_available, logging",
      "Helper import for the NPU import branch below."),
    C("from flash_attn import flash_attn_func, flash_attn_varlen_func", "attention_kernel", B, False,
      "elif is_torch_npu_available(): from .integrations.npu_flash_attention import npu_flash_attn_func as flash_attn_func, "
      "npu_flash_attn_varlen_func as flash_attn_varlen_func, pad_input, unpad_input, index_first_axis",
      "flash-attn cannot be installed on NPU; transformers' npu_flash_attention.py maps flash_attn_func/varlen onto "
      "npu_fusion_attention (" + K + " §5, §6). Only reached when flash_attention_2 is requested, and the unchanged "
      "modeling_utils rejects that on NPU, so not required."),
    C("return not is_flash_attn_greater_or_equal_2_10()", "attention_kernel", B, False,
      "if is_torch_npu_available(): return is_npu_fa2_top_left_aligned_causal_mask()  # NPU_FA2_SPARSE_MODE",
      "NPU FA is bottom-right aligned by default (sparse_mode=3), top-left with NPU_FA2_SPARSE_MODE=2 (" + K + " §5); "
      "only used on the flash_attention_2 path."),
])

E("hf_pipelines_base", "src/transformers/pipelines/base.py", "device_branch_or_abstraction",
  "transformers pipelines/base.py device selection and device_placement", [
    C("from ..utils import ModelOutput, is_torch_available, is_torch_cuda_available, logging", "import_torch_npu", A, True,
      "from ..utils import ModelOutput, is_torch_available, is_torch_cuda_available, is_torch_npu_available, logging",
      "Needed by the int-device NPU branch."),
    C('self.device = torch.device(f"cuda:{device}")', "device_type", B, True,
      'elif is_torch_npu_available(): self.device = torch.device(f"npu:{device}")',
      "pipeline(device=0) on an NPU host falls to torch.device(0), i.e. a CUDA ordinal, and model.to() fails."),
    C('if self.device.type == "cuda":', "torch_cuda_api", B, False,
      'elif self.device.type == "npu": with torch.npu.device(self.device): yield',
      "Makes implicit allocations land on the chosen NPU ordinal; inputs are moved explicitly anyway, so only "
      "matters for non-zero ordinals. torch.cuda.device -> torch_npu.npu.device (" + K + " §2.1)."),
])

E("hf_gen_streamers", "src/transformers/generation/streamers.py", "device_branch_or_abstraction",
  "transformers generation/streamers.py with a CUDA-event timed streamer", [
    C('self.use_device_events = self.device is not None and self.device.type == "cuda"', "device_type", R, False,
      'self.use_device_events = self.device is not None and self.device.type in ("cuda", "npu")',
      "On NPU the streamer silently falls back to wall-clock timing taken before the host syncs; timing accuracy only."),
    C("self._start_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, False,
      "self._start_event = getattr(torch, self.device.type).Event(enable_timing=True)",
      "torch.cuda.Event -> torch_npu.npu.Event ✔ (" + TSV + "); reached only after the line above admits npu."),
    C("=event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, False,
      "event = getattr(torch, self.device.type).Event(enable_timing=True)", "Same as above."),
    C("event.record(torch.cuda.current_stream(self.device))", "torch_cuda_api", R, False,
      "event.record(getattr(torch, self.device.type).current_stream(self.device))",
      "current_stream is in torch_npu.npu.__all__ (" + K + " §2.1)."),
    C("torch.cuda.synchronize(self.device)", "torch_cuda_api", R, False,
      "getattr(torch, self.device.type).synchronize(self.device)", "Same guarded path."),
])

E("hf_testing_utils", "src/transformers/testing_utils.py", "device_branch_or_abstraction",
  "transformers testing_utils.py torch_device, require_torch_gpu and backend_* dispatch tables", [
    C("=is_torch_bf16_gpu_available,", "import_torch_npu", A, False, "is_torch_npu_available,",
      "Helper import for the NPU test branches."),
    C("elif torch.cuda.is_available():", "device_type", B, True,
      'elif is_torch_npu_available(): torch_device = "npu"',
      "Without it the whole test suite silently runs on CPU on an NPU host (tests pass, NPU untested)."),
    C("def require_torch_gpu(test_case):", "device_type", A, False,
      'def require_torch_npu(test_case): return unittest.skipUnless(is_torch_npu_available(), "test requires NPU")(test_case)',
      "New decorator for NPU-specific tests; test-only convenience."),
    C("return torch.cuda.device_count()", "torch_cuda_api", B, False,
      "if is_torch_npu_available(): return torch.npu.device_count()",
      "Multi-device test gating only."),
    C('BACKEND_MANUAL_SEED = {"cuda": torch.cuda.manual_seed,', "torch_cuda_api", B, False,
      'BACKEND_MANUAL_SEED["npu"] = torch.npu.manual_seed',
      "Dispatch-table entry; the default (torch.manual_seed) already works, test-only."),
    C('BACKEND_EMPTY_CACHE = {"cuda": torch.cuda.empty_cache,', "torch_cuda_api", B, False,
      'BACKEND_EMPTY_CACHE["npu"] = torch.npu.empty_cache', "Test-only memory hygiene."),
    C('BACKEND_DEVICE_COUNT = {"cuda": torch.cuda.device_count,', "torch_cuda_api", B, False,
      'BACKEND_DEVICE_COUNT["npu"] = torch.npu.device_count', "Test-only; default returns 1."),
    C('BACKEND_SYNCHRONIZE = {"cuda": torch.cuda.synchronize,', "torch_cuda_api", B, False,
      'BACKEND_SYNCHRONIZE["npu"] = torch.npu.synchronize', "Test-only."),
    C('BACKEND_RESET_PEAK_MEMORY_STATS = {"cuda": torch.cuda.reset_peak_memory_stats,', "torch_cuda_api", B, False,
      'BACKEND_RESET_PEAK_MEMORY_STATS["npu"] = torch.npu.reset_peak_memory_stats', "Test-only."),
    C('BACKEND_MAX_MEMORY_ALLOCATED = {"cuda": torch.cuda.max_memory_allocated,', "torch_cuda_api", B, False,
      'BACKEND_MAX_MEMORY_ALLOCATED["npu"] = torch.npu.max_memory_allocated',
      "Test-only; without it memory-regression tests read 0 on NPU."),
    C("def require_torch_multi_gpu(test_case):", "device_type", A, False,
      'def require_torch_multi_npu(test_case): return unittest.skipUnless(is_torch_npu_available() and torch.npu.device_count() > 1, "test requires multiple NPUs")(test_case)',
      "Test-only decorator."),
    C('if torch_device == "cuda" and not torch.cuda.is_available():', "import_torch_npu", B, False,
      'if torch_device == "npu" and not is_torch_npu_available(): raise ValueError(...)  # also imports torch_npu',
      "TRANSFORMERS_TEST_DEVICE=npu only parses after torch_npu is imported; test-only."),
])

# ---------------------------------------------------------------- diffusers
E("diffusers_training_utils", "src/diffusers/training_utils.py", "device_branch_or_abstraction",
  "diffusers training_utils.py set_seed / free_memory / EMA", [
    C("from .utils import deprecate, is_peft_available, is_transformers_available", "import_torch_npu", A, False,
      "from .utils import deprecate, is_peft_available, is_torch_npu_available, is_transformers_available",
      "Helper import (plus a guarded `import torch_npu`) for the optional branches below."),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", B, False,
      "if is_torch_npu_available(): torch.npu.manual_seed_all(seed)",
      "torch.manual_seed above also seeds registered custom devices in recent torch (unconfirmed in knowledge); "
      "manual_seed_all exists in torch_npu.npu (" + TSV + ")."),
    C("if torch.cuda.is_available():", "torch_cuda_api", B, False,
      "elif is_torch_npu_available(): torch_npu.npu.empty_cache()",
      "Cache release only; torch.cuda.empty_cache is never reached on NPU and nothing fails."),
    C("self.shadow_params = [p.pin_memory() for p in self.shadow_params]", "pin_memory", R, False,
      'self.shadow_params = [p.pin_memory(device="npu") if is_torch_npu_available() else p.pin_memory() for p in self.shadow_params]',
      "Whether argument-less pin_memory() pins for the NPU copy engine under torch_npu is unconfirmed; transfer_to_npu "
      "wraps Tensor.pin_memory (" + K + " §2.2). Performance only."),
])

E("diffusers_attention_processor", "src/diffusers/models/attention_processor.py", "device_branch_or_abstraction",
  "diffusers models/attention_processor.py xformers and SDPA processors", [
    C("from ..utils.import_utils import is_xformers_available", "import_torch_npu", A, False,
      "from ..utils.import_utils import is_torch_npu_available, is_xformers_available  # + if is_torch_npu_available(): import torch_npu",
      "Needed by the NPU processor."),
    C("def set_use_memory_efficient_attention_xformers(self, use_memory_efficient_attention_xformers: bool,",
      "attention_kernel", A, False,
      "def set_use_npu_flash_attention(self, use_npu_flash_attention: bool) -> None:",
      "New switch beside the xformers one; xformers has no NPU backend (" + K + " §6)."),
    C("=class AttnProcessor2_0:", "attention_kernel", A, False,
      "class AttnProcessorNPU:  # torch_npu.npu_fusion_attention(q, k, v, attn.heads, input_layout='BNSD', atten_mask=..., scale=..., keep_prob=1.0)[0]",
      "Performance only: SDPA (AttnProcessor2_0) already runs on NPU (" + TSV + " scaled_dot_product_attention ✔)."),
])

E("diffusers_activations", "src/diffusers/models/activations.py", "device_branch_or_abstraction",
  "diffusers models/activations.py GEGLU", [
    C("from ..utils import deprecate", "import_torch_npu", A, False,
      "from ..utils import deprecate, is_torch_npu_available  # + if is_torch_npu_available(): import torch_npu",
      "Needed by the fused GEGLU branch."),
    C("return hidden_states * self.gelu(gate)", "npu_fused_op", B, False,
      "if is_torch_npu_available(): return torch_npu.npu_geglu(hidden_states, dim=-1, approximate=1)[0]",
      "Fused GEGLU; npu_geglu is used by diffusers on NPU (" + K + " §5). Performance only."),
])

E("diffusers_pipeline_utils", "src/diffusers/pipelines/pipeline_utils.py", "device_branch_or_abstraction",
  "diffusers pipeline_utils.py model / sequential CPU offload", [
    C("from ..utils import is_accelerate_available, is_accelerate_version, logging", "device_type", A, True,
      "from ..utils.torch_utils import get_device",
      "Device-agnostic helper used for the offload default below."),
    C('def enable_model_cpu_offload(self, gpu_id: Optional[int] = None, device: Union[torch.device, str] = "cuda"):',
      "device_type", R, True,
      "def enable_model_cpu_offload(self, gpu_id: Optional[int] = None, device: Union[torch.device, str] = None):  # device = device or get_device()",
      "Default offload device 'cuda' makes pipe.enable_model_cpu_offload() fail on an NPU host."),
    C('def enable_sequential_cpu_offload(self, gpu_id: Optional[int] = None, device: Union[torch.device, str] = "cuda"):',
      "device_type", R, True,
      "def enable_sequential_cpu_offload(self, gpu_id: Optional[int] = None, device: Union[torch.device, str] = None):  # device = device or get_device()",
      "Same hard-coded default."),
    C("torch.cuda.empty_cache()  # otherwise", "torch_cuda_api", R, False,
      "device_mod = getattr(torch, self.device.type, None); device_mod.empty_cache()",
      "Silent no-op without CUDA; the model-offload path already uses the device-module idiom."),
    C('if pipeline_is_sequentially_offloaded and device and torch.device(device).type == "cuda":', "device_type", R, False,
      'if pipeline_is_sequentially_offloaded and device and torch.device(device).type in ("cuda", "npu"):',
      "Guard that turns a confusing failure into a clear error; not needed for correct use."),
    C('if pipeline_is_offloaded and device and torch.device(device).type == "cuda":', "device_type", R, False,
      'if pipeline_is_offloaded and device and torch.device(device).type in ("cuda", "npu"):', "Warning only."),
])

E("diffusers_train_t2i", "examples/text_to_image/train_text_to_image.py", "device_branch_or_abstraction",
  "diffusers examples/text_to_image/train_text_to_image.py", [
    C("from diffusers.utils.import_utils import is_xformers_available", "import_torch_npu", A, False,
      "from diffusers.utils.import_utils import is_torch_npu_available, is_xformers_available",
      "Helper import for the NPU flash-attention switch."),
    C('"--enable_xformers_memory_efficient_attention", action="store_true", help="Whether or not to use xformers."',
      "attention_kernel", A, False,
      'parser.add_argument("--enable_npu_flash_attention", action="store_true", help="Whether or not to use npu flash attention.")',
      "Opt-in NPU fused attention flag beside the xformers one; performance only."),
    C("unet.enable_xformers_memory_efficient_attention()", "attention_kernel", B, False,
      "if args.enable_npu_flash_attention: unet.enable_npu_flash_attention() if is_torch_npu_available() else raise ValueError(...)",
      "Branch beside the xformers block; performance only (SDPA is the default and works)."),
    C('autocast_ctx = torch.autocast("cuda")', "amp", R, True,
      "autocast_ctx = torch.autocast(accelerator.device.type)",
      "autocast('cuda') is disabled on a host without CUDA, so fp16 VAE/text encoder and the fp32 UNet meet "
      "without autocast in validation; torch.autocast ✔ (" + TSV + ")."),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False,
      "free_memory()  # diffusers.training_utils, device-agnostic",
      "Silent no-op on NPU; frees cached NPU memory after validation."),
    C("=if args.seed is not None:", "compile_mode", A, False,
      "if is_torch_npu_available(): torch.npu.set_compile_mode(jit_compile=False)",
      "Avoids per-shape operator compilation on NPU; msFmkTransplt's standard performance advice (" + K + " §3.5). "
      "Inserted before the seed block."),
])

# ---------------------------------------------------------------- accelerate
E("accelerate_state", "src/accelerate/state.py", "device_branch_or_abstraction",
  "accelerate state.py PartialState backend / device selection", [
    C("=is_mps_available,", "import_torch_npu", A, True, "is_npu_available,",
      "Availability helper import for every NPU branch below."),
    C("=DistributedType.MULTI_GPU,", "distributed_framework", B, True,
      "DistributedType.MULTI_NPU,",
      "wait_for_everyone() would skip the barrier for multi-NPU runs, so ranks race (e.g. rank 0 saving while others "
      "read)."),
    C("elif torch.cuda.is_available():", "device_type", B, True,
      'elif is_npu_available(): return torch.device("npu")',
      "Single-process default device lands on CPU on an NPU host."),
    C('elif int(os.environ.get("LOCAL_RANK", -1)) != -1 and not cpu and torch.cuda.is_available():', "dist_backend", B, True,
      'elif is_npu_available() and int(os.environ.get("LOCAL_RANK", -1)) != -1 and not cpu: backend = backend or "hccl"; '
      "distributed_type = DistributedType.MULTI_NPU",
      "Without it a torchrun launch on NPUs gets no backend at all (runs as N independent processes); HCCL is the "
      "collective backend on Ascend (" + K + " §2.4, ascend-distributed.md). The nccl line stays for CUDA users."),
    C('if device not in ("cpu", "gpu", "xpu"):', "device_type", R, True,
      'if device not in ("cpu", "gpu", "xpu", "npu"):', "set_device() raises for MULTI_NPU otherwise."),
    C("torch.cuda.set_device(self.device)", "torch_cuda_api", B, True,
      'elif device == "npu": torch.npu.set_device(self.device)',
      "Without the per-rank set_device every rank's default stream/allocations go to npu:0; set_device is in "
      "torch_npu.npu (" + K + " §2.1)."),
    C("if self.distributed_type in [DistributedType.MULTI_GPU, DistributedType.MULTI_XPU]:", "distributed_framework", R, True,
      "if self.distributed_type in [DistributedType.MULTI_GPU, DistributedType.MULTI_NPU, DistributedType.MULTI_XPU]:",
      "ACCELERATE_USE_FSDP is silently ignored on multi-NPU runs, so the model is trained unsharded."),
])

E("accelerate_imports", "src/accelerate/utils/imports.py", "device_branch_or_abstraction",
  "accelerate utils/imports.py availability helpers", [
    C("def is_xpu_available(check_device=False):", "import_torch_npu", A, True,
      "def is_npu_available(check_device=False):  # find_spec('torch_npu'); import torch_npu; torch.npu.is_available()",
      "New helper importing torch_npu; every accelerate NPU branch keys on it (accelerate >= 0.22.0, " + K + " §6)."),
])

E("accelerate_memory", "src/accelerate/utils/memory.py", "device_branch_or_abstraction",
  "accelerate utils/memory.py clear_device_cache / find_executable_batch_size", [
    C("from .imports import is_mps_available, is_xpu_available", "import_torch_npu", A, False,
      "from .imports import is_mps_available, is_npu_available, is_xpu_available",
      "Helper import for the optional branches below."),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", B, False,
      "elif is_npu_available(): torch.npu.empty_cache()",
      "Cache release only; the CUDA call is never reached on NPU."),
    C('"CUDA out of memory.",  # CUDA OOM', "torch_cuda_api", B, False,
      '"NPU out of memory.",  # NPU OOM',
      "find_executable_batch_size re-raises an NPU OOM instead of halving the batch unless the NPU allocator's "
      "message is listed; exact torch_npu OOM text unconfirmed in knowledge."),
])

E("accelerate_modeling", "src/accelerate/utils/modeling.py", "device_branch_or_abstraction",
  "accelerate utils/modeling.py set_module_tensor_to_device / get_max_memory / load_state_dict", [
    C("from .imports import is_mps_available, is_safetensors_available, is_xpu_available", "import_torch_npu", A, True,
      "from .imports import is_mps_available, is_npu_available, is_safetensors_available, is_xpu_available",
      "Helper import for the NPU branches."),
    C("=with torch.no_grad():", "tensor_to_device", B, True,
      'if is_npu_available() and isinstance(device, int): device = f"npu:{device}"',
      "device_map values are ints; value.to(0) means cuda:0, so loading with a device_map fails on an NPU host."),
    C("if not (torch.cuda.is_available() or is_xpu_available()):", "device_type", R, True,
      "if not (torch.cuda.is_available() or is_npu_available() or is_xpu_available()):",
      "device_map='auto' on an NPU host otherwise sees no accelerator memory and puts the whole model on CPU; "
      "transfer_to_npu patches get_max_memory for this reason (" + K + " §2.7)."),
    C("=if is_xpu_available():", "torch_cuda_api", B, True,
      "elif is_npu_available(): max_memory = {i: torch.npu.mem_get_info(i)[0] for i in range(torch.npu.device_count())}",
      "NPU memory per device; torch.cuda.mem_get_info -> torch_npu.npu.mem_get_info ✔ (" + TSV + ")."),
    C("num_devices = torch.cuda.device_count()", "torch_cuda_api", R, False,
      "num_devices = torch.npu.device_count() if is_npu_available() else torch.cuda.device_count()",
      "Only drives a warning (every NPU index reported as unavailable)."),
    C("=target_device = device", "tensor_to_device", B, False,
      'if is_npu_available() and isinstance(device, int): target_device = f"npu:{device}"',
      "safetensors safe_open(device=int) is read as a CUDA ordinal (unconfirmed in knowledge)."),
    C("if not (torch.cuda.is_available() or is_xpu_available()) or is_mps_available():", "device_type", R, False,
      "if not (torch.cuda.is_available() or is_npu_available() or is_xpu_available()) or is_mps_available():",
      "device_map='balanced'/'auto' on NPU skips balancing and fills devices sequentially: works, less even."),
    C('expected_device_type = "xpu" if is_xpu_available() else "cuda"', "device_type", R, False,
      'expected_device_type = "npu" if is_npu_available() else "xpu" if is_xpu_available() else "cuda"',
      "Counts the NPU devices for balancing; reached only after the line above admits npu."),
])

E("accelerate_big_modeling", "src/accelerate/big_modeling.py", "device_branch_or_abstraction",
  "accelerate big_modeling.py dispatch_model", [
    C("=is_mps_available,", "import_torch_npu", A, True, "is_npu_available,",
      "Helper import for the NPU branches."),
    C('main_device = [d for d in device_map.values() if d not in ["cpu", "disk"]][0]', "tensor_to_device", B, True,
      'if is_npu_available() and isinstance(main_device, int): main_device = f"npu:{main_device}"',
      "The execution device of every hook becomes an int, i.e. a CUDA ordinal, so multi-device dispatch fails on NPU."),
    C("=if is_xpu_available():", "device_type", B, False,
      "elif is_npu_available(): model.npu = add_warning(model.npu, model)",
      "Warning wrapper for model.npu(); cosmetic."),
    C("if is_xpu_available() and isinstance(device, int):", "tensor_to_device", B, True,
      'if is_npu_available() and isinstance(device, int): device = f"npu:{device}"',
      "Single-device dispatch does model.to(0), a CUDA ordinal, on an NPU host."),
])

# ---------------------------------------------------------------- peft
E("peft_tuners_utils", "src/peft/tuners/tuners_utils.py", "device_branch_or_abstraction",
  "peft tuners/tuners_utils.py (device-agnostic; no change needed)", [])

E("peft_other", "src/peft/utils/other.py", "device_branch_or_abstraction",
  "peft utils/other.py infer_device and autocast helpers", [
    C("from accelerate.utils import is_xpu_available", "import_torch_npu", A, True,
      "from accelerate.utils import is_npu_available, is_xpu_available",
      "Helper import for infer_device's NPU branch."),
    C("=if torch.cuda.is_available():", "device_type", B, True,
      'elif is_npu_available(): return "npu"',
      "infer_device() returns 'cpu' on an NPU host; transfer_to_npu patches peft.utils.other.infer_device (" + K + " §2.7)."),
    C('if device.type == "cuda":', "device_type", R, True,
      'if device.type in ("cuda", "npu"):',
      "Reduced-precision adapter context silently becomes a null context on NPU."),
    C("return torch.cuda.amp.autocast(dtype=dtype, enabled=enabled)", "amp", R, True,
      "return torch.autocast(device_type=device.type, dtype=dtype, enabled=enabled)",
      "torch.cuda.amp.autocast does not cast NPU tensors; goes with the condition above. torch.autocast ✔ (" + TSV + ")."),
    C('if device.type == "cuda" and torch.cuda.is_available():', "device_capability_check", B, False,
      'if device.type == "npu": return torch.npu.is_bf16_supported()',
      "Without it bf16 is reported unsupported on NPU and adapters stay fp32: slower, not wrong."),
])

# ---------------------------------------------------------------- trl
E("trl_trainer_utils", "trl/trainer/utils.py", "device_branch_or_abstraction",
  "trl trainer/utils.py get_kbit_device_map / empty_cache", [
    C("from ..import_utils import is_unsloth_available, is_xpu_available", "import_torch_npu", A, True,
      "from ..import_utils import is_npu_available, is_unsloth_available, is_xpu_available",
      "Helper import for the NPU device-map branch."),
    C("elif torch.cuda.is_available():", "device_type", B, True,
      'elif is_npu_available(): return {"": f"npu:{PartialState().local_process_index}"}',
      "k-bit models get device_map=None on an NPU host; transfer_to_npu patches trl get_kbit_device_map (" + K + " §2.7)."),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", B, False,
      "elif is_npu_available(): torch.npu.empty_cache()", "Cache release only."),
])

E("trl_import_utils", "trl/import_utils.py", "device_branch_or_abstraction",
  "trl import_utils.py availability helpers", [
    C("def is_xpu_available() -> bool:", "import_torch_npu", A, True,
      "def is_npu_available() -> bool:  # accelerate.utils.is_npu_available() (imports torch_npu)",
      "trl's NPU branches key on this helper (trl >= 0.5.0 NPU support, " + K + " §6)."),
])

E("trl_grpo_trainer", "trl/trainer/grpo_trainer.py", "device_branch_or_abstraction",
  "trl GRPO trainer vLLM device placement", [
    C("from accelerate.utils import broadcast_object_list, gather, gather_object, set_seed", "device_type", A, True,
      "from accelerate import PartialState  # device_type = PartialState().default_device.type; device_module = getattr(torch, device_type)",
      "Device-agnostic handle used by the vLLM placement lines below."),
    C("if torch.cuda.device_count() == 1:", "torch_cuda_api", R, True,
      "if device_module.device_count() == 1:",
      "torch.cuda.device_count() is 0 on an NPU host, so placement takes the wrong branch."),
    C('vllm_device = "cuda:0"', "device_type", R, True,
      'vllm_device = f"{device_type}:0"', "vLLM (vllm-ascend) must be placed on an NPU (" + K + " §6 vLLM)."),
    C('vllm_device = f"cuda:{self.accelerator.num_processes}"', "device_type", R, True,
      'vllm_device = f"{device_type}:{self.accelerator.num_processes}"', "Same."),
    C('if vllm_device.split(":")[0] == "cuda" and int(vllm_device.split(":")[1]) >= torch.cuda.device_count():',
      "torch_cuda_api", R, True,
      'if vllm_device.split(":")[0] == device_type and int(vllm_device.split(":")[1]) >= device_module.device_count():',
      "Unchanged, the auto-chosen 'cuda:N' is compared with a CUDA device count of 0 and raises ValueError on NPU."),
    C("f\"is sufficient. In your case: `--num_processes {torch.cuda.device_count() - 1}`.\"", "torch_cuda_api", R, False,
      "f\"is sufficient. In your case: `--num_processes {device_module.device_count() - 1}`.\"",
      "Error message text only."),
    C('if vllm_device in {f"cuda:{idx}" for idx in range(self.accelerator.num_processes)}:', "device_type", R, False,
      'if vllm_device in {f"{device_type}:{idx}" for idx in range(self.accelerator.num_processes)}:',
      "Only drives a warning."),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False,
      "device_module.empty_cache()", "Cache release only."),
])

E("trl_dpo_trainer", "trl/trainer/dpo_trainer.py", "device_branch_or_abstraction",
  "trl DPO trainer autocast around bf16-cast PEFT models", [
    C("# Unnecessary cache clearing to avoid OOM", "torch_cuda_api", R, False,
      "empty_cache()  # trl.trainer.utils, device-agnostic",
      "Labelled on the comment above torch.cuda.empty_cache(); no-op on NPU, cache release only."),
    C('compte_ref_context_manager = amp.autocast("cuda")', "amp", R, True,
      "compte_ref_context_manager = amp.autocast(self.accelerator.device.type) if self._peft_has_been_casted_to_bf16 else nullcontext()",
      "autocast('cuda') is inactive for NPU tensors, so the bf16-cast 4-bit PEFT model runs with mixed dtypes; "
      "path needs bitsandbytes' NPU backend (" + K + " §6)."),
    C('compute_loss_context_manager = amp.autocast("cuda")', "amp", R, True,
      "compute_loss_context_manager = amp.autocast(self.accelerator.device.type) if self._peft_has_been_casted_to_bf16 else nullcontext()",
      "Same, training loss."),
    C('generate_context_manager = amp.autocast("cuda")', "amp", R, True,
      "generate_context_manager = amp.autocast(self.accelerator.device.type) if self._peft_has_been_casted_to_bf16 else nullcontext()",
      "Same, generation during eval."),
    C('prediction_context_manager = amp.autocast("cuda")', "amp", R, True,
      "prediction_context_manager = amp.autocast(self.accelerator.device.type) if self._peft_has_been_casted_to_bf16 else nullcontext()",
      "Same, prediction step."),
])

# ---------------------------------------------------------------- sentence-transformers
E("st_util", "sentence_transformers/util.py", "device_branch_or_abstraction",
  "sentence-transformers util.py get_device_name", [
    C("from tqdm.autonotebook import tqdm", "import_torch_npu", A, True,
      "from transformers import is_torch_npu_available", "Helper import for get_device_name's NPU branch."),
    C('elif importlib.util.find_spec("habana_frameworks") is not None:', "device_type", B, True,
      'elif is_torch_npu_available(): return "npu"',
      "SentenceTransformer() with no device picks 'cpu' on an NPU host."),
])

E("st_sentence_transformer", "sentence_transformers/SentenceTransformer.py", "device_branch_or_abstraction",
  "sentence-transformers SentenceTransformer.py multi-process pool and legacy fit AMP", [
    C("from tqdm.autonotebook import trange", "import_torch_npu", A, True,
      "from transformers import is_torch_npu_available", "Helper import for the pool branch."),
    C('target_devices = [f"cuda:{i}" for i in range(torch.cuda.device_count())]', "device_type", B, True,
      'elif is_torch_npu_available(): target_devices = [f"npu:{i}" for i in range(torch.npu.device_count())]',
      "The multi-process pool silently starts 4 CPU workers on an NPU host."),
    C("from torch.cuda.amp import autocast", "amp", R, True,
      "from torch.amp import autocast",
      "CUDA autocast is inactive for NPU tensors; use the device-typed torch autocast (" + TSV + ")."),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", R, True,
      "scaler = torch.amp.GradScaler(self.device.type)",
      "torch.cuda.amp.GradScaler is disabled without CUDA: fp16 without loss scaling; NPU form "
      "torch_npu.npu.amp.GradScaler (" + TSV + ")."),
    C("=with autocast():", "amp", R, True,
      "with autocast(self.device.type):", "Pairs with the import change above."),
])

# ---------------------------------------------------------------- lm-evaluation-harness
E("lm_eval_huggingface", "lm_eval/models/huggingface.py", "device_branch_or_abstraction",
  "lm-evaluation-harness models/huggingface.py device selection / parallelize", [
    C("from tqdm import tqdm", "import_torch_npu", A, True,
      "from transformers import is_torch_npu_available",
      "Helper import for the NPU device branches."),
    C('+ ["mps", "mps:0"]', "device_type", B, True,
      '+ ["mps", "mps:0"] + ["npu"] + [f"npu:{i}" for i in range(torch.npu.device_count())]',
      "--device npu / npu:N is not in the accepted list, so the harness falls back to cuda/cpu selection (CPU on NPU)."),
    C('=torch.device("cuda")', "device_type", B, True,
      'else torch.device("npu") if is_torch_npu_available()',
      "Unspecified device silently lands on CPU on an NPU host."),
    C("parallelize=parallelize, gpus=torch.cuda.device_count(), max_memory_per_gpu=max_memory_per_gpu,", "torch_cuda_api", R, True,
      "parallelize=parallelize, gpus=torch.npu.device_count() if is_torch_npu_available() else torch.cuda.device_count(), max_memory_per_gpu=max_memory_per_gpu,",
      "With parallelize=True and max_memory_per_gpu, the per-device memory map is empty on NPU (0 CUDA devices), "
      "so accelerate places the model on CPU/disk."),
    C("=gpus = torch.cuda.device_count()", "torch_cuda_api", R, False,
      "gpus = torch.npu.device_count() if is_torch_npu_available() else torch.cuda.device_count()",
      "Only drives a warning."),
    C('self._device = torch.device(f"cuda:{accelerator.local_process_index}")', "device_type", R, True,
      'self._device = torch.device(f"{accelerator.device}")',
      "Data-parallel runs under accelerate launch put every rank on cuda:N, which fails on NPU."),
    C('if (torch.cuda.device_count() >= 1 or str(self.device) == "mps") and not (parallelize or hasattr(self, "accelerator")):',
      "torch_cuda_api", R, True,
      'if (torch.cuda.device_count() >= 1 or self.device.type in ("mps", "npu")) and not (parallelize or hasattr(self, "accelerator")):',
      "With --device npu the model is never moved (0 CUDA devices) and evaluation silently runs on CPU while inputs go to the NPU."),
])

# ---------------------------------------------------------------- timm
E("timm_cuda", "timm/utils/cuda.py", "device_branch_or_abstraction",
  "timm utils/cuda.py NativeScaler / amp context / device summary", [
    C("=def __init__(self):", "amp", R, False,
      "def __init__(self, device='cuda'):",
      "Plumbing so train.py can pass args.device to the scaler below."),
    C("self._scaler = torch.cuda.amp.GradScaler()", "amp", R, True,
      "self._scaler = torch.amp.GradScaler(device)",
      "torch.cuda.amp.GradScaler is disabled without CUDA: --amp on NPU trains fp16 without loss scaling (" + TSV + ")."),
    C("if enabled and device_type == 'cuda':", "device_type", R, True,
      "if enabled and device_type in ('cuda', 'npu'):",
      "Other devices get a null context, so --amp silently trains in fp32 on NPU."),
    C("return torch.cuda.amp.autocast(dtype=amp_dtype)", "amp", R, True,
      "return torch.autocast(device_type=device_type, dtype=amp_dtype)",
      "CUDA autocast does not cast NPU tensors; goes with the condition above."),
    C("if not torch.cuda.is_available():", "device_capability_check", B, False,
      "if hasattr(torch, 'npu') and torch.npu.is_available(): props = torch.npu.get_device_properties(device_index); "
      "return f'{props.name} ({props.total_memory / 2**30:.1f} GiB)'",
      "Log header only; NPU device properties have no major/minor/multi_processor_count (" + K + " §2.8, " + TSV + ")."),
])

E("timm_distributed", "timm/utils/distributed.py", "device_branch_or_abstraction",
  "timm utils/distributed.py init_distributed_device_so", [
    C('"cuda": "nccl",', "dist_backend", B, True,
      '"npu": "hccl",',
      "Without an npu entry the backend defaults to gloo, which cannot reduce NPU tensors; HCCL is the Ascend "
      "collective backend (ascend-distributed.md). Note the existing 'hpu': 'hccl' is Habana's HCCL, unrelated."),
    C("if device_type == 'cuda':", "device_type", B, False,
      "elif device_type == 'npu': assert torch.npu.is_available(), f'NPU is not available but {device} was specified.'",
      "Early, clearer error only."),
    C("if device.startswith('cuda:'):", "torch_cuda_api", B, True,
      "elif device.startswith('npu:'): torch.npu.set_device(device)",
      "Without set_device each rank's HCCL communicator and default allocations use npu:0."),
])

E("timm_loader", "timm/data/loader.py", "device_branch_or_abstraction",
  "timm data/loader.py PrefetchLoader CUDA streams", [
    C("self.is_cuda = torch.cuda.is_available() and device.type == 'cuda'", "device_type", B, False,
      "self.is_npu = device.type == 'npu' and torch.npu.is_available()",
      "Without it the prefetcher runs without a side stream on NPU: correct but no copy/compute overlap."),
    C("stream = torch.cuda.Stream()", "torch_cuda_api", B, False,
      "elif self.is_npu: stream = torch.npu.Stream(); stream_context = partial(torch.npu.stream, stream=stream)",
      "torch.cuda.Stream/stream -> torch_npu.npu.Stream/stream ✔ (" + TSV + "); performance only."),
    C("torch.cuda.current_stream().wait_stream(stream)", "torch_cuda_api", R, False,
      "(torch.npu if self.is_npu else torch.cuda).current_stream().wait_stream(stream)",
      "Only reached once an NPU stream exists."),
    C("=pin_memory=pin_memory,", "pin_memory", R, False,
      "pin_memory=pin_memory, pin_memory_device='npu' if device.type == 'npu' else '',",
      "Pinned host buffers for NPU H2D copies; DataLoader's default pinning targets CUDA (unconfirmed for torch_npu). "
      "Performance only (" + K + " §3.5 pin_memory advice)."),
])

# ---------------------------------------------------------------- CI
E("ci_workflow", ".github/workflows/self-hosted-gpu-tests.yml", "device_branch_or_abstraction",
  "transformers-style self-hosted GPU test workflow", [
    C('CUDA_VISIBLE_DEVICES: "0"', "env_var", R, False,
      'ASCEND_RT_VISIBLE_DEVICES: "0"',
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime, so tests see every NPU; isolation only "
      "(ascend-distributed.md §1)."),
    C("runs-on: [single-gpu, nvidia-gpu, t4, ci]", "device_type", R, True,
      "runs-on: [single-npu, ascend-npu, ci]",
      "CI: the job must be scheduled on an NPU runner (required for the NPU job, not for the library)."),
    C("=image: huggingface/transformers-pytorch-gpu", "device_type", R, True,
      "image: <CANN base image with python3>  # e.g. a cann 8.x image",
      "CUDA image has no CANN toolkit; exact image name unconfirmed."),
    C('options: --gpus all --shm-size "16gb"', "device_type", R, True,
      'options: --device /dev/davinci0 --device /dev/davinci_manager --device /dev/devmm_svm --device /dev/hisi_hdc '
      '-v /usr/local/dcmi:/usr/local/dcmi -v /usr/local/bin/npu-smi:/usr/local/bin/npu-smi '
      '-v /usr/local/Ascend/driver:/usr/local/Ascend/driver --shm-size "16gb" --ipc host',
      "--gpus needs the NVIDIA container runtime; NPU containers mount davinci devices and the driver "
      "(ascend-host-formats.md, standard docker run)."),
    C("run: python3 -m pip install torch torchvision --index-url https://download.pytorch.org/whl/cu121", "import_torch_npu", R, True,
      "run: python3 -m pip install torch==2.4.0 torchvision --index-url https://download.pytorch.org/whl/cpu && python3 -m pip install torch-npu==2.4.0.post2",
      "CUDA wheels instead of CPU torch + matching torch_npu (x86 uses the CPU index; wheel = torch version + .postN; "
      "2.4.0.post2 pairs with CANN 8.0.0, " + K + " §1)."),
    C("run: python3 -m pip install flash-attn --no-build-isolation && python3 -m pip install bitsandbytes xformers", "attention_kernel", X, True,
      None,
      "flash-attn cannot be installed on NPU and xformers has no NPU backend (" + K + " §6); the step fails."),
    C("=nvidia-smi", "device_type", R, True, "npu-smi info",
      "nvidia-smi does not exist on an NPU runner; npu-smi info (ascend-distributed.md)."),
    C("runs-on: [multi-gpu, nvidia-gpu, t4, ci]", "device_type", R, True,
      "runs-on: [multi-npu, ascend-npu, ci]", "Same as the single-device job."),
    C("=image: huggingface/transformers-pytorch-gpu:latest", "device_type", R, True,
      "image: <CANN base image with python3>", "Same."),
    C('options: --gpus all --shm-size "32gb"', "device_type", R, True,
      'options: --device /dev/davinci0 --device /dev/davinci1 --device /dev/davinci_manager --device /dev/devmm_svm '
      '--device /dev/hisi_hdc -v /usr/local/Ascend/driver:/usr/local/Ascend/driver --shm-size "32gb" --ipc host',
      "Same, two devices."),
    C('CUDA_VISIBLE_DEVICES: "0,1"', "env_var", R, False,
      'ASCEND_RT_VISIBLE_DEVICES: "0,1"', "Isolation only."),
    C("NCCL_DEBUG: INFO", "env_var", R, False,
      "ASCEND_GLOBAL_LOG_LEVEL: 1",
      "Debug logging only; NCCL variables mean nothing to HCCL (INFO level via ASCEND_GLOBAL_LOG_LEVEL=1, "
      "ascend-distributed.md)."),
    C("nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv", "device_type", R, True,
      "npu-smi info", "Command missing on NPU runners."),
    C('PYTORCH_CUDA_ALLOC_CONF: "expandable_segments:True"', "env_var", R, False,
      'PYTORCH_NPU_ALLOC_CONF: "expandable_segments:True"',
      "The CUDA allocator setting is ignored by torch_npu; its NPU counterpart is PYTORCH_NPU_ALLOC_CONF "
      "(expandable_segments needs HDK >= 23.0.0, " + K + " §1.6). Memory behaviour only."),
])
