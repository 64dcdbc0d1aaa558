# Labels for probe200 (long-context sequence/context parallel training, CUDA -> Ascend NPU).
# One C(...) per upstream line a careful porter would edit; see README.md for the policy.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


FA_GONE = "flash-attn is a CUDA-only package (nvcc build) and cannot be installed or imported on an Ascend host"
IMPORT_NPU = "import torch_npu"
IMPORT_NOTE_OLD_TORCH = ("entry script; the pinned torch (<2.5) predates torch_npu device autoload, so the 'npu' device "
                         "and torch.npu only exist after import torch_npu")
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
SET_ENV_NOTE = "CANN environment (LD_LIBRARY_PATH, ASCEND_OPP_PATH, libhccl) must be loaded before torch_npu is imported"
SYNC_NOTE = "torch.cuda.synchronize raises on a host without CUDA; NPU equivalent torch.npu.synchronize"
EVENT_NOTE = "torch.cuda.Event cannot be created without CUDA; torch.npu.Event(enable_timing=True) has the same API"
MAXMEM_NOTE = ("torch.cuda memory stats return 0 when CUDA was never initialised (or raise when given a device), "
               "so the logged peak memory is silently wrong; use torch.npu.max_memory_allocated")
NCCL_NOTE = "NCCL is not available on Ascend; HCCL is the collective backend"
DEV_NOTE = "'cuda' device does not exist on an Ascend host; use the npu device"
SETDEV_NOTE = "torch.cuda.set_device fails without CUDA; one process per NPU needs torch.npu.set_device"
EMPTY_NOTE = "torch.cuda.empty_cache is a silent no-op when CUDA is not initialised; NPU cache is not released (memory only)"

# ---------------------------------------------------------------- ring-flash-attention
E("rfa-utils", "ring_flash_attn/utils.py", "explicit_replacement",
  "zhuzilin/ring-flash-attention ring_flash_attn/utils.py (RingComm over P2POp/batch_isend_irecv, LSE merge)",
  [])

E("rfa-ring", "ring_flash_attn/ring_flash_attn.py", "kernel_rewrite",
  "zhuzilin/ring-flash-attention ring_flash_attn/ring_flash_attn.py",
  [
    C("from flash_attn.flash_attn_interface import _flash_attn_forward, _flash_attn_backward", "attention_kernel", "replace", True,
      "import torch_npu  # npu_fusion_attention / npu_fusion_attention_grad replace the FA2 private kernels",
      FA_GONE + "; the FA2 private forward/backward are replaced by torch_npu fused attention"),
    C("params = get_default_args(_flash_attn_forward).copy()", "attention_kernel", "replace", True,
      "params = dict(head_num=q.shape[2], input_layout=\"BSND\", scale=softmax_scale, keep_prob=1.0 - dropout_p)",
      "argument introspection of the FA2 kernel; npu_fusion_attention has a different signature"),
    C("outputs = _flash_attn_forward(**params)", "attention_kernel", "replace", True,
      "outputs = torch_npu.npu_fusion_attention(q, k, v, **params)  # (out, softmax_max, softmax_sum, ...); lse = max + log(sum)",
      "FA2 forward kernel call; on NPU npu_fusion_attention (BSND, causal via atten_mask + sparse_mode)"),
    C("params = get_default_args(_flash_attn_backward).copy()", "attention_kernel", "replace", True,
      "params = dict(head_num=q.shape[2], input_layout=\"BSND\", scale_value=softmax_scale)",
      "argument introspection of the FA2 backward kernel"),
    C("_flash_attn_backward(**params)", "attention_kernel", "replace", True,
      "dq_, dk_, dv_ = torch_npu.npu_fusion_attention_grad(q, k, v, dout, **params)[:3]",
      "FA2 backward kernel call; the NPU grad op needs softmax_max/softmax_sum saved from the forward"),
  ])

E("rfa-zigzag", "ring_flash_attn/zigzag_ring_flash_attn.py", "kernel_rewrite",
  "zhuzilin/ring-flash-attention ring_flash_attn/zigzag_ring_flash_attn.py (older positional-arg FA2 calls)",
  [
    C("from flash_attn.flash_attn_interface import (", "attention_kernel", "replace", True,
      IMPORT_NPU, FA_GONE),
    C("_flash_attn_forward as _fa_fwd,", "attention_kernel", "removal", True, None,
      "part of the flash_attn import; removed with it"),
    C("_flash_attn_backward as _fa_bwd,", "attention_kernel", "removal", True, None,
      "part of the flash_attn import; removed with it"),
    C("block_out, _, _, _, _, block_lse, _, _ = _fa_fwd(", "attention_kernel", "replace", True,
      "block_out, softmax_max, softmax_sum, *_ = torch_npu.npu_fusion_attention(",
      "FA2 forward call; NPU returns softmax_max/sum instead of lse (lse = max + log(sum))"),
    C("=_fa_bwd(", "attention_kernel", "replace", True,
      "dq_, dk_, dv_, _ = torch_npu.npu_fusion_attention_grad(",
      "FA2 backward call writing into dq/dk/dv buffers; NPU grad op returns new tensors"),
  ])

E("rfa-llama3", "ring_flash_attn/llama3_flash_attn_varlen.py", "kernel_rewrite",
  "zhuzilin/ring-flash-attention ring_flash_attn/llama3_flash_attn_varlen.py (all-gather KV, varlen FA2)",
  [
    C("from flash_attn.flash_attn_interface import (", "attention_kernel", "replace", True, IMPORT_NPU, FA_GONE),
    C("=_flash_attn_varlen_forward,", "attention_kernel", "removal", True, None, "part of the flash_attn import"),
    C("=_flash_attn_varlen_backward,", "attention_kernel", "removal", True, None, "part of the flash_attn import"),
    C("params = get_default_args(_flash_attn_varlen_forward).copy()", "attention_kernel", "replace", True,
      "params = dict(head_num=q_i.shape[1], input_layout=\"TND\", scale=softmax_scale, actual_seq_qlen=cu_seqlens_q[1:].tolist(), actual_seq_kvlen=cu_seqlens_k[1:].tolist())",
      "varlen FA2 argument introspection; NPU varlen is layout TND with cumulative host lists"),
    C("outputs = _flash_attn_varlen_forward(**params)", "attention_kernel", "replace", True,
      "outputs = torch_npu.npu_fusion_attention(q_i, k_i, v_i, **params)",
      "varlen FA2 forward kernel call"),
    C("params = get_default_args(_flash_attn_varlen_backward).copy()", "attention_kernel", "replace", True,
      "params = dict(head_num=q_i.shape[1], input_layout=\"TND\", scale_value=softmax_scale, actual_seq_qlen=cu_seqlens_q[1:].tolist(), actual_seq_kvlen=cu_seqlens_k[1:].tolist())",
      "varlen FA2 backward argument introspection"),
    C("_flash_attn_varlen_backward(**params)", "attention_kernel", "replace", True,
      "dq_i[:], dk_i[:], dv_i[:] = torch_npu.npu_fusion_attention_grad(q_i, k_i, v_i, dout_i, **params)[:3]",
      "varlen FA2 backward kernel call"),
  ])

E("rfa-triton", "ring_flash_attn/triton_utils.py", "kernel_rewrite",
  "zhuzilin/ring-flash-attention ring_flash_attn/triton_utils.py (Triton varlen LSE flatten/unflatten)",
  [
    C("grid = lambda META: (triton.cdiv(max_seqlen, META[\"BLOCK_M\"]), batch_size, nheads)", "triton_kernel_tuning", "replace", False,
      "grid = lambda META: (min(triton.cdiv(max_seqlen, META[\"BLOCK_M\"]) * batch_size * nheads, num_vector_cores),)",
      "unconfirmed: triton-ascend maps programs onto AI cores; a 3-D grid of BLOCK_M=4 tiles launches thousands of tiny programs and should be re-tiled (performance)"),
    C("with torch.cuda.device(lse.device.index):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(lse.device.index):",
      "torch.cuda.device context raises without CUDA"),
    C("grid = lambda META: (triton.cdiv(max_seqlen, META[\"BLOCK_M\"]), batch_size, num_head)", "triton_kernel_tuning", "replace", False,
      "grid = lambda META: (min(triton.cdiv(max_seqlen, META[\"BLOCK_M\"]) * batch_size * num_head, num_vector_cores),)",
      "unconfirmed: same re-tiling for triton-ascend (performance)"),
    C("with torch.cuda.device(new_lse.device.index):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(new_lse.device.index):",
      "torch.cuda.device context raises without CUDA"),
  ])

E("rfa-hf", "ring_flash_attn/adapters/hf_adapter.py", "explicit_replacement",
  "zhuzilin/ring-flash-attention ring_flash_attn/adapters/hf_adapter.py (substitute_hf_flash_attn)",
  [])

E("rfa-bench", "benchmark/benchmark_kvpacked_func.py", "explicit_replacement",
  "zhuzilin/ring-flash-attention benchmark/benchmark_kvpacked_func.py",
  [
    C("from flash_attn import flash_attn_kvpacked_func", "attention_kernel", "replace", True,
      "from ring_flash_attn.npu_ref import npu_attn_kvpacked_func as flash_attn_kvpacked_func  # single-device npu_fusion_attention baseline",
      FA_GONE + "; the single-device baseline needs an NPU attention kernel"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE_OLD_TORCH),
    C("device = torch.device(f\"cuda:{rank}\")", "device_type", "replace", True,
      "device = torch.device(f\"npu:{rank}\")", DEV_NOTE),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)", SETDEV_NOTE),
    C("profiler = torch.profiler.profile(", "torch_cuda_api", "replace", False,
      "profiler = torch_npu.profiler.profile(",
      "unconfirmed whether torch.profiler records NPU kernels; torch_npu.profiler is the documented profiler (profile path is off by default)"),
    C("torch.profiler.ProfilerActivity.CUDA,", "torch_cuda_api", "replace", True,
      "torch_npu.profiler.ProfilerActivity.NPU,",
      "ProfilerActivity is listed unsupported on NPU; a CUDA activity silently records no device kernels"),
    C("begin = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "begin = torch.npu.Event(enable_timing=True)", EVENT_NOTE),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)", EVENT_NOTE),
    C("torch.cuda.synchronize(device=device)", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize(device=device)", SYNC_NOTE),
    C("dist.init_process_group(\"nccl\")", "dist_backend", "replace", True, "dist.init_process_group(\"hccl\")", NCCL_NOTE),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_NOTE),
  ])

E("rfa-test", "test/test_zigzag_ring_flash_attn_func.py", "explicit_replacement",
  "zhuzilin/ring-flash-attention test/test_zigzag_ring_flash_attn_func.py",
  [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE_OLD_TORCH),
    C("from flash_attn import flash_attn_qkvpacked_func", "attention_kernel", "replace", True,
      "from ring_flash_attn.npu_ref import npu_attn_qkvpacked_func as flash_attn_qkvpacked_func",
      FA_GONE + "; the reference result needs an NPU (or pure-torch) attention"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "silent no-op on NPU; torch.manual_seed above already seeds the NPU generator"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "silent no-op on NPU; redundant with torch.manual_seed"),
    C("dist.init_process_group(\"nccl\")", "dist_backend", "replace", True, "dist.init_process_group(\"hccl\")", NCCL_NOTE),
    C("=set_seed(rank)", "torch_cuda_api", "npu_only_addition", True, "torch.npu.set_device(rank)",
      "the CUDA test never pins a device (NCCL guesses from rank); the Ascend launch guide requires torch.npu.set_device per process before HCCL work"),
    C("device = torch.device(f\"cuda:{rank}\")", "device_type", "replace", True,
      "device = torch.device(f\"npu:{rank}\")", DEV_NOTE),
    C("peak = torch.cuda.max_memory_allocated(device) / 1024**3", "torch_cuda_api", "replace", True,
      "peak = torch.npu.max_memory_allocated(device) / 1024**3",
      "torch.cuda.max_memory_allocated rejects an npu device / needs CUDA"),
  ])

# ---------------------------------------------------------------- DeepSpeed / Megatron-DeepSpeed Ulysses
E("ds-layer", "deepspeed/sequence/layer.py", "device_branch_or_abstraction",
  "deepspeedai/DeepSpeed deepspeed/sequence/layer.py (DistributedAttention, _SeqAllToAll, sp_stream overlap)",
  [])

E("mds-sp-sh", "examples_deepspeed/sequence_parallel/ds_pretrain_gpt_1.3B_seq_parallel_32k.sh", "explicit_replacement",
  "deepspeedai/Megatron-DeepSpeed examples_deepspeed/sequence_parallel/ds_pretrain_gpt_1.3B_seq_parallel_32k.sh",
  [
    C("dir=`pwd`", "import_torch_npu", "npu_only_addition", True, SET_ENV, SET_ENV_NOTE),
    C("num_gpus=$(($(ds_ssh nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)-2))", "torch_cuda_api", "replace", True,
      "num_gpus=$(($(ds_ssh 'npu-smi info -l | grep \"Total Count\"' | awk '{s+=$NF} END {print s}')))",
      "nvidia-smi does not exist on an Ascend host; device count comes from npu-smi"),
    C("num_gpus_pernode=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)", "torch_cuda_api", "replace", True,
      "num_gpus_pernode=$(npu-smi info -l | grep \"Total Count\" | awk '{print $NF}')",
      "nvidia-smi does not exist on an Ascend host"),
    C("export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3", "env_var", "removal", False, None,
      "NCCL-only IB HCA selection; HCCL uses the NPU-integrated RoCE ports configured with hccn_tool, so this is simply ignored"),
    C("export NCCL_SOCKET_IFNAME=bond0", "env_var", "replace", True, "export HCCL_SOCKET_IFNAME=bond0",
      "multi-node: HCCL ignores NCCL_SOCKET_IFNAME and would pick the host NIC by its own priority, losing the NIC pin"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "logging only; unconfirmed mapping (HCCL logs through the CANN plog level)"),
    C("--use-flash-attn-v2 \\", "attention_kernel", "replace", True,
      "    --use-flash-attn \\",
      "the FA-v2 path imports flash_attn (" + "unavailable" + "); unconfirmed that this fork's --use-flash-attn maps to npu_fusion_attention (MindSpeed does)"),
  ])

# ---------------------------------------------------------------- yunchang / USP
E("yc-globals", "yunchang/globals.py", "explicit_replacement",
  "feifeibear/long-context-attention (yunchang) yunchang/globals.py (set_seq_parallel_pg, guarded kernel imports)",
  [])

E("yc-a2a", "yunchang/comm/all_to_all.py", "explicit_replacement",
  "feifeibear/long-context-attention (yunchang) yunchang/comm/all_to_all.py (all_to_all_4D/5D over all_to_all_single)",
  [
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      SYNC_NOTE + " (only on the opt-in use_sync path)"),
    C("torch.cuda.current_stream().synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().synchronize()", "torch.cuda.current_stream raises without CUDA (use_sync path)"),
    C("torch.cuda.synchronize(device=input.device)", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize(device=input.device)", SYNC_NOTE + "; also rejects an npu device"),
    C("torch.cuda.synchronize(input_t.device)", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize(input_t.device)", SYNC_NOTE + "; also rejects an npu device"),
  ])

E("yc-kernels", "yunchang/kernels/attention.py", "kernel_rewrite",
  "feifeibear/long-context-attention (yunchang) yunchang/kernels/attention.py (AttnType, pytorch/FA/FA3 kernels)",
  [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "the ported torch path calls torch_npu.npu_fusion_attention directly"),
    C("out, lse = torch.ops.aten._scaled_dot_product_flash_attention(", "attention_kernel", "replace", True,
      "out, softmax_max, softmax_sum = torch_npu.npu_fusion_attention(q, k, v, q.shape[1], \"BNSD\", scale=softmax_scale, keep_prob=1.0 - dropout_p)[:3]",
      "CUDA-only aten flash kernel; not in the NPU native op lists"),
    C("out, lse = torch.ops.aten._scaled_dot_product_efficient_attention(", "attention_kernel", "replace", True,
      "out, softmax_max, softmax_sum = torch_npu.npu_fusion_attention(q, k, v, q.shape[1], \"BNSD\", scale=softmax_scale, keep_prob=1.0 - dropout_p)[:3]",
      "CUDA-only aten mem-efficient kernel; not in the NPU native op lists (this TORCH path is what a ported USP would run)"),
    C("dq, dk, dv, _ = torch.ops.aten._scaled_dot_product_efficient_attention_backward(", "attention_kernel", "replace", True,
      "dq, dk, dv, _, _ = torch_npu.npu_fusion_attention_grad(",
      "CUDA-only aten backward kernel; NPU grad op needs softmax_max/softmax_sum from the forward"),
    C("with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False):", "torch_cuda_api", "replace", False,
      "with contextlib.nullcontext():  # NPU SDPA selects its fused kernel itself",
      "torch.backends.cuda.sdp_kernel is listed unsupported on NPU; on an NPU build it only toggles CUDA SDPA flags (unconfirmed whether it affects NPU dispatch)"),
  ])

E("yc-hybrid", "yunchang/hybrid/attn_layer.py", "explicit_replacement",
  "feifeibear/long-context-attention (yunchang) yunchang/hybrid/attn_layer.py (LongContextAttention, USP)",
  [
    C("=attn_type: AttnType = AttnType.FA,", "attention_kernel", "replace", True,
      "attn_type: AttnType = AttnType.TORCH,  # ported TORCH path runs npu_fusion_attention",
      "default selects the FA2 kernels, which cannot be installed; callers that rely on the default fail with 'FlashAttention is not available'"),
    C("attn_type: AttnType = AttnType.FA,  # fa3 is not wired for qkvpacked yet", "attention_kernel", "replace", True,
      "attn_type: AttnType = AttnType.TORCH,",
      "same default in the qkv-packed variant"),
  ])

E("yc-test", "test/test_hybrid_attn.py", "explicit_replacement",
  "feifeibear/long-context-attention (yunchang) test/test_hybrid_attn.py",
  [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE_OLD_TORCH),
    C("from flash_attn import flash_attn_func", "attention_kernel", "replace", True,
      "from yunchang.kernels.npu_ref import npu_attn_func as flash_attn_func",
      FA_GONE + "; the guard turns the ImportError into a hard RuntimeError"),
    C("dist.init_process_group(\"nccl\")", "dist_backend", "replace", True, "dist.init_process_group(\"hccl\")", NCCL_NOTE),
    C("device = torch.device(f\"cuda:{rank}\")", "device_type", "replace", True, "device = torch.device(f\"npu:{rank}\")", DEV_NOTE),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)", SETDEV_NOTE),
    C("max_memory = torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace", True,
      "max_memory = torch.npu.max_memory_allocated(device) / (1024 * 1024)  # Convert to MB", MAXMEM_NOTE),
    C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(device)  # Reset stats", "needs CUDA / rejects an npu device"),
    C("out_ref, _, _ = flash_attn_func(", "attention_kernel", "replace", True,
      "out_ref, _, _ = flash_attn_func(  # NPU reference (npu_fusion_attention) with the FA2 call signature",
      "reference call into flash-attn; must go through the NPU reference wrapper"),
  ])

E("yc-bench", "benchmark/benchmark_longctx.py", "explicit_replacement",
  "feifeibear/long-context-attention (yunchang) benchmark/benchmark_longctx.py",
  [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE_OLD_TORCH),
    C("default=\"fa\",", "attention_kernel", "replace", True, "default=\"torch\",",
      "default --attn_type selects FA2 kernels that are not installable on NPU"),
    C("activities.append(torch.profiler.ProfilerActivity.CUDA)", "torch_cuda_api", "replace", True,
      "activities.append(torch_npu.profiler.ProfilerActivity.NPU)",
      "CUDA activity records no NPU kernels; ProfilerActivity listed unsupported on NPU"),
    C("torch.profiler.profile(", "torch_cuda_api", "replace", False, "torch_npu.profiler.profile(",
      "unconfirmed whether torch.profiler captures NPU activity; torch_npu.profiler is the documented path"),
    C("device = torch.device(f\"cuda:{rank}\")", "device_type", "replace", True, "device = torch.device(f\"npu:{rank}\")", DEV_NOTE),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)", SETDEV_NOTE),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True, "torch.npu.reset_peak_memory_stats()",
      "needs CUDA"),
    C("begin = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "begin = torch.npu.Event(enable_timing=True)", EVENT_NOTE),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", SYNC_NOTE),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)", EVENT_NOTE),
    C("torch.cuda.synchronize(device=device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device=device)", SYNC_NOTE),
    C("peak_mem_gb = torch.cuda.max_memory_allocated(device) / 1024**3", "torch_cuda_api", "replace", True,
      "peak_mem_gb = torch.npu.max_memory_allocated(device) / 1024**3", MAXMEM_NOTE),
    C("dist.init_process_group(\"nccl\")", "dist_backend", "replace", True, "dist.init_process_group(\"hccl\")", NCCL_NOTE),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_NOTE),
  ])

# ---------------------------------------------------------------- EasyContext
E("ec-train", "train.py", "explicit_replacement",
  "jzhang38/EasyContext train.py (accelerate + DeepSpeed ZeRO-3, zigzag ring attention monkey patch)",
  [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE_OLD_TORCH),
    C("from flash_attn.losses.cross_entropy import CrossEntropyLoss", "unsupported_op_workaround", "replace", True,
      "from torch.nn import CrossEntropyLoss",
      FA_GONE + "; the fused Triton cross-entropy lives in the flash-attn package"),
    C("=attn_implementation=\"flash_attention_2\",", "attention_kernel", "replace", True,
      "attn_implementation=\"sdpa\",",
      "with the transformers these scripts pin (<4.48) FA2 requires the flash_attn package; unconfirmed whether newer transformers' NPU FA2 route fits the monkey patch"),
    C("=_attn_implementation=\"flash_attention_2\",", "attention_kernel", "replace", True,
      "_attn_implementation=\"sdpa\",",
      "same as the Mistral branch; the zigzag monkey patch has to follow the attention class that is selected"),
    C("pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device=\"npu\",",
      "unconfirmed: with older torch DataLoader pinning is tied to CUDA and is silently dropped on NPU (performance only)"),
    C("loss_func = CrossEntropyLoss(inplace_backward=True)", "unsupported_op_workaround", "replace", True,
      "loss_func = CrossEntropyLoss()",
      "torch CrossEntropyLoss has no inplace_backward argument"),
    C("\"max_mem_gb\": torch.cuda.max_memory_allocated() / 1024**3,", "torch_cuda_api", "replace", True,
      "\"max_mem_gb\": torch.npu.max_memory_allocated() / 1024**3,", MAXMEM_NOTE),
  ])

E("ec-unsloth", "easy_context/unsloth_offloaded_gradient_checkpoint/monkey_patch.py", "explicit_replacement",
  "jzhang38/EasyContext easy_context/unsloth_offloaded_gradient_checkpoint/monkey_patch.py (Unsloth CPU-offloaded checkpointing)",
  [
    C("@torch.cuda.amp.custom_fwd", "amp", "replace", False, "@torch.npu.amp.custom_fwd",
      "unconfirmed impact: records CUDA autocast state, so an NPU-autocast forward would be recomputed without autocast; "
      "with DeepSpeed bf16 weights there is no autocast and nothing changes"),
    C("@torch.cuda.amp.custom_bwd", "amp", "replace", False, "@torch.npu.amp.custom_bwd",
      "pair of custom_fwd; re-enters CUDA autocast in backward (unconfirmed impact, see custom_fwd)"),
    C("hidden_states = hidden_states.to(\"cuda\", non_blocking=True).detach()", "tensor_to_device", "replace", True,
      "hidden_states = hidden_states.to(\"npu\", non_blocking=True).detach()",
      "offloaded activations are brought back to a 'cuda' device that does not exist"),
  ])

E("ec-lightseq", "easy_context/dist_flash_attn/lightseq_async_attn.py", "kernel_rewrite",
  "jzhang38/EasyContext easy_context/dist_flash_attn/lightseq_async_attn.py (DistFlashAttn / LightSeq)",
  [
    C("from flash_attn.flash_attn_interface import _flash_attn_forward, _flash_attn_backward", "attention_kernel", "replace", True,
      IMPORT_NPU, FA_GONE),
    C("dist.init_process_group(backend=\"nccl\")", "dist_backend", "replace", True,
      "dist.init_process_group(backend=\"hccl\")", NCCL_NOTE),
    C("torch.cuda.set_device(dist.get_rank() % local_world_size)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(dist.get_rank() % local_world_size)", SETDEV_NOTE),
    C("_COMM_STREAM = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "_COMM_STREAM = torch.npu.Stream()",
      "torch.cuda.Stream cannot be created without CUDA"),
    C("with torch.cuda.stream(_COMM_STREAM):", "torch_cuda_api", "replace", True, "with torch.npu.stream(_COMM_STREAM):",
      "CUDA stream context"),
    C("_COMM_STREAM.wait_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
      "_COMM_STREAM.wait_stream(torch.npu.current_stream())", "CUDA current stream"),
    C("torch.cuda.current_stream().wait_stream(_COMM_STREAM)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().wait_stream(_COMM_STREAM)", "CUDA current stream"),
    C("with torch.cuda.device(q.device.index):", "torch_cuda_api", "replace", True, "with torch.npu.device(q.device.index):",
      "torch.cuda.device context raises without CUDA"),
    C("num_warps=4,", "triton_kernel_tuning", "removal", False, None,
      "unconfirmed: num_warps is a GPU warp count; triton-ascend ignores/rejects it and tiles by BLOCK sizes (performance)"),
    C("num_stages=4,", "triton_kernel_tuning", "removal", False, None,
      "unconfirmed: software-pipelining depth tuned for A100 shared memory (performance)"),
    C("out, _, _, _, _, lse, _, _ = _flash_attn_forward(", "attention_kernel", "replace", True,
      "out, softmax_max, softmax_sum, *_ = torch_npu.npu_fusion_attention(",
      "FA2 forward kernel call"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", SYNC_NOTE),
    C("torch.cuda.synchronize(q.device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(q.device)", SYNC_NOTE),
    C("=_flash_attn_backward(", "attention_kernel", "replace", True,
      "dq_delta, dk_delta, dv_delta, _ = torch_npu.npu_fusion_attention_grad(",
      "FA2 backward kernel call"),
  ])

E("ec-needle", "eval_needle.py", "explicit_replacement",
  "jzhang38/EasyContext eval_needle.py (needle-in-a-haystack with zigzag ring attention)",
  [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE_OLD_TORCH),
    C("_attn_implementation=\"flash_attention_2\",", "attention_kernel", "replace", True, "_attn_implementation=\"sdpa\",",
      "FA2 needs the flash_attn package with the pinned transformers"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_NOTE),
    C("f\"ctx {context_length}: peak mem {torch.cuda.max_memory_allocated() / 1e9:.1f} GB\"", "torch_cuda_api", "replace", True,
      "f\"ctx {context_length}: peak mem {torch.npu.max_memory_allocated() / 1e9:.1f} GB\"", MAXMEM_NOTE),
  ])

E("ec-sh", "train.sh", "explicit_replacement",
  "jzhang38/EasyContext train.sh (accelerate launch stages 32K -> 64K -> 512K)",
  [
    C("#!/bin/bash", "import_torch_npu", "npu_only_addition", True, SET_ENV, SET_ENV_NOTE),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "lists every device of an 8-card node, so ignoring it changes nothing there; renamed to keep the intent"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "watchdog behaviour; HCCL_ASYNC_ERROR_HANDLING defaults to 1 per MindCluster docs"),
    C("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", "replace", False,
      "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
      "allocator tuning; ignored on NPU -> more fragmentation at 512K, memory only"),
    C("nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv", "torch_cuda_api", "replace", True,
      "npu-smi info", "nvidia-smi does not exist on an Ascend host (final diagnostic line fails)"),
  ])

E("ec-req", "requirements.txt", "explicit_replacement",
  "jzhang38/EasyContext requirements.txt",
  [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "torch_cuda_api", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "x86 Ascend hosts install the CPU torch wheel; with an extra index pip can still fall back to PyPI, so unconfirmed that the CUDA index breaks the install"),
    C("=torch==2.2.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.2.0.post2",
      "torch_npu wheel matching torch 2.2.0"),
    C("flash-attn==2.5.6", "attention_kernel", "removal", True, None, FA_GONE),
  ])

# ---------------------------------------------------------------- LongLoRA
E("ll-attn", "llama_attn_replace.py", "kernel_rewrite",
  "dvlab-research/LongLoRA llama_attn_replace.py (S2-Attn with flash_attn varlen kernels)",
  [
    C("from flash_attn import __version__ as flash_attn_version", "attention_kernel", "replace", True,
      "flash_attn_version = \"2.1.0\"  # no flash-attn on NPU; npu_fusion_attention handles the kv-cache case",
      FA_GONE),
    C("from flash_attn.bert_padding import pad_input, unpad_input", "attention_kernel", "replace", True,
      "from bert_padding import pad_input, unpad_input  # vendored pure-torch copy",
      FA_GONE + "; bert_padding itself is pure torch and can be vendored"),
    C("from flash_attn.flash_attn_interface import flash_attn_func, flash_attn_varlen_kvpacked_func, flash_attn_varlen_qkvpacked_func",
      "attention_kernel", "replace", True, IMPORT_NPU, FA_GONE),
    C("from flash_attn.bert_padding import unpad_input, pad_input", "attention_kernel", "removal", True, None,
      "duplicate flash_attn import"),
    C("=output_unpad = flash_attn_varlen_qkvpacked_func(", "attention_kernel", "replace", True,
      "output_unpad = torch_npu.npu_fusion_attention(x_unpad[:, 0], x_unpad[:, 1], x_unpad[:, 2], nheads // 2, \"TND\", atten_mask=causal_mask, sparse_mode=3, actual_seq_qlen=cu_q_lens[1:].tolist(), actual_seq_kvlen=cu_q_lens[1:].tolist())[0]",
      "shifted-group varlen FA2 call; NPU varlen uses TND + cumulative lengths"),
    C("flash_attn_varlen_qkvpacked_func(x_unpad, cu_q_lens, max_s, 0.0, softmax_scale=None, causal=True)", "attention_kernel", "replace", True,
      "output_unpad = torch_npu.npu_fusion_attention(x_unpad[:, 0], x_unpad[:, 1], x_unpad[:, 2], nheads, \"TND\", atten_mask=causal_mask, sparse_mode=3, actual_seq_qlen=cu_q_lens[1:].tolist(), actual_seq_kvlen=cu_q_lens[1:].tolist())[0]",
      "full-attention varlen FA2 call"),
    C("output = flash_attn_func(q, k, v, 0.0, softmax_scale=None, causal=True).view(", "attention_kernel", "replace", True,
      "output = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, \"BSND\", atten_mask=causal_mask, sparse_mode=3, scale=1.0 / math.sqrt(self.head_dim))[0].view(",
      "inference FA2 call"),
    C("output_unpad = flash_attn_varlen_kvpacked_func(", "attention_kernel", "replace", True,
      "output_unpad = torch_npu.npu_fusion_attention(q, kv[:, 0], kv[:, 1], self.num_heads, \"TND\", atten_mask=causal_mask, sparse_mode=3, actual_seq_qlen=cu_q_lens[1:].tolist(), actual_seq_kvlen=cu_k_lens[1:].tolist())[0]",
      "inference varlen kv-packed FA2 call"),
    C("cuda_major, cuda_minor = torch.cuda.get_device_capability()", "device_capability_check", "replace", True,
      "cuda_major, cuda_minor = 8, 0  # NPU fused attention has no head_dim>64 backward restriction",
      "get_device_capability needs CUDA (torch_npu returns None unless TORCH_NPU_DEVICE_CAPABILITY is set, so the tuple unpack fails)"),
  ])

E("ll-ft", "fine-tune.py", "explicit_replacement",
  "dvlab-research/LongLoRA fine-tune.py (HF Trainer + DeepSpeed, LoRA+ with trainable embed/norm)",
  [
    C("=import pynvml", "torch_cuda_api", "removal", False, None,
      "nvidia-ml-py imports without NVML; dead after the callback is ported"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE_OLD_TORCH),
    C("pynvml.nvmlInit()", "torch_cuda_api", "removal", True, None,
      "NVML shared library is absent on an Ascend host; nvmlInit raises"),
    C("self.handle = pynvml.nvmlDeviceGetHandleByIndex(local_rank)", "torch_cuda_api", "replace", True,
      "self.device = torch.device(\"npu\", local_rank)", "NVML device handle"),
    C("info = pynvml.nvmlDeviceGetMemoryInfo(self.handle)", "torch_cuda_api", "replace", True,
      "free, total = torch.npu.mem_get_info(self.device)", "NVML memory query; torch.npu.mem_get_info is the NPU equivalent"),
    C("logs[\"torch_max_alloc_gb\"] = round(torch.cuda.max_memory_allocated() / 1024**3, 2)", "torch_cuda_api", "replace", True,
      "logs[\"torch_max_alloc_gb\"] = round(torch.npu.max_memory_allocated() / 1024**3, 2)", MAXMEM_NOTE),
    C("logs[\"torch_reserved_gb\"] = round(torch.cuda.memory_reserved() / 1024**3, 2)", "torch_cuda_api", "replace", True,
      "logs[\"torch_reserved_gb\"] = round(torch.npu.memory_reserved() / 1024**3, 2)", MAXMEM_NOTE),
  ])

E("ll-eval", "eval.py", "explicit_replacement",
  "dvlab-research/LongLoRA eval.py (PG19 / proof-pile perplexity)",
  [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE_OLD_TORCH),
    C("x, y = x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device, non_blocking=True)", "pin_memory", "replace", False,
      "x, y = x.pin_memory(\"npu\").to(device, non_blocking=True), y.pin_memory(\"npu\").to(device, non_blocking=True)",
      "unconfirmed: on older torch Tensor.pin_memory() defaults to CUDA pinning; transfer_to_npu wraps it, an explicit port names the device"),
    C("device = \"cuda:0\"", "device_type", "replace", True, "device = \"npu:0\"", DEV_NOTE),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)", SETDEV_NOTE),
    C("print(f\"peak memory: {torch.cuda.max_memory_allocated(device) / 1024**3:.2f} GiB\")", "torch_cuda_api", "replace", True,
      "print(f\"peak memory: {torch.npu.max_memory_allocated(device) / 1024**3:.2f} GiB\")",
      "torch.cuda.max_memory_allocated rejects an npu device / needs CUDA"),
  ])

E("ll-sh", "scripts/finetune_llama2_7b_32k.sh", "explicit_replacement",
  "dvlab-research/LongLoRA README fine-tune / merge / eval commands wrapped in a launcher script",
  [
    C("# LongLoRA: Llama-2-7B -> 32K context", "import_torch_npu", "npu_only_addition", True, SET_ENV,
      SET_ENV_NOTE + "; it must be sourced before 'set -u' because set_env.sh references unset variables"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", False, "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "ignored on NPU, but torchrun's 4 ranks still land on npu:0-3 via LOCAL_RANK, so the effect is the same; renamed for intent"),
    C("export NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None, "NVLink P2P tuning; no HCCL counterpart, ignored"),
    C("--tf32 True \\", "device_capability_check", "replace", True, "    --tf32 False \\",
      "transformers' tf32 check is CUDA/Ampere-gated (is_torch_tf32_available is among the functions transfer_to_npu patches) and raises ValueError without CUDA; unconfirmed for the newest transformers"),
    C("CUDA_VISIBLE_DEVICES=0 python3 eval.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=0 python3 eval.py --seq_len 32768 --context_size 32768 --batch_size 1 \\",
      "eval.py loads with device_map=\"auto\": if the restriction is ignored the model is silently sharded over every NPU of the node"),
  ])

E("ll-req", "requirements.txt", "explicit_replacement",
  "dvlab-research/LongLoRA requirements.txt",
  [
    C("torch>=2.0.0", "import_torch_npu", "npu_only_addition", True, "torch-npu>=2.1.0",
      "torch_npu must be installed next to (and version-matched with) torch"),
    C("flash-attn>=2.0.0", "attention_kernel", "removal", True, None, FA_GONE),
    C("nvidia-ml-py", "torch_cuda_api", "removal", False, None,
      "installs fine (pure python) but NVML is absent; only the code using it fails"),
  ])

# ---------------------------------------------------------------- PyTorch-native context parallel
E("tt-cp", "examples/train_context_parallel.py", "explicit_replacement",
  "pytorch/torchtitan-style context-parallel training loop (init_device_mesh, fully_shard, context_parallel, sdpa_kernel)",
  [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, IMPORT_NPU,
      "fully_shard needs torch>=2.6, where torch_npu autoloads as the device backend; the explicit import is recommended, not required"),
    C("dist.init_process_group(backend=\"cuda:nccl,cpu:gloo\")", "dist_backend", "replace", True,
      "dist.init_process_group(backend=\"npu:hccl,cpu:gloo\")", NCCL_NOTE),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)", SETDEV_NOTE),
    C("mesh = init_device_mesh(\"cuda\", (dp, args.cp), mesh_dim_names=(\"dp\", \"cp\"))", "device_type", "replace", True,
      "mesh = init_device_mesh(\"npu\", (dp, args.cp), mesh_dim_names=(\"dp\", \"cp\"))", DEV_NOTE),
    C("model.to_empty(device=\"cuda\")", "tensor_to_device", "replace", True, "model.to_empty(device=\"npu\")", DEV_NOTE),
    C("optim = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1, fused=True)", "fused_optimizer", "replace", False,
      "optim = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1, foreach=True)",
      "unconfirmed: _fused_adamw_ is not in the NPU native op lists (CPU fallback or error); torch_npu.optim.NpuFusedAdamW does not take DTensor params from FSDP2"),
    C("torch.backends.cuda.matmul.allow_tf32 = True", "torch_cuda_api", "replace", False, "torch.npu.matmul.allow_hf32 = True",
      "precision/performance knob; the CUDA flag has no effect on NPU matmuls (unconfirmed HF32 default)"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True, "torch.npu.reset_peak_memory_stats()", "needs CUDA"),
    C("tokens = torch.randint(0, cfg.vocab_size, (args.batch, args.seq_len + 1), device=\"cuda\")", "tensor_to_device", "replace", True,
      "tokens = torch.randint(0, cfg.vocab_size, (args.batch, args.seq_len + 1), device=\"npu\")", DEV_NOTE),
    C("with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]):", "attention_kernel", "replace", False,
      "with contextlib.nullcontext():  # let torch_npu pick its fused SDPA, the only path its context_parallel supports",
      "unconfirmed: restricting SDPA to the CUDA flash/efficient backends may push NPU SDPA off the fused path that NPU context_parallel requires"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", SYNC_NOTE),
    C("mem = torch.cuda.max_memory_allocated() / 1024**3", "torch_cuda_api", "replace", True,
      "mem = torch.npu.max_memory_allocated() / 1024**3", MAXMEM_NOTE),
  ])

# ---------------------------------------------------------------- environment / launch
E("docker", "docker/Dockerfile", "explicit_replacement",
  "NGC-based training image used by ring-attention / EasyContext style projects",
  [
    C("FROM nvcr.io/nvidia/pytorch:24.05-py3", "torch_cuda_api", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10  # + pip install torch==2.4.0 torch-npu==2.4.0.post2",
      "NGC image ships CUDA torch and no CANN/torch_npu"),
    C("ENV TORCH_CUDA_ARCH_LIST=\"8.0 8.6 9.0\"", "custom_cuda_extension", "removal", False, None,
      "only used to compile CUDA extensions (flash-attn); dead on NPU"),
    C("ENV NCCL_IB_DISABLE=0", "env_var", "removal", False, None, "NCCL-only; ignored by HCCL"),
    C("ENV NCCL_NET_GDR_LEVEL=2", "env_var", "removal", False, None, "NCCL GPUDirect RDMA tuning; ignored by HCCL"),
    C("RUN pip install flash-attn==2.6.3 --no-build-isolation", "attention_kernel", "removal", True, None, FA_GONE),
    C("RUN DS_BUILD_FUSED_ADAM=1 DS_BUILD_CPU_ADAM=1 pip install deepspeed==0.14.4", "custom_cuda_extension", "replace", False,
      "RUN pip install deepspeed==0.14.4",
      "unconfirmed: ahead-of-time op builds at image build time (no NPU visible) may take the CUDA builder; the NPU accelerator JIT-builds its ops"),
  ])

E("conda-env", "environment.yml", "explicit_replacement",
  "conda environment.yml for a ring-attention / USP development setup",
  [
    C("=- nvidia", "torch_cuda_api", "removal", False, None, "CUDA channel; unused once pytorch-cuda is gone"),
    C("=- pytorch-cuda=12.1", "torch_cuda_api", "removal", True, None,
      "pulls the CUDA build of pytorch (and has no linux-aarch64 build for Kunpeng-based Ascend hosts)"),
    C("=- cuda-nvcc=12.1", "custom_cuda_extension", "removal", False, None, "nvcc only needed to build flash-attn"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.3.1.post6",
      "torch_npu wheel matching pytorch 2.3.1"),
    C("=- flash-attn==2.6.3", "attention_kernel", "removal", True, None, FA_GONE),
  ])

E("slurm-usp", "scripts/slurm_usp_llama3_128k.sh", "explicit_replacement",
  "Slurm + torchrun launcher for yunchang/USP multi-node long-context fine-tuning",
  [
    C("#SBATCH --gres=gpu:8", "device_type", "replace", False, "#SBATCH --gres=npu:8",
      "unconfirmed: depends on how the cluster's Slurm exposes /dev/davinci*; no Ascend gres convention found"),
    C("module load cuda/12.1 nccl/2.18", "import_torch_npu", "replace", True, SET_ENV,
      "CUDA/NCCL modules do not exist there; the CANN environment has to be sourced instead"),
    C("export NCCL_SOCKET_IFNAME=ib0", "env_var", "replace", True, "export HCCL_SOCKET_IFNAME=ib0",
      "4-node job: HCCL root-info negotiation ignores NCCL_SOCKET_IFNAME and may pick an unreachable NIC"),
    C("export NCCL_IB_HCA=mlx5", "env_var", "removal", False, None, "NCCL-only; HCCL uses the NPU RoCE ports"),
    C("export NCCL_DEBUG=INFO", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=1", "logging only; mapping unconfirmed"),
    C("export TORCH_NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "watchdog; HCCL default is already 1"),
    C("export CUDA_LAUNCH_BLOCKING=0", "env_var", "replace", False, "export ASCEND_LAUNCH_BLOCKING=0",
      "0 is the default anyway, so this is a no-op; ASCEND_LAUNCH_BLOCKING is the NPU name"),
    C("--attn-impl fa \\", "attention_kernel", "replace", True, "    --attn-impl torch \\",
      "selects yunchang's FA2 kernels, which are not installable on NPU"),
  ])
