"""Labels for probe17 (hand-written synthetic upstream files; see ../README.md).

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
DIST = "/work/shared/knowledge/ascend-distributed.md"
AUTOLOAD = ("import torch_npu after import torch; since torch_npu 2.5.1 autoload makes it optional but it is still "
            "recommended (" + K + " §1.1)")
AUTOLOAD_NEEDED = "import torch_npu after import torch; the port calls torch_npu.* directly, so the name must be imported (" + K + " §1.1, §5)"
FA = "flash-attn cannot be installed on NPU; replace with torch_npu.npu_fusion_attention (" + K + " §6, §5)"
XF = "xformers has no NPU backend; replace memory_efficient_attention with SDPA / npu_fusion_attention (" + K + " §6)"
NCCL = "NCCL does not exist on Ascend; HCCL is the collective backend (" + K + " §2.4, §6; " + DIST + " §6.1)"
EMPTY = "torch.cuda.empty_cache() is a silent no-op without CUDA; NPU cache is released by torch.npu.empty_cache() (" + K + " §2.1)"
AVAIL = "torch.cuda.is_available() is False on an NPU host, so this check fails / picks the CPU path; torch.npu.is_available() (" + TSV + ")"


E("opensora_train", "scripts/train.py", "explicit_replacement",
  "Open-Sora scripts/train.py (ColossalAI booster, ZeRO-2, STDiT training loop)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", AUTOLOAD),
    C("assert torch.cuda.is_available()", "torch_cuda_api", R, True,
      'assert torch.npu.is_available(), "Training currently requires at least one NPU."', AVAIL),
    C('dist.init_process_group(backend="nccl"', "dist_backend", R, True,
      'dist.init_process_group(backend="hccl", timeout=timedelta(hours=24))', NCCL),
    C("torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())", "torch_cuda_api", R, True,
      "torch.npu.set_device(dist.get_rank() % torch.npu.device_count())",
      "torch.cuda.set_device needs a CUDA build; device_count() is 0 on NPU (modulo by zero) (" + TSV + ")"),
    C("optimizer = HybridAdam(", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(",
      "ColossalAI HybridAdam loads a fused CUDA Adam kernel for device params; whether its NPU accelerator provides one is "
      "unconfirmed; NpuFusedAdamW is the torch_npu fused equivalent (" + K + " §5)"),
    C("torch.cuda.max_memory_allocated() / 1024**3", "torch_cuda_api", R, False,
      'tb_writer.add_scalar("max_mem_gb", torch.npu.max_memory_allocated() / 1024**3, acc_step)',
      "logging only: torch.cuda.max_memory_allocated() returns 0 when CUDA was never initialised (" + TSV + ")"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY),
])

E("opensora_stdit", "opensora/models/stdit/stdit_blocks.py", "explicit_replacement",
  "Open-Sora opensora/models/layers/blocks.py (STDiT attention, xformers cross-attention, seq-parallel)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", AUTOLOAD_NEEDED),
    C("=import xformers.ops", "attention_kernel", X, True, None,
      XF + "; the module-level import fails at import time"),
    C("from apex.normalization import FusedLayerNorm", "custom_cuda_extension", R, True,
      "from torch.nn import LayerNorm as FusedLayerNorm",
      "apex FusedLayerNorm needs the fused_layer_norm_cuda kernel, absent from Ascend apex (" + K +
      " §6); the shipped configs set enable_layernorm_kernel=True so the branch is taken"),
    C("variance = hidden_states.pow(2).mean(-1, keepdim=True)", "npu_fused_op", R, False,
      "return torch_npu.npu_rms_norm(hidden_states, self.weight, epsilon=self.variance_epsilon)[0]",
      "performance: fused RMSNorm (" + K + " §5)"),
    C("from flash_attn import flash_attn_func", "attention_kernel", X, True, None,
      FA + "; configs enable flash attention so this import runs"),
    C("x = flash_attn_func(", "attention_kernel", R, True,
      'x = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, "BSND", keep_prob=1.0 - (self.attn_drop.p if self.training else 0.0), scale=self.scale)[0]',
      FA + "; BSND layout matches the permuted (B, N, heads, dim) tensors"),
    C("BlockDiagonalMask.from_seqlens([N] * B, mask)", "attention_kernel", R, True,
      "actual_seq_qlen, actual_seq_kvlen = list(itertools.accumulate([N] * B)), list(itertools.accumulate(mask))",
      XF + "; the block-diagonal varlen mask becomes cumulative lengths for TND layout (" + K + " §5)"),
    C("x = xformers.ops.memory_efficient_attention(q, k, v, p=self.attn_drop.p, attn_bias=attn_bias)", "attention_kernel", R, True,
      'x = torch_npu.npu_fusion_attention(q.squeeze(0), k.squeeze(0), v.squeeze(0), self.num_heads, "TND", scale=self.head_dim**-0.5, keep_prob=1.0 - self.attn_drop.p, actual_seq_qlen=actual_seq_qlen, actual_seq_kvlen=actual_seq_kvlen)[0]',
      XF + "; varlen TND layout with cumulative lengths"),
    C("BlockDiagonalMask.from_seqlens(q_seqlen=[N] * B, kv_seqlen=mask)", "attention_kernel", R, True,
      "actual_seq_qlen, actual_seq_kvlen = list(itertools.accumulate([N] * B)), list(itertools.accumulate(mask))", XF),
    C("x = xformers.ops.memory_efficient_attention(q, k, v, p=self.attn_drop.p if self.training", "attention_kernel", R, True,
      'x = torch_npu.npu_fusion_attention(q.squeeze(0), k.squeeze(0), v.squeeze(0), self.num_heads // sp_size, "TND", scale=self.head_dim**-0.5, actual_seq_qlen=actual_seq_qlen, actual_seq_kvlen=actual_seq_kvlen)[0]', XF),
])

E("opensora_seqpar", "opensora/acceleration/communications.py", "explicit_replacement",
  "Open-Sora opensora/acceleration/communications.py (sequence-parallel all-to-all) with a side comm stream", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", AUTOLOAD),
    C("_COMM_STREAM: Optional[torch.cuda.Stream] = None", "torch_cuda_api", R, False,
      "_COMM_STREAM: Optional[torch.npu.Stream] = None",
      "type annotation only; torch.cuda.Stream resolves without CUDA, porter renames it for consistency"),
    C("def _get_comm_stream() -> torch.cuda.Stream:", "torch_cuda_api", R, False,
      "def _get_comm_stream() -> torch.npu.Stream:", "return annotation only"),
    C("_COMM_STREAM = torch.cuda.Stream(priority=-1)", "torch_cuda_api", R, True,
      "_COMM_STREAM = torch.npu.Stream(priority=-1)",
      "creating a CUDA stream fails without CUDA; torch.npu.Stream (" + TSV + "); priority argument on NPU unconfirmed"),
    C("stream.wait_stream(torch.cuda.current_stream())", "torch_cuda_api", R, True,
      "stream.wait_stream(torch.npu.current_stream())", "torch.cuda.current_stream needs CUDA (" + K + " §2.1)"),
    C("with torch.cuda.stream(stream):", "torch_cuda_api", R, True,
      "with torch.npu.stream(stream):", "stream context must be the NPU one (" + TSV + ")"),
    C("out.record_stream(torch.cuda.current_stream())", "torch_cuda_api", R, True,
      "out.record_stream(torch.npu.current_stream())", "torch.cuda.current_stream needs CUDA"),
    C('assert input_.device.type == "cuda"', "device_type", R, True,
      'assert input_.device.type == "npu"', "NPU tensors have device.type 'npu'; the assert fails in every backward"),
])

E("opensora_inference", "scripts/inference.py", "explicit_replacement",
  "Open-Sora scripts/inference.py (multi-resolution sampling, ColossalAI launch for sequence parallel)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", AUTOLOAD),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", R, True,
      'device = "npu" if torch.npu.is_available() else "cpu"', AVAIL + "; the whole sampler would run on the CPU"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "torch.cuda.synchronize() raises without a CUDA build (" + TSV + ")"),
    C("torch.cuda.max_memory_allocated() / 2**30)", "torch_cuda_api", R, False,
      "torch.npu.max_memory_allocated() / 2**30)", "logging only; returns 0 without CUDA"),
])

E("opensora_config", "configs/opensora-v1-2/train/stage1.py", "explicit_replacement",
  "Open-Sora configs/opensora-v1-2/train/stage1.py (mmengine-style Python config)", [
    C("enable_layernorm_kernel=True,", "custom_cuda_extension", R, False, "enable_layernorm_kernel=False,",
      "selects apex FusedLayerNorm (CUDA kernel, absent from Ascend apex, " + K + " §6); not required if the model's "
      "get_layernorm is patched instead (see opensora_stdit), otherwise it is the simplest fix"),
])

E("cogvideox_cli_demo", "inference/cli_demo.py", "explicit_replacement",
  "CogVideoX inference/cli_demo.py (diffusers CogVideoX pipelines, sequential CPU offload, VAE tiling)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", AUTOLOAD),
    C("=pipe.enable_sequential_cpu_offload()", "device_type", R, False,
      'pipe.enable_sequential_cpu_offload(device="npu")',
      "older diffusers default the offload device to 'cuda'; newer ones auto-detect the accelerator - which diffusers "
      "version detects NPU is unconfirmed"),
    C('generator=torch.Generator(device="cuda").manual_seed(seed)', "device_type", R, True,
      'generator=torch.Generator(device="npu").manual_seed(seed),',
      "a CUDA generator cannot be created without CUDA; torch.Generator is supported on NPU (" + TSV + ")"),
])

E("cogvideox_sat_train", "sat/train_video.py", "explicit_replacement",
  "CogVideoX sat/train_video.py (SwissArmyTransformer training entry, model-parallel batch broadcast, video logging)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", AUTOLOAD),
    C('"enabled": torch.is_autocast_enabled(),', "amp", R, False, '"enabled": torch.npu.is_autocast_enabled(),',
      "torch.is_autocast_enabled() reports the CUDA autocast state; torch.npu.is_autocast_enabled exists (" + K + " §2.1)"),
    C('"dtype": torch.get_autocast_gpu_dtype(),', "amp", R, False, '"dtype": torch.npu.get_autocast_dtype(),',
      "GPU autocast dtype query; NPU form torch.npu.get_autocast_dtype (" + K + " §2.1)"),
    C("with torch.no_grad(), torch.cuda.amp.autocast(**gpu_autocast_kwargs):", "amp", R, True,
      "with torch.no_grad(), torch.npu.amp.autocast(**gpu_autocast_kwargs):",
      "CUDA autocast has no effect on NPU tensors; torch.npu.amp.autocast (" + TSV + ")"),
    C('batch["mp4"] = torch.zeros(mp4_shape, device="cuda")', "device_type", R, True,
      'batch["mp4"] = torch.zeros(mp4_shape, device="npu")', "allocating on 'cuda' fails on an NPU host"),
    C('batch["fps"] = torch.zeros(fps_shape, device="cuda", dtype=torch.long)', "device_type", R, True,
      'batch["fps"] = torch.zeros(fps_shape, device="npu", dtype=torch.long)', "allocating on 'cuda' fails"),
    C('batch["num_frames"] = torch.zeros(num_frames_shape, device="cuda", dtype=torch.long)', "device_type", R, True,
      'batch["num_frames"] = torch.zeros(num_frames_shape, device="npu", dtype=torch.long)', "allocating on 'cuda' fails"),
    C("batch_video[key] = batch_video[key].cuda()", "tensor_to_device", R, True,
      "batch_video[key] = batch_video[key].npu()", ".cuda() fails without CUDA; Tensor.npu()"),
    C("batch[key] = batch[key].to(torch.cuda.current_device(), non_blocking=True)", "torch_cuda_api", R, True,
      "batch[key] = batch[key].to(torch.npu.current_device(), non_blocking=True)",
      "torch.cuda.current_device() initialises CUDA and raises on an NPU host"),
])

E("cogvideox_sat_yaml", "sat/configs/sft.yaml", "explicit_replacement",
  "CogVideoX sat/configs/sft.yaml (SAT args + DeepSpeed ZeRO-2 section)", [
    C("distributed_backend: nccl", "dist_backend", R, True, "distributed_backend: hccl", NCCL),
    C("type: sat.ops.FusedEmaAdam", "custom_cuda_extension", R, True, "type: torch_npu.optim.NpuFusedAdamW",
      "nvcc-built optimizer kernel cannot be built on Ascend (" + K + " §6 custom CUDA extensions); the EMA part "
      "must be kept elsewhere, so the swap is not a drop-in - NpuFusedAdamW or plain torch.optim.AdamW"),
])

E("hunyuan_inference", "hyvideo/inference.py", "explicit_replacement",
  "HunyuanVideo hyvideo/inference.py (xDiT/xfuser Ulysses+Ring sequence parallel, Inference.from_pretrained)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", AUTOLOAD),
    C("block.hybrid_seq_parallel_attn = xFuserLongContextAttention()", "attention_kernel", R, False,
      "block.hybrid_seq_parallel_attn = xFuserLongContextAttention(attn_type=AttnType.TORCH)",
      "from memory, yunchang's default attention type calls flash-attn, which cannot be installed on NPU (" + K +
      " §6); which yunchang/xfuser attention types work on NPU is unconfirmed"),
    C('self.device = device if device is not None else "cuda" if torch.cuda.is_available() else "cpu"', "device_type", R, True,
      'self.device = device if device is not None else "npu" if torch.npu.is_available() else "cpu"', AVAIL),
    C('dist.init_process_group("nccl")', "dist_backend", R, True, 'dist.init_process_group("hccl")', NCCL),
    C("init_distributed_environment(rank=dist.get_rank(), world_size=dist.get_world_size())", "dist_backend", R, False,
      'init_distributed_environment(rank=dist.get_rank(), world_size=dist.get_world_size(), backend="hccl")',
      "xfuser's init_distributed_environment defaults to backend='nccl' (from memory); with the world group already "
      "initialised it may reuse it - unconfirmed"),
    C("device = torch.device(f\"cuda:{os.environ['LOCAL_RANK']}\")", "device_type", R, True,
      "device = torch.device(f\"npu:{os.environ['LOCAL_RANK']}\"); torch.npu.set_device(device)",
      "'cuda:N' device fails on NPU; HCCL also expects torch.npu.set_device(local_rank) per process (" + DIST + " §6.1)"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", R, True,
      'device = "npu" if torch.npu.is_available() else "cpu"', AVAIL),
    C("self.pipeline.enable_sequential_cpu_offload()", "device_type", R, False,
      'self.pipeline.enable_sequential_cpu_offload(device="npu")',
      "diffusers' offload default device is 'cuda' in older releases; auto-detection of NPU is unconfirmed"),
])

E("hunyuan_attention", "hyvideo/modules/attenion.py", "explicit_replacement",
  "HunyuanVideo hyvideo/modules/attenion.py (flash-attn varlen with cu_seqlens, xDiT joint attention)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", AUTOLOAD_NEEDED),
    C('cu_seqlens = torch.zeros([2 * batch_size + 1], dtype=torch.int32, device="cuda")', "device_type", R, True,
      'cu_seqlens = torch.zeros([2 * batch_size + 1], dtype=torch.int32, device="npu")',
      "hard-coded CUDA device fails on NPU (npu_fusion_attention wants host lists, so .tolist() later anyway)"),
    C("x = flash_attn_varlen_func(", "attention_kernel", R, True,
      'x = torch_npu.npu_fusion_attention(q, k, v, q.shape[-2], "TND", scale=1.0 / math.sqrt(q.shape[-1]), actual_seq_qlen=cu_seqlens_q[1:].tolist(), actual_seq_kvlen=cu_seqlens_kv[1:].tolist())[0]',
      FA + "; the default mode is 'flash', and the guarded import leaves flash_attn_varlen_func=None (TypeError); "
      "varlen maps to TND with cumulative lengths (" + K + " §5 transformers mapping)"),
    C('if flash_attn.__version__ >= "2.7.0":', "attention_kernel", X, True, None,
      "flash_attn is None on NPU, so the version check raises AttributeError; the version branch goes"),
    C("=attn2, *_ = _flash_attn_forward(", "attention_kernel", R, True,
      'attn2 = torch_npu.npu_fusion_attention(q[:, cu_seqlens_q[1]:], k[:, cu_seqlens_kv[1]:], v[:, cu_seqlens_kv[1]:], q.shape[-2], "BSND", scale=q.shape[-1] ** (-0.5))[0]',
      FA + " (private _flash_attn_forward of the text-token tail)"),
    C("attn2, *_ = flash_attn.flash_attn_interface._flash_attn_forward(", "attention_kernel", X, True, None,
      "the pre-2.7 flash-attn branch is dropped together with the version check"),
])

E("wan_generate", "generate.py", "explicit_replacement",
  "Wan2.1 generate.py (torchrun entry, xfuser USP init, T5/DiT FSDP flags, offload_model)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", AUTOLOAD),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)",
      "torch.cuda.set_device needs CUDA; one process per NPU with torch.npu.set_device (" + DIST + " §6.1)"),
    C('dist.init_process_group(backend="nccl", init_method="env://", rank=rank, world_size=world_size)', "dist_backend", R, True,
      'dist.init_process_group(backend="hccl", init_method="env://", rank=rank, world_size=world_size)', NCCL),
    C("init_distributed_environment(rank=dist.get_rank(), world_size=dist.get_world_size())", "dist_backend", R, False,
      'init_distributed_environment(rank=dist.get_rank(), world_size=dist.get_world_size(), backend="hccl")',
      "xfuser default backend is 'nccl' (from memory); behaviour when the world group already exists is unconfirmed"),
    C("torch.cuda.max_memory_reserved() / 1024**3", "torch_cuda_api", R, False,
      'logging.info(f"Peak NPU memory: {torch.npu.max_memory_reserved() / 1024**3:.2f} GiB")',
      "logging only; reports 0 without CUDA"),
])

E("wan_t2v", "wan/text2video.py", "explicit_replacement",
  "Wan2.1 wan/text2video.py (WanT2V: T5 on CPU/FSDP, USP patching, CUDA autocast alias, model offload)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", AUTOLOAD),
    C("import torch.cuda.amp as amp", "amp", R, True, "import torch_npu.npu.amp as amp",
      "the later `with amp.autocast(dtype=self.param_dtype)` is CUDA autocast, inactive for NPU tensors, so the DiT "
      "would run un-autocast in its parameter dtype; torch.cuda.amp.autocast -> torch_npu.npu.amp.autocast (" + TSV + ")"),
    C('self.device = torch.device(f"cuda:{device_id}")', "device_type", R, True,
      'self.device = torch.device(f"npu:{device_id}")', "'cuda:N' device fails on NPU"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "raises without CUDA; reached with offload_model=True, the single-device default"),
])

E("wan_fsdp", "wan/distributed/fsdp.py", "explicit_replacement",
  "Wan2.1 wan/distributed/fsdp.py (FSDP block-wise sharding for T5/DiT) plus small memory helpers", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", AUTOLOAD),
    C("model = FSDP(", "distributed_framework", R, False, "model = FSDP(  # or torch.distributed.fsdp.fully_shard per block",
      "Ascend's 2.7.1 API list marks FullyShardedDataParallel as unsupported but fully_shard as supported (" + TSV +
      "); FSDP1 is nonetheless widely run on NPU, so whether a rewrite is needed is unconfirmed"),
    C("device_id=device_id,", "device_type", R, True, 'device_id=torch.device("npu", device_id),',
      "FSDP turns a bare int device_id into torch.device(int), i.e. a CUDA device; transfer_to_npu rewrites int "
      "device_id kwargs to 'npu:i' for exactly this reason (" + K + " §2.2)"),
    C("return shard_model(model, device_id=torch.cuda.current_device(), **kwargs)", "torch_cuda_api", R, True,
      "return shard_model(model, device_id=torch.npu.current_device(), **kwargs)",
      "torch.cuda.current_device() raises without CUDA"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY),
    C("free, total = torch.cuda.mem_get_info()", "torch_cuda_api", R, True, "free, total = torch.npu.mem_get_info()",
      "torch.cuda.mem_get_info calls into the CUDA runtime and raises; NPU form torch_npu.npu.mem_get_info (" + TSV + ")"),
    C("allocated = torch.cuda.memory_allocated() / 2**30", "torch_cuda_api", R, False,
      "allocated = torch.npu.memory_allocated() / 2**30", "reports 0 without CUDA (logging only)"),
    C("reserved = torch.cuda.memory_reserved() / 2**30", "torch_cuda_api", R, False,
      "reserved = torch.npu.memory_reserved() / 2**30", "reports 0 without CUDA (logging only)"),
])

E("wan_xdit_cp", "wan/distributed/xdit_context_parallel.py", "explicit_replacement",
  "Wan2.1 wan/distributed/xdit_context_parallel.py (USP DiT forward, complex RoPE, xFuserLongContextAttention)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", AUTOLOAD),
    C("import torch.cuda.amp as amp", "amp", R, True, "import torch_npu.npu.amp as amp",
      "`@amp.autocast(enabled=False)` and `with amp.autocast(dtype=torch.float32)` must switch off / override the "
      "caller's NPU autocast; CUDA autocast contexts do not touch NPU autocast, so under the ported bf16 autocast the time "
      "embedding comes out bf16 and `assert e.dtype == torch.float32` fails (" + TSV + " torch.cuda.amp.autocast)"),
    C("x_i = torch.view_as_complex(x[i, :s].to(torch.float64).reshape(s, n, -1, 2))", "unsupported_op_workaround", R, False,
      "x_i = torch.view_as_complex(x[i, :s].to(torch.float32).reshape(s, n, -1, 2))",
      "view_as_complex accepts fp64 on NPU (" + TSV + "), but fp64 is a known weak spot (" + K + " §2.3, DoubleTensor->"
      "FloatTensor); complex128 multiply speed/support on NPU unconfirmed; porters commonly drop to fp32 or use npu_rotary_mul"),
    C("x = xFuserLongContextAttention()(", "attention_kernel", R, False,
      "x = xFuserLongContextAttention(attn_type=AttnType.TORCH)(",
      "from memory, yunchang's default attention type calls flash-attn (not installable on NPU, " + K +
      " §6); NPU-capable attention types in yunchang are unconfirmed"),
])

E("wan_attention", "wan/modules/attention.py", "device_branch_or_abstraction",
  "Wan2.1 wan/modules/attention.py (FA3/FA2 varlen with SDPA fallback when flash-attn is missing)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu",
      "needed only for the optional npu_fusion_attention branch; " + AUTOLOAD),
    C("if FLASH_ATTN_2_AVAILABLE or FLASH_ATTN_3_AVAILABLE:", "attention_kernel", B, False,
      'if q.device.type == "npu": return torch_npu.npu_fusion_attention(q, k, v, q.size(2), "BSND", scale=softmax_scale or q.size(-1) ** -0.5, keep_prob=1.0 - dropout_p)[0]',
      "performance/quality only: without flash-attn the code already falls back to SDPA, which runs NPU flash attention "
      "inside (" + K + " §6); a TND npu_fusion_attention branch would also honour q_lens/k_lens, which the SDPA fallback drops"),
])

E("latte_train", "train.py", "explicit_replacement",
  "Latte train.py (DDP video-latent diffusion training, fp16 GradScaler, xformers switch, torch.compile flag)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", AUTOLOAD),
    C('assert torch.cuda.is_available(), "Training currently requires at least one GPU."', "torch_cuda_api", R, True,
      'assert torch.npu.is_available(), "Training currently requires at least one NPU."', AVAIL),
    C('device = torch.device("cuda", local_rank)', "device_type", R, True, 'device = torch.device("npu", local_rank)',
      "CUDA device object fails on NPU"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", R, True, "torch.npu.set_device(device)",
      "needs CUDA; torch.npu.set_device (" + DIST + " §6.1)"),
    C("model.enable_xformers_memory_efficient_attention()", "attention_kernel", X, False, None,
      XF + "; only reached when the config enables it - diffusers' default SDPA processor is used otherwise"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.mixed_precision)", "amp", R, True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.mixed_precision)",
      "CUDA GradScaler does not scale NPU losses, so fp16 would train without loss scaling (" + TSV + ")"),
    C('with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=args.mixed_precision):', "amp", R, True,
      'with torch.autocast(device_type="npu", dtype=torch.float16, enabled=args.mixed_precision):',
      "CUDA autocast is inactive for NPU tensors (" + TSV + " torch.autocast)"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "raises without CUDA"),
])

E("animatediff_motion", "animatediff/models/motion_module.py", "explicit_replacement",
  "AnimateDiff animatediff/models/motion_module.py (temporal transformer, VersatileAttention with optional xformers)", [
    C("hidden_states = xformers.ops.memory_efficient_attention(query, key, value, attn_bias=attention_mask)", "attention_kernel", R, False,
      "hidden_states = F.scaled_dot_product_attention(query, key, value, attn_mask=attention_mask)",
      XF + "; guarded by is_xformers_available()/_use_memory_efficient_attention_xformers, so not reached on NPU as is"),
    C("hidden_states = self._attention(query, key, value, attention_mask)", "attention_kernel", R, False,
      "hidden_states = self.reshape_batch_dim_to_heads(F.scaled_dot_product_attention(query, key, value, attn_mask=attention_mask))",
      "performance: the legacy baddbmm+softmax path works on NPU, but SDPA dispatches to NPU flash attention (" + K +
      " §6); baddbmm also carries an fp16 overflow precision advisory (" + K + " §3.5)"),
])

E("animatediff_train", "train.py", "explicit_replacement",
  "AnimateDiff train.py (init_dist for torchrun/slurm, UNet3D motion-module training, fp16 GradScaler)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", AUTOLOAD),
    C('def init_dist(launcher="slurm", backend="nccl", port=29500, **kwargs):', "dist_backend", R, True,
      'def init_dist(launcher="slurm", backend="hccl", port=29500, **kwargs):', NCCL + "; callers use the default"),
    C("=num_gpus = torch.cuda.device_count()", "torch_cuda_api", R, True, "num_gpus = torch.npu.device_count()",
      "torch.cuda.device_count() is 0 on an NPU host; the next line divides by it"),
    C("=torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)", "needs CUDA"),
    C("num_gpus = torch.cuda.device_count()  # GPUs per node", "torch_cuda_api", R, True,
      "num_gpus = torch.npu.device_count()  # NPUs per node", "0 on an NPU host (ZeroDivisionError)"),
    C("torch.cuda.set_device(local_rank)  # one GPU per slurm task", "torch_cuda_api", R, True,
      "torch.npu.set_device(local_rank)  # one NPU per slurm task", "needs CUDA"),
    C("enable_xformers_memory_efficient_attention: bool = True,", "attention_kernel", R, True,
      "enable_xformers_memory_efficient_attention: bool = False,",
      XF + "; with the default True and no xformers the function raises ValueError"),
    C("=vae.to(local_rank)", "tensor_to_device", R, True, 'vae.to(f"npu:{local_rank}")',
      "a bare int in Module.to() means a CUDA ordinal (transfer_to_npu rewrites exactly this, " + K + " §2.2)"),
    C("=text_encoder.to(local_rank)", "tensor_to_device", R, True, 'text_encoder.to(f"npu:{local_rank}")',
      "int device -> CUDA ordinal (" + K + " §2.2)"),
    C("=unet.to(local_rank)", "tensor_to_device", R, True, 'unet.to(f"npu:{local_rank}")',
      "int device -> CUDA ordinal (" + K + " §2.2)"),
    C('pixel_values = batch["pixel_values"].to(local_rank)', "tensor_to_device", R, True,
      'pixel_values = batch["pixel_values"].to(f"npu:{local_rank}")', "int device in Tensor.to() -> CUDA ordinal (" + K + " §2.2)"),
    C("scaler = torch.cuda.amp.GradScaler() if mixed_precision_training else None", "amp", R, True,
      "scaler = torch.npu.amp.GradScaler() if mixed_precision_training else None",
      "CUDA GradScaler does not handle NPU tensors (" + TSV + ")"),
    C("with torch.cuda.amp.autocast(enabled=mixed_precision_training):", "amp", R, True,
      "with torch.npu.amp.autocast(enabled=mixed_precision_training):", "CUDA autocast inactive for NPU tensors (" + TSV + ")"),
])

E("kohya_device_utils", "library/device_utils.py", "device_branch_or_abstraction",
  "kohya-ss sd-scripts library/device_utils.py (CUDA/XPU/MPS device helpers)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", AUTOLOAD),
    C("HAS_CUDA = torch.cuda.is_available()", "torch_cuda_api", B, True,
      "HAS_NPU = hasattr(torch, 'npu') and torch.npu.is_available()",
      "no NPU detection: every helper below treats an NPU host as CPU-only; add an HAS_NPU probe beside HAS_CUDA"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", B, False,
      'if device.type == "npu": torch.npu.empty_cache()', "device.type 'npu' matches no branch, so nothing is freed; " + EMPTY),
    C("=torch.cuda.synchronize()", "torch_cuda_api", B, False,
      'elif device.type == "npu": torch.npu.synchronize()',
      "device.type 'npu' matches no branch: no sync, so timings measured after it are wrong but nothing fails"),
    C('device = torch.device("cuda")', "device_type", B, True, 'elif HAS_NPU: device = torch.device("npu")',
      "get_preferred_device() returns CPU on an NPU host; inference scripts use it to place the model"),
    C("total = torch.cuda.get_device_properties(device).total_memory", "torch_cuda_api", B, False,
      'if device.type == "npu": total = torch.npu.get_device_properties(device).total_memory',
      "logging helper returns None for NPU; get_device_properties keeps total_memory on NPU (" + TSV + ")"),
    C("major, _ = torch.cuda.get_device_capability(device)", "device_capability_check", B, False,
      'if device.type == "npu": return torch.npu.is_bf16_supported()',
      "an sm_80 capability test has no NPU meaning (get_device_capability is only a compatibility value on NPU, " + TSV +
      "); without the branch NPU is reported as no-bf16 and callers fall back to fp16"),
])

E("kohya_train_util", "library/train_util.py", "explicit_replacement",
  "kohya-ss sd-scripts library/train_util.py excerpt (optimizer factory with bitsandbytes, xformers/SDPA switch, RNG save/restore)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", AUTOLOAD),
    C("optimizer_class = bnb.optim.AdamW8bit", "fused_optimizer", R, False,
      "optimizer_class = torch_npu.optim.NpuFusedAdamW  # bitsandbytes 8-bit optimizers have no NPU backend",
      "bitsandbytes on NPU covers NF4 quantisation only; 8-bit optimizers are not listed (" + K + " §6); only reached "
      "with --optimizer_type AdamW8bit (fixed in the launch script instead)"),
    C("optimizer_class = bnb.optim.PagedAdamW8bit", "fused_optimizer", R, False,
      "optimizer_class = torch_npu.optim.NpuFusedAdamW",
      "paged 8-bit optimizer relies on CUDA unified memory; not available for NPU (" + K + " §6); opt-in path"),
    C("optimizer_class = torch.optim.AdamW", "fused_optimizer", R, False, "optimizer_class = torch_npu.optim.NpuFusedAdamW",
      "performance: msFmkTransplt advises NpuFused* for torch.optim.AdamW (" + K + " §3.5)"),
    C("cuda_rng_state = torch.cuda.get_rng_state() if torch.cuda.is_available() else None", "torch_cuda_api", R, False,
      "cuda_rng_state = torch.npu.get_rng_state() if torch.npu.is_available() else None",
      "on NPU this is None, so the device RNG stream is not restored after sampling (reproducibility only)"),
    C("torch.cuda.set_rng_state(cuda_rng_state)", "torch_cuda_api", R, False, "torch.npu.set_rng_state(cuda_rng_state)",
      "paired with the line above; guarded by `is not None`, so never reached unchanged"),
])

E("kohya_accel_config", "config/accelerate_multi_gpu.yaml", "explicit_replacement",
  "accelerate config YAML shipped with sd-scripts LoRA recipes (multi-node DDP, dynamo settings)", [
    C("distributed_type: MULTI_GPU", "distributed_framework", R, False, "distributed_type: MULTI_NPU",
      "accelerate has native NPU support since 0.22 (" + K + " §6) and selects HCCL from the detected device; whether a "
      "MULTI_GPU config still launches correctly on NPU is unconfirmed, MULTI_NPU is the explicit value"),
    C("dynamo_mode: max-autotune", "compile_mode", R, False, "dynamo_mode: default",
      "max-autotune tunes Triton kernels; Inductor's Triton path is disabled on NPU by transfer_to_npu (has_triton=False, "
      + K + " §2.6); effect on plain torch_npu Inductor unconfirmed"),
])

E("kohya_lora_launch", "scripts/train_lora_sdxl.sh", "explicit_replacement",
  "sd-scripts style SDXL LoRA launch script (accelerate launch, nvidia-smi GPU count, xformers + AdamW8bit)", [
    C("export CUDA_VISIBLE_DEVICES=", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; ASCEND_RT_VISIBLE_DEVICES selects logical NPUs (" + DIST + " §1)"),
    C("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", R, False,
      "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
      "allocator tuning is read from PYTORCH_NPU_ALLOC_CONF on NPU (" + K + " §1.6); memory-only"),
    C("export NCCL_P2P_DISABLE=0", "env_var", X, False, None, "NCCL variable, no effect with HCCL"),
    C("export NCCL_IB_DISABLE=1", "env_var", X, False, None,
      "NCCL variable, no effect with HCCL; HCCL network selection uses HCCL_* variables (" + DIST + " §1)"),
    C("NUM_GPUS=$(nvidia-smi --query-gpu=name", "env_var", R, True,
      'NUM_GPUS=$(python -c "import torch, torch_npu; print(torch.npu.device_count())")',
      "nvidia-smi does not exist on an Ascend host (npu-smi instead, " + K + " §6); with set -o pipefail the script exits"),
    C("nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv", "env_var", R, True, "npu-smi info",
      "nvidia-smi missing: set -e aborts the script"),
    C("assert torch.cuda.is_available(), 'no GPU visible'; print(torch.version.cuda)", "torch_cuda_api", R, True,
      "python -c \"import torch, torch_npu; assert torch.npu.is_available(), 'no NPU visible'; print(torch_npu.__version__)\"",
      AVAIL + "; the sanity check aborts the script"),
    C("import xformers, bitsandbytes;", "attention_kernel", X, True, None,
      "neither xformers nor bitsandbytes' 8-bit optimizers are available for NPU (" + K + " §6); the import check aborts the script"),
    C("--optimizer_type AdamW8bit", "fused_optimizer", R, True, "--optimizer_type AdamW \\",
      "bitsandbytes 8-bit optimizers are not supported on NPU (" + K + " §6)"),
    C("=--xformers \\", "attention_kernel", R, True, "--sdpa \\",
      XF + "; replace_unet_modules raises ImportError without xformers, SDPA runs NPU flash attention"),
    C("nvidia-smi --query-gpu=index,memory.used --format=csv,noheader", "env_var", R, True, "npu-smi info",
      "nvidia-smi missing: the script exits non-zero after training"),
])

E("video_vae_tiled", "videogen/models/vae/causal_vae.py", "explicit_replacement",
  "causal 3D video VAE decoder with temporal chunking and spatial tiled decoding (CogVideoX / Open-Sora-Plan CausalVAE style)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", AUTOLOAD),
    C("if torch.cuda.is_available() and torch.cuda.get_device_properties(0).total_memory < 40 * 2**30:", "torch_cuda_api", R, False,
      "if torch.npu.is_available() and torch.npu.get_device_properties(0).total_memory < 40 * 2**30:",
      "memory heuristic silently never enables tiling on NPU; total_memory is available on NPU (" + TSV + ")"),
    C("tile = tile.contiguous(memory_format=torch.channels_last_3d)", "unsupported_op_workaround", R, False,
      "tile = tile.contiguous()",
      "msFmkTransplt documents channels_last as not supported on NPU, use contiguous (" + K + " §2.8); whether "
      "channels_last_3d errors or only costs format conversions is unconfirmed"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY),
])

E("text_encoder_offload", "videogen/text_encoders.py", "explicit_replacement",
  "T5-XXL / CLIP text-encoder wrappers with CPU offload (HunyuanVideo / Open-Sora text_encoder modules)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", AUTOLOAD),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY),
    C("torch.cuda.ipc_collect()", "torch_cuda_api", R, True, "torch.npu.ipc_collect()",
      "torch.cuda.ipc_collect initialises CUDA and raises; NPU form torch_npu.npu.ipc_collect (" + TSV + ")"),
    C("free, _ = torch.cuda.mem_get_info()", "torch_cuda_api", R, True, "free, _ = torch.npu.mem_get_info()",
      "calls the CUDA runtime and raises; torch_npu.npu.mem_get_info (" + TSV + ")"),
    C('self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")', "device_type", R, True,
      'self.device = device or ("npu" if torch.npu.is_available() else "cpu")', AVAIL),
    C("p.data = p.data.pin_memory()", "pin_memory", R, False, 'p.data = p.data.pin_memory(device="npu")',
      "pinned host memory for fast H2D copies; which accelerator a bare pin_memory() targets on a torch_npu host is "
      "version-dependent (transfer_to_npu wraps Tensor.pin_memory, " + K + " §2.2) - unconfirmed"),
    C('device_map="cuda",', "device_type", R, True, 'device_map="npu",',
      "accelerate/transformers place the weights on 'cuda', which fails on an NPU host"),
    C('with torch.autocast("cuda", dtype=self.dtype):', "amp", R, False, 'with torch.autocast("npu", dtype=self.dtype):',
      "CUDA autocast is inactive for NPU tensors, but the encoder weights are already loaded in self.dtype, so the result "
      "barely changes"),
    C('self.device = torch.device(device) if device is not None else torch.device("cuda:0")', "device_type", R, True,
      'self.device = torch.device(device) if device is not None else torch.device("npu:0")', "'cuda:0' fails on NPU"),
    C("torch.cuda.memory_allocated() / 2**30)", "torch_cuda_api", R, False, "torch.npu.memory_allocated() / 2**30)",
      "logging only; 0 without CUDA"),
])

E("video_dataloader", "videogen/datasets/video_dataset.py", "explicit_replacement",
  "video-text dataset with decord (optional NVDEC GPU decode) and PyAV fallback, DistributedSampler dataloader", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", AUTOLOAD),
    C("ctx = gpu(self.local_rank) if self.decode_on_gpu else cpu(0)", "device_type", R, False, "ctx = cpu(0)",
      "decord GPU decoding needs a CUDA (NVDEC) build of decord; no NPU context exists in decord (unconfirmed; Ascend "
      "hardware decode goes through DVPP/torchvision_npu, " + K + " §6); only reached with decode_on_gpu=True"),
    C('pin_memory_device="cuda" if torch.cuda.is_available() else "",', "pin_memory", R, False,
      'pin_memory_device="npu" if torch.npu.is_available() else "",',
      "with an empty pin_memory_device the loader only pins when CUDA is available, so batches are silently unpinned on "
      "NPU (performance; exact DataLoader behaviour per torch version unconfirmed)"),
    C('device = device or torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))', "device_type", R, True,
      'device = device or torch.device("npu", int(os.environ.get("LOCAL_RANK", 0)))', "CUDA device fails on NPU"),
])

E("opensora_bucket", "opensora/datasets/bucket.py", "explicit_replacement",
  "Open-Sora opensora/datasets/bucket.py (CPU-only resolution/frame bucketing; no labels)", [])

E("comfyui_node", "custom_nodes/ComfyUI-VideoUpscaleTiled/nodes.py", "explicit_replacement",
  "ComfyUI custom node pack (tiled video upscaler + RIFE interpolation) mixing comfy.model_management with raw CUDA calls", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", AUTOLOAD),
    C("if not torch.cuda.is_available():", "device_capability_check", B, False,
      'if hasattr(torch, "npu") and torch.npu.is_available(): return True',
      "fp16 capability probe is CUDA-only: an NPU host is told fp16 is unsupported and silently runs fp32 (slower, still correct)"),
    C('with torch.autocast(device_type="cuda", dtype=dtype, enabled=dtype != torch.float32):', "amp", R, False,
      'with torch.autocast(device_type=device.type, dtype=dtype, enabled=dtype != torch.float32):',
      "CUDA autocast is inactive for NPU tensors, but model and inputs are already cast to dtype, so nothing changes numerically"),
    C('sd = torch.load(os.path.join(MODELS_DIR, ckpt_name), map_location="cuda")', "device_type", R, True,
      'sd = torch.load(os.path.join(MODELS_DIR, ckpt_name), map_location="npu")', "map_location='cuda' fails without CUDA"),
    C("self.model.eval().cuda()", "tensor_to_device", R, True, "self.model.eval().npu()", ".cuda() fails without CUDA"),
    C("frames = images.movedim(-1, 1).cuda()", "tensor_to_device", R, True, "frames = images.movedim(-1, 1).npu()",
      ".cuda() fails without CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "raises without CUDA"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY),
])

E("opensora_launch_sh", "scripts/train_multinode.sh", "explicit_replacement",
  "multi-node launcher for Open-Sora training (colossalai run / torchrun) and xDiT USP sampling, with NCCL tuning", [
    C("export CUDA_DEVICE_MAX_CONNECTIONS=1", "env_var", X, False, None,
      "CUDA hardware-queue setting; no effect on NPU (not listed among Ascend runtime variables)"),
    C("export NCCL_SOCKET_IFNAME=", "env_var", R, False, "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
      "HCCL chooses its host NIC from HCCL_SOCKET_IFNAME / HCCL_IF_IP; a wrong default NIC breaks multi-node init (" + DIST +
      " §1); whether the default is wrong depends on the cluster"),
    C("export NCCL_IB_HCA=", "env_var", X, False, None, "NCCL InfiniBand selection; HCCL uses the NPU RoCE NICs (" + DIST + " §1)"),
    C("export NCCL_IB_GID_INDEX=3", "env_var", X, False, None, "NCCL-only"),
    C("export NCCL_DEBUG=", "env_var", R, False, "export ASCEND_GLOBAL_LOG_LEVEL=${ASCEND_GLOBAL_LOG_LEVEL:-3}",
      "NCCL log level has no HCCL meaning; Ascend logging is ASCEND_GLOBAL_LOG_LEVEL (" + K.replace("torch-npu-migration.md", "ascend-host-formats.md") + ")"),
    C("export TORCH_NCCL_ASYNC_ERROR_HANDLING=1", "env_var", R, False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "torch_npu watchdog variable is HCCL_ASYNC_ERROR_HANDLING (" + DIST + " §1)"),
    C("export CUDA_LAUNCH_BLOCKING=", "env_var", R, False, "export ASCEND_LAUNCH_BLOCKING=${ASCEND_LAUNCH_BLOCKING:-0}",
      "debug switch; NPU equivalent ASCEND_LAUNCH_BLOCKING (/work/shared/knowledge/ascend-host-formats.md)"),
    C("nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv >", "env_var", R, True,
      "npu-smi info > ${LOG_DIR}/npu_mem_node${NODE_RANK}.txt",
      "nvidia-smi does not exist on Ascend hosts (npu-smi, " + K + " §6); under set -e the script exits non-zero"),
])

E("opensora_requirements", "requirements.txt", "explicit_replacement",
  "Open-Sora / video-generation requirements.txt (cu121 index, CUDA kernel packages, xDiT, decord/PyAV)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "custom_cuda_extension", R, False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "x86 Ascend hosts install CPU torch from the cpu index; aarch64 uses plain PyPI (" + K + " §1.1); a cu121 build "
      "pulls the nvidia-* wheels - whether torch_npu then still loads is unconfirmed"),
    C("=torch==2.2.2", "custom_cuda_extension", R, True, "torch==2.3.1  # + torch-npu==2.3.1.post6 (CANN 8.1.RC1)",
      "no torch_npu wheel exists for torch 2.2.2; the torch_npu wheel version must equal the torch version (" + K + " §1.1-1.3)"),
    C("=torchvision==0.17.2", "custom_cuda_extension", R, True, "torchvision==0.18.1",
      "torchvision must follow the torch pin"),
    C("=xformers==0.0.25.post1", "attention_kernel", X, True, None, XF + "; its wheel also pins a CUDA torch build"),
    C("=flash-attn==2.5.8", "attention_kernel", X, True, None, "flash-attn cannot be installed on NPU (" + K + " §6)"),
    C("apex @ git+https://github.com/NVIDIA/apex.git", "custom_cuda_extension", R, False,
      "apex @ git+https://gitee.com/ascend/apex.git  # Ascend Apex patch, built with scripts/build.sh",
      "NVIDIA apex installs Python-only without nvcc, so the install itself may pass; its CUDA kernels are absent either "
      "way, Ascend ships an apex patch (" + K + " §6)"),
    C("=triton==2.2.0", "triton_kernel_tuning", R, False, "triton-ascend",
      "Ascend Triton is the triton-ascend package; kernels need porting (" + K + " §6)"),
    C("=bitsandbytes==0.43.1", "fused_optimizer", X, False, None,
      "only used for 8-bit optimizers, which bitsandbytes does not provide on NPU (" + K + " §6)"),
    C("=pynvml", "custom_cuda_extension", X, False, None, "NVML has no NPU counterpart in torch_npu (" + K + " §6); monitoring only"),
    C("=gpustat", "custom_cuda_extension", X, False, None, "nvidia-smi/NVML front-end; monitoring only"),
])

E("wan_pyproject", "pyproject.toml", "explicit_replacement",
  "Wan2.1 pyproject.toml (flash_attn as a hard dependency, xDiT extra)", [
    C('"torch>=2.4.0",', "import_torch_npu", A, False, '"torch-npu>=2.4.0",',
      "torch_npu is normally provided by the Ascend environment matched to CANN; declaring it is optional (" + K + " §1)"),
    C('=\"flash_attn\",', "attention_kernel", X, True, None,
      "flash-attn cannot be installed on NPU, so `pip install .` fails (" + K + " §6); Wan falls back to SDPA without it"),
    C('"flash-attn>=2.6.3",', "attention_kernel", X, False, None,
      "same package in the optional prompt-extend extra; only fails when that extra is requested"),
])

E("vgen_setup_ext", "setup.py", "kernel_rewrite",
  "setup.py of a video-generation repo with opt-in fused CUDA kernels (Open-Sora / ColossalAI BUILD_EXT style)", [
    C("from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CUDAExtension", "custom_cuda_extension", R, False,
      "from torch_npu.utils.cpp_extension import NpuExtension; from torch.utils.cpp_extension import BuildExtension",
      "no nvcc on Ascend; NPU extensions build with torch_npu.utils.cpp_extension.NpuExtension (" + K + " §6); only "
      "reached with BUILD_EXT=1 (opt-in)"),
    C("_, bare_major, bare_minor = get_cuda_bare_metal_version(CUDA_HOME)", "custom_cuda_extension", X, False, None,
      "runs nvcc -V; meaningless on Ascend, opt-in path"),
    C('os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "8.0;8.6;9.0")', "env_var", X, False, None, "CUDA arch list, opt-in path"),
    C('cc_flag = ["-gencode", "arch=compute_80,code=sm_80"', "custom_cuda_extension", X, False, None,
      "sm_80/sm_90 gencode flags, opt-in path"),
    C("=CUDAExtension(", "custom_cuda_extension", R, False, "NpuExtension(",
      "the .cu kernels (fused AdaLN, 3D RoPE, GroupNorm+SiLU) must be rewritten in Ascend C or replaced by torch_npu ops "
      "(npu_rotary_mul etc., " + K + " §5, §6); opt-in path"),
    C('"nvcc": append_nvcc_threads(', "custom_cuda_extension", X, False, None, "nvcc flags have no Ascend meaning"),
    C('"kernels": ["flash-attn>=2.5.8", "xformers>=0.0.25"],', "attention_kernel", X, False, None,
      "optional extra with packages that cannot be installed on NPU (" + K + " §6)"),
])

E("video_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "Dockerfile for a video-generation stack on the NGC PyTorch image (flash-attn, xformers, apex, NVDEC decord, prebuilt kernels)", [
    C("FROM nvcr.io/nvidia/pytorch:24.03-py3", "custom_cuda_extension", R, True,
      "FROM <CANN + torch_npu base image for Atlas A2, e.g. an ascendai/cann tag>",
      "the NGC image carries CUDA torch and no CANN/torch_npu; exact Ascend base-image tag unconfirmed"),
    C('TORCH_CUDA_ARCH_LIST="8.0 8.6 9.0" \\', "env_var", X, False, None, "CUDA arch list for nvcc builds"),
    C("NVIDIA_VISIBLE_DEVICES=all \\", "env_var", R, False, "ASCEND_VISIBLE_DEVICES=all \\",
      "NVIDIA container-runtime variable; Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES (" + DIST + " §1)"),
    C("NVIDIA_DRIVER_CAPABILITIES=compute,utility,video", "env_var", X, False, None, "NVIDIA container-runtime only"),
    C("pip install flash-attn==2.6.3 --no-build-isolation", "attention_kernel", X, True, None,
      "flash-attn cannot be built on NPU (" + K + " §6); the RUN step fails"),
    C("RUN pip install xformers==0.0.27 --index-url https://download.pytorch.org/whl/cu121", "attention_kernel", X, True, None,
      XF + "; the cu121 wheel also drags in a CUDA torch"),
    C('--config-settings "--build-option=--cpp_ext" --config-settings "--build-option=--cuda_ext" ./', "custom_cuda_extension", R, True,
      "bash scripts/build.sh --python=3.10 && pip install apex/dist/apex-*.whl  # Ascend/apex patch",
      "--cuda_ext needs nvcc; Ascend apex is built from its patch script (" + K + " §6)"),
    C("cmake .. -DUSE_CUDA=ON -DCMAKE_BUILD_TYPE=Release", "custom_cuda_extension", R, True,
      'mkdir build && cd build && cmake .. -DCMAKE_BUILD_TYPE=Release && make -j"$(nproc)" && \\',
      "decord's NVDEC build needs the CUDA toolkit and video SDK; CPU decoding only on NPU hosts"),
    C("RUN BUILD_EXT=1 pip install colossalai==0.4.2", "custom_cuda_extension", R, True, "RUN pip install colossalai==0.4.2",
      "BUILD_EXT=1 pre-compiles ColossalAI's CUDA kernels with nvcc; ColossalAI runs on NPU through its NpuAccelerator (" + K + " §6)"),
    C("RUN cd /workspace/videogen && BUILD_EXT=1 pip install -e . --no-build-isolation", "custom_cuda_extension", R, True,
      "RUN cd /workspace/videogen && pip install -e .", "builds the project's CUDAExtension; fails without nvcc"),
    C('RUN python -c "import torch, flash_attn, xformers;', "torch_cuda_api", R, True,
      'RUN python -c "import torch, torch_npu; print(torch.__version__, torch_npu.__version__)"',
      "imports packages that do not exist on NPU and prints torch.version.cuda"),
    C("ENV NCCL_IB_DISABLE=0 \\", "env_var", X, False, None, "NCCL-only variable"),
    C("NCCL_DEBUG=WARN \\", "env_var", X, False, None, "NCCL-only variable"),
    C("=CUDA_DEVICE_MAX_CONNECTIONS=1", "env_var", X, False, None, "CUDA-only variable"),
])
