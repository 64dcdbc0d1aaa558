"""Labels for probe62 (hand-written synthetic upstream files; see ../README.md).

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

# --------------------------------------------------------------------------------------------------
# fairseq
# --------------------------------------------------------------------------------------------------

E("fs_fp16_optimizer", "fairseq/optim/fp16_optimizer.py", "explicit_replacement",
  "facebookresearch/fairseq optim/fp16_optimizer.py (FP16Optimizer / MemoryEfficientFP16Optimizer, flat fp32 master params)", [
    C("devices = [torch.cuda.current_device()]", "torch_cuda_api", R, True,
      "devices = [torch.npu.current_device()]",
      "torch.cuda.current_device() raises on a host without CUDA; the flat fp32 master copy is keyed by the "
      "device index, which the p.device.index lookups below already handle for NPU tensors"),
])

E("fs_amp_optimizer", "fairseq/optim/amp_optimizer.py", "explicit_replacement",
  "facebookresearch/fairseq optim/amp_optimizer.py (torch.cuda.amp GradScaler) + the task-side autocast of train_step", [
    C("self._grad_scaler = torch.cuda.amp.GradScaler(**amp_kwargs)", "amp", R, True,
      "self._grad_scaler = torch.npu.amp.GradScaler(**amp_kwargs)",
      "the CUDA GradScaler is inactive for NPU tensors (--amp would run with no loss scaling)"),
    C("with torch.cuda.amp.autocast(enabled=(isinstance(optimizer, AMPOptimizer))):", "amp", R, True,
      "with torch.autocast(device_type=\"npu\", enabled=isinstance(optimizer, AMPOptimizer)):",
      "CUDA autocast does not cast NPU ops: --amp silently trains in fp32"),
])

E("fs_adam", "fairseq/optim/adam.py", "explicit_replacement",
  "facebookresearch/fairseq optim/adam.py (FairseqAdam picking apex/fused_adam_cuda FusedAdam when CUDA is present)", [
    C("and torch.cuda.is_available()", "fused_optimizer", B, False,
      "and torch.cuda.is_available()\n        ) or (hasattr(torch, 'npu') and torch.npu.is_available())  # -> torch_npu.optim.NpuFusedAdamW",
      "performance only: on NPU get_fused_adam_class() returns None (no fused_adam_cuda / apex CUDA build) and the "
      "pure-PyTorch fairseq Adam (AdamW semantics) is used, which is correct; an NPU branch could use NpuFusedAdamW"),
])

E("fs_distributed_utils", "fairseq/distributed/utils.py", "explicit_replacement",
  "facebookresearch/fairseq distributed/utils.py (init-method inference, spawn, all_gather_list byte buffer, broadcast_object)", [
    C("torch.cuda.device_count(), cfg.distributed_world_size", "torch_cuda_api", R, True,
      "torch.npu.device_count(), cfg.distributed_world_size",
      "device_count() is 0 without CUDA, so distributed_num_procs becomes 0 and spawn starts no workers"),
    C("=torch.cuda.set_device(cfg.device_id)", "torch_cuda_api", R, True,
      "torch.npu.set_device(cfg.device_id)",
      "no-spawn launch path: binds the process to its device"),
    C("cfg.device_id = cfg.distributed_rank % torch.cuda.device_count()", "torch_cuda_api", R, True,
      "cfg.device_id = cfg.distributed_rank % torch.npu.device_count()",
      "torch.distributed.launch path: modulo by 0 raises ZeroDivisionError on an NPU host"),
    C("=gpus_per_node = torch.cuda.device_count()", "torch_cuda_api", R, True,
      "gpus_per_node = torch.npu.device_count()",
      "SLURM one-task-per-node path: world size would be computed as 0"),
    C("cfg.distributed_world_size <= torch.cuda.device_count()", "torch_cuda_api", R, True,
      "cfg.distributed_world_size <= torch.npu.device_count()",
      "single-node init asserts world size <= 0 and fails"),
    C("but have {torch.cuda.device_count()} available devices", "torch_cuda_api", R, False,
      "), f\"world size is {cfg.distributed_world_size} but have {torch.npu.device_count()} available devices\"",
      "assertion message only (evaluated when the assert fires)"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", R, False,
      "if torch.npu.is_available():",
      "only guards the dummy all-reduce that warms up the communicator; skipped on NPU, HCCL initialises lazily"),
    C("dist.all_reduce(torch.zeros(1).cuda())", "tensor_to_device", R, False,
      "dist.all_reduce(torch.zeros(1).npu())",
      "warm-up only; never reached unchanged on NPU (guard above is False)"),
    C("if torch.cuda.is_available() and not cfg.common.cpu and not cfg.common.tpu:", "torch_cuda_api", R, True,
      "if torch.npu.is_available() and not cfg.common.cpu and not cfg.common.tpu:",
      "spawned workers never bind a device: every rank lands on npu:0 and HCCL init fails / collides"),
    C("torch.cuda.set_device(cfg.distributed_training.device_id)", "torch_cuda_api", R, True,
      "torch.npu.set_device(cfg.distributed_training.device_id)", ""),
    C("all_gather_list._buffer = torch.cuda.ByteTensor(buffer_size)", "torch_cuda_api", R, True,
      "all_gather_list._buffer = torch.zeros(buffer_size, dtype=torch.int32, device=\"npu\")",
      "legacy CUDA tensor type fails without CUDA; Ascend's 2.7.1 list allows all_reduce only for "
      "bf16/fp16/fp32/int32/int64/bool, so the uint8 buffer should also be widened (or use all_gather_object)"),
    C("all_gather_list._cpu_buffer = torch.ByteTensor(max_size).pin_memory()", "pin_memory", R, False,
      "all_gather_list._cpu_buffer = torch.ByteTensor(max_size).pin_memory(device=\"npu\")",
      "unconfirmed: whether a bare Tensor.pin_memory() pins for the NPU when torch_npu is loaded"),
    C("cpu_data[k] = torch.tensor(t, dtype=torch.double)", "unsupported_op_workaround", R, True,
      "cpu_data[k] = torch.tensor(t, dtype=torch.float32)",
      "the buffer is moved to the NPU and all-reduced; fp64 is not in all_reduce's supported dtypes on Ascend"),
    C("cpu_data[k] = t.to(dtype=torch.double)", "unsupported_op_workaround", R, True,
      "cpu_data[k] = t.to(dtype=torch.float32)", "fp64 all_reduce, see above"),
    C("device_data[k] = t.to(dtype=torch.double)", "unsupported_op_workaround", R, True,
      "device_data[k] = t.to(dtype=torch.float32)", "fp64 all_reduce, see above"),
    C('if torch.distributed.get_backend(group) == "nccl":', "dist_backend", R, True,
      'if torch.distributed.get_backend(group) in ("nccl", "hccl"):',
      "backend-string comparison (not rewritten by transfer_to_npu): with hccl the object is broadcast from a CPU "
      "tensor, which HCCL cannot send"),
    C('dist_device = torch.device("cuda")', "device_type", R, True,
      'dist_device = torch.device("npu")', ""),
])

E("fs_trainer", "fairseq/trainer.py", "explicit_replacement",
  "facebookresearch/fairseq trainer.py (self.cuda device selection, grad-norm buffer, OOM recovery, gb_free logging)", [
    C("self.cuda = torch.cuda.is_available() and not cfg.common.cpu and not self.tpu", "torch_cuda_api", R, True,
      "self.cuda = torch.npu.is_available() and not cfg.common.cpu and not self.tpu",
      "False on an NPU host: the whole training silently runs on CPU"),
    C('self.device = torch.device("cuda")', "device_type", R, True, 'self.device = torch.device("npu")', ""),
    C("self.last_device = torch.device(", "device_type", R, False,
      "self.last_device = torch.device(\"npu\", cfg.distributed_training.pipeline_devices[-1])",
      "torch.device(int) means a CUDA device; only with --pipeline-model-parallel"),
    C("self._grad_norm_buf = torch.cuda.DoubleTensor(self.data_parallel_world_size)", "torch_cuda_api", R, True,
      "self._grad_norm_buf = torch.zeros(self.data_parallel_world_size, dtype=torch.float32, device=self.device)",
      "CUDA tensor type, and the buffer is all-reduced: fp64 is not an HCCL all_reduce dtype on Ascend"),
    C("if self.cuda and torch.cuda.get_device_capability(0)[0] < 7:", "device_capability_check", R, True,
      "if self.cuda and False:  # no compute-capability notion on Ascend",
      "once self.cuda is ported, get_device_capability() returns None on NPU and [0] raises TypeError"),
    C("if self.cuda and torch.cuda.get_device_capability(0)[0] >= 7:", "device_capability_check", R, True,
      "if self.cuda:", "same as above on the fp32 path"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "cache release after the first step; no-op without CUDA"),
    C("torch.cuda.empty_cache()  # free the cached blocks before retrying", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()  # free the cached blocks before retrying", "OOM recovery; no-op without CUDA"),
    C("grad_norm = torch.tensor(0.0).cuda()", "tensor_to_device", R, True,
      "grad_norm = torch.tensor(0.0, device=self.device)",
      "fp16 loss-scale overflow path (hit routinely at the start of --fp16 training)"),
    C("gb_used = torch.cuda.max_memory_allocated() / 1024 / 1024 / 1024", "torch_cuda_api", R, False,
      "gb_used = torch.npu.max_memory_allocated() / 1024 / 1024 / 1024", "logging only (gb_free metric)"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, False,
      "torch.npu.reset_peak_memory_stats()", "logging only"),
    C("with torch.cuda.amp.autocast(enabled=self.cfg.common.amp):", "amp", R, True,
      "with torch.autocast(device_type=\"npu\", enabled=self.cfg.common.amp):",
      "validation under --amp would run in fp32"),
    C('if torch.cuda.is_available() and hasattr(torch.cuda, "memory_summary"):', "torch_cuda_api", R, False,
      "if torch.npu.is_available():", "OOM diagnostics only"),
    C("for device_idx in range(torch.cuda.device_count()):", "torch_cuda_api", R, False,
      "for device_idx in range(torch.npu.device_count()):", "OOM diagnostics only"),
    C("logger.warning(torch.cuda.memory_summary(device=device_idx))", "torch_cuda_api", R, False,
      "logger.warning(torch.npu.memory_summary(device=device_idx))", "OOM diagnostics only"),
])

E("fs_utils", "fairseq/utils.py", "explicit_replacement",
  "facebookresearch/fairseq utils.py (move_to_cuda, amp_C multi_tensor_l2norm clip_grad_norm_, CudaEnvironment)", [
    C("device = device or torch.cuda.current_device()", "torch_cuda_api", R, True,
      "device = device or torch.npu.current_device()",
      "every batch goes through move_to_cuda; current_device() raises without CUDA and an int index means cuda:N"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", R, True,
      "if torch.npu.is_available():",
      "amp_C is missing on NPU so this fallback is the live path: unchanged it computes every grad norm on the CPU "
      "(host round-trip per parameter)"),
    C("=device = torch.cuda.current_device()", "torch_cuda_api", R, True,
      "device = torch.npu.current_device()", "reached once the guard above is ported"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed(seed)",
      "torch.manual_seed above already seeds the NPU generator; this call is lazily queued and harmless"),
    C("cuda_rng_state = torch.cuda.get_rng_state()", "torch_cuda_api", R, True,
      "npu_rng_state = torch.npu.get_rng_state()", "raises on a host without CUDA"),
    C("torch.cuda.set_rng_state(cuda_rng_state)", "torch_cuda_api", R, True,
      "torch.npu.set_rng_state(npu_rng_state)",
      "a CUDA set_rng_state is only queued: the NPU RNG would silently not be restored after with_torch_seed"),
    C("cur_device = torch.cuda.current_device()", "torch_cuda_api", R, True,
      "cur_device = torch.npu.current_device()", "CudaEnvironment is built by the trainer once self.cuda is ported"),
    C('prop = torch.cuda.get_device_properties("cuda:{}".format(cur_device))', "torch_cuda_api", R, True,
      'prop = torch.npu.get_device_properties("npu:{}".format(cur_device))', ""),
    C("self.major = prop.major", "device_capability_check", R, True,
      "self.major = getattr(prop, \"major\", 0)",
      "NPU device properties only carry name/total_memory/L2_cache_size/cube_core_num/vector_core_num"),
    C("self.minor = prop.minor", "device_capability_check", R, True,
      "self.minor = getattr(prop, \"minor\", 0)", "same as above"),
])

E("fs_generate", "fairseq_cli/generate.py", "explicit_replacement",
  "facebookresearch/fairseq fairseq_cli/generate.py (use_cuda flag, model.cuda())", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "entry script: loads the NPU backend before torch.npu is used"),
    C("use_cuda = torch.cuda.is_available() and not cfg.common.cpu", "torch_cuda_api", R, True,
      "use_cuda = torch.npu.is_available() and not cfg.common.cpu",
      "False on an NPU host: beam search silently runs on the CPU"),
    C("=model.cuda()", "tensor_to_device", R, True, "model.npu()", ""),
])

E("fs_bart_summarize", "examples/bart/summarize.py", "explicit_replacement",
  "facebookresearch/fairseq examples/bart/summarize.py (bart.cuda().half() behind is_available)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry script"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", R, True, "if torch.npu.is_available():",
      "False on NPU: summarisation silently runs on the CPU in fp32"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", R, True, "torch.npu.set_device(args.gpu)", ""),
    C("bart = bart.cuda().half()", "tensor_to_device", R, True, "bart = bart.npu().half()", ""),
    C('if device.type == "cuda":', "device_type", R, False, 'if device.type == "npu":',
      "speed report only: the peak-memory line is skipped on NPU"),
    C("torch.cuda.max_memory_allocated(device) / 2**30", "torch_cuda_api", R, False,
      "torch.npu.max_memory_allocated(device) / 2**30", "logging only"),
])

E("fs_train_sh", "examples/translation/train_transformer_wmt16.sh", "explicit_replacement",
  "fairseq 'Scaling NMT' WMT'16 En-De recipe as a staged shell script (apex build, fairseq-train/-generate)", [
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "the NPU runtime reads ASCEND_RT_VISIBLE_DEVICES; CUDA_VISIBLE_DEVICES does not restrict NPUs"),
    C("export NCCL_DEBUG=WARN", "env_var", X, False, None, "NCCL-only knob, ignored by HCCL"),
    C("export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}", "env_var", R, False,
      "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
      "HCCL picks the host NIC by its own priority otherwise; matters for multi-node only"),
    C("=import torch", "import_torch_npu", A, False, "import torch_npu",
      "heredoc env check; torch_npu >= 2.5.1 autoloads, explicit import recommended"),
    C('assert torch.cuda.is_available(), "this recipe needs GPUs"', "torch_cuda_api", R, True,
      'assert torch.npu.is_available(), "this recipe needs NPUs"', "fails on an NPU host and aborts the stage"),
    C('print("visible devices:", torch.cuda.device_count())', "torch_cuda_api", R, False,
      'print("visible devices:", torch.npu.device_count())', "informational"),
    C("nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv", "torch_cuda_api", R, True,
      "npu-smi info", "command not found under set -e aborts the script"),
    C('--global-option="--cuda_ext" --global-option="--deprecated_fused_adam" \\', "custom_cuda_extension", R, True,
      "# Ascend apex: git clone https://gitee.com/ascend/apex && bash scripts/build.sh --python=3.8",
      "NVIDIA apex --cuda_ext needs nvcc; the build fails under set -e"),
    C('--distributed-world-size "$NUM_GPUS" --distributed-backend nccl \\', "dist_backend", R, True,
      '--distributed-world-size "$NUM_NPUS" --distributed-backend hccl \\',
      "passed straight to init_process_group"),
    C('CUDA_VISIBLE_DEVICES=0 fairseq-generate "$DATA" \\', "env_var", R, True,
      'ASCEND_RT_VISIBLE_DEVICES=0 fairseq-generate "$DATA" \\', ""),
])

# --------------------------------------------------------------------------------------------------
# OpenNMT-py
# --------------------------------------------------------------------------------------------------

E("onmt_model_builder", "onmt/model_builder.py", "explicit_replacement",
  "OpenNMT/OpenNMT-py onmt/model_builder.py (device chosen from -gpu_ranks / -gpu, not from availability)", [
    C('device = torch.device("cuda", device_id)', "device_type", R, True, 'device = torch.device("npu", device_id)',
      "translation/test-model loading with -gpu N"),
    C('device = torch.device("cuda", gpu_id)', "device_type", R, True, 'device = torch.device("npu", gpu_id)', ""),
    C('=device = torch.device("cuda")', "device_type", R, True, 'device = torch.device("npu")',
      "training path (gpu_ranks set, gpu_id None)"),
])

E("onmt_optimizers", "onmt/utils/optimizers.py", "explicit_replacement",
  "OpenNMT/OpenNMT-py onmt/utils/optimizers.py (vendored legacy apex FusedAdam, apex FP16_Optimizer, torch.cuda.amp GradScaler)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "the replacement optimizer lives in torch_npu.optim"),
    C("optimizer = FusedAdam(params, lr=opt.learning_rate, betas=betas)", "fused_optimizer", R, True,
      "optimizer = torch_npu.optim.NpuFusedAdam(params, lr=opt.learning_rate, betas=betas)",
      "the vendored FusedAdam imports fused_adam_cuda (apex --deprecated_fused_adam CUDA kernel)"),
    C("optimizer = apex.contrib.optimizers.FP16_Optimizer(", "fused_optimizer", R, False,
      "# legacy apex FP16_Optimizer dropped: use the amp GradScaler path",
      "unconfirmed whether Ascend's apex patch ships apex.contrib.optimizers; the amp path is the safe port"),
    C("from torch.cuda.amp import GradScaler", "amp", R, True, "from torch_npu.npu.amp import GradScaler",
      "CUDA GradScaler is inactive for NPU tensors: fp16 without loss scaling"),
    C('fused_adam_cuda = importlib.import_module("fused_adam_cuda")', "custom_cuda_extension", X, False, None,
      "CUDA extension import; dead code once the call site uses NpuFusedAdam, fails if reached"),
])

E("onmt_trainer", "onmt/trainer.py", "explicit_replacement",
  "OpenNMT/OpenNMT-py onmt/trainer.py (autocast, 'CUDA out of memory' batch skipping)", [
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "multi-device validation; raises without CUDA"),
    C("with torch.cuda.amp.autocast(self.optim.amp):", "amp", R, True,
      "with torch.autocast(device_type=\"npu\", enabled=self.optim.amp):", "validation autocast"),
    C("with torch.cuda.amp.autocast(enabled=self.optim.amp):", "amp", R, True,
      "with torch.autocast(device_type=\"npu\", enabled=self.optim.amp):",
      "model_dtype fp16 (amp) silently trains in fp32 with CUDA autocast"),
    C('if "CUDA out of memory" in trace_content:', "torch_cuda_api", R, True,
      'if "out of memory" in trace_content:',
      "the NPU allocator reports 'NPU out of memory': the batch-skipping recovery never triggers and training dies"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "OOM recovery"),
])

E("onmt_rnn_encoder", "onmt/encoders/rnn_encoder.py", "explicit_replacement",
  "OpenNMT/OpenNMT-py onmt/encoders/rnn_encoder.py + utils/rnn_factory (packed LSTM/GRU encoder)", [
    C("rnn = getattr(nn, rnn_type)(**kwargs)", "unsupported_op_workaround", R, False,
      "rnn = getattr(nn, rnn_type)(**{**kwargs, 'dropout': 0.0 if rnn_type == 'GRU' else kwargs['dropout']})",
      "only for -rnn_type GRU (nn.GRU dropout ✘) or RNN (nn.RNN ✘) in Ascend's 2.7.1 list; LSTM (default) is ✔; "
      "failure mode unconfirmed"),
    C("packed_emb = pack(emb, src_len_list, batch_first=True, enforce_sorted=False)", "unsupported_op_workaround", R, True,
      "packed_emb = emb  # no PackedSequence on NPU: run padded and mask",
      "pack_padded_sequence is ✘ in Ascend's 2.7.1 list (an aten _pack_padded_sequence kernel exists, so this may "
      "only be slow)"),
    C("enc_out = unpack(enc_out, batch_first=True)[0]", "unsupported_op_workaround", R, True,
      "enc_out = enc_out * sequence_mask(src_len).unsqueeze(-1)",
      "pad_packed_sequence is ✘ in the same list"),
])

E("onmt_sru", "onmt/models/sru.py", "kernel_rewrite",
  "OpenNMT/OpenNMT-py onmt/models/sru.py (SRU recurrence as CUDA C compiled with NVRTC via pynvrtc + cupy)", [
    C('subprocess.check_output("pip freeze | grep -w cupy", shell=True)', "custom_cuda_extension", X, True, None,
      "cupy has no Ascend build: the requirement check aborts -rnn_type SRU"),
    C('subprocess.check_output("pip freeze | grep -w pynvrtc", shell=True)', "custom_cuda_extension", X, True, None,
      "NVRTC binding, CUDA only"),
    C("if torch.cuda.is_available() is False:", "torch_cuda_api", R, True,
      "if not torch.npu.is_available():", "raises 'Using SRU requires pytorch built with cuda.'"),
    C('pattern = re.compile(".*cuda/lib.*")', "env_var", X, True, None,
      "LD_LIBRARY_PATH must contain a CUDA lib dir or the check aborts"),
    C("from cupy.cuda import function", "custom_cuda_extension", X, True, None, "no cupy on Ascend"),
    C("from pynvrtc.compiler import Program", "custom_cuda_extension", X, True, None, ""),
    C('device = torch.device("cuda")', "device_type", R, True, 'device = torch.device("npu")', ""),
    C('sru_prog = Program(SRU_CODE.encode("utf-8"), "sru_prog.cu".encode("utf-8"))', "custom_cuda_extension", R, True,
      "# SRU recurrence rewritten as a torch loop over time steps (or an Ascend C kernel)",
      "runtime CUDA C compilation of sru_fwd / sru_bwd"),
    C("SRU_STREAM = stream(ptr=torch.cuda.current_stream().cuda_stream)", "torch_cuda_api", X, True, None,
      "raw CUDA stream handle handed to cupy"),
    C("=FUNC(", "custom_cuda_extension", R, True,
      "h, c = sru_recurrence_torch(u, x, bias, init_, mask_h, self.activation_type, self.bidirectional)",
      "kernel launch with grid/block/stream"),
])

E("onmt_distributed", "onmt/utils/distributed.py", "explicit_replacement",
  "OpenNMT/OpenNMT-py onmt/utils/distributed.py (+ spawn/ErrorHandler launcher, configure_process)", [
    C("all_gather_list._in_buffer = torch.cuda.ByteTensor(max_size)", "torch_cuda_api", R, True,
      "all_gather_list._in_buffer = torch.zeros(max_size, dtype=torch.int8, device=\"npu\")",
      "CUDA tensor type; uint8 is also not in Ascend's all_gather dtype list (int8 is)"),
    C("torch.cuda.ByteTensor(max_size) for i in range(world_size)", "torch_cuda_api", R, True,
      "torch.zeros(max_size, dtype=torch.int8, device=\"npu\") for i in range(world_size)", ""),
    C("torch.distributed.all_gather(out_buffers, in_buffer.cuda())", "tensor_to_device", R, True,
      "torch.distributed.all_gather(out_buffers, in_buffer.npu())", ""),
    C("torch.cuda.set_device(device_id)", "torch_cuda_api", R, True, "torch.npu.set_device(device_id)",
      "every spawned process would otherwise use npu:0"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed(seed)",
      "torch.manual_seed above already seeds the NPU generator"),
])

E("onmt_config", "config/wmt14_en_de_transformer.yaml", "explicit_replacement",
  "OpenNMT-py WMT14 En-De Transformer-base YAML config (gpu_ranks, fusedadam + fp16)", [
    C("gpu_backend: nccl", "dist_backend", R, True, "gpu_backend: hccl", "passed to init_process_group"),
    C('optim: "fusedadam"', "fused_optimizer", R, True, 'optim: "adam"',
      "fusedadam + fp16 takes the legacy path (fused_adam_cuda kernel, apex FP16_Optimizer, model.half()); "
      "adam takes the amp GradScaler path"),
])

# --------------------------------------------------------------------------------------------------
# AllenNLP
# --------------------------------------------------------------------------------------------------

E("allennlp_nn_util", "allennlp/nn/util.py", "device_branch_or_abstraction",
  "allenai/allennlp nn/util.py (int cuda_device convention, get_device_of/get_range_vector, peak_gpu_memory)", [
    C("return torch.device(device)", "device_type", R, True,
      'return torch.device("npu", device)',
      "AllenNLP's int device convention: torch.device(0) is cuda:0"),
    C("if not tensor.is_cuda:", "device_type", R, True,
      "if tensor.device.type == \"cpu\":",
      "NPU tensors report is_cuda False: -1 sends get_range_vector to the CPU and index_select then mixes devices"),
    C("return torch.cuda.LongTensor(size, device=device).fill_(1).cumsum(0) - 1", "torch_cuda_api", R, True,
      'return torch.arange(0, size, dtype=torch.long, device=torch.device("npu", device))',
      "reached for every sort_batch_by_length / batched_index_select once get_device_of is ported"),
    C('device = int_to_device(-1 if dist.get_backend() != "nccl" else torch.cuda.current_device())', "dist_backend", R, True,
      'device = int_to_device(-1 if dist.get_backend() not in ("nccl", "hccl") else torch.npu.current_device())',
      "with hccl the value is all-reduced from a CPU tensor, which HCCL rejects"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", R, False, "if not torch.npu.is_available():",
      "memory metrics only: returns {} on NPU"),
    C("=device = torch.cuda.current_device()", "torch_cuda_api", R, False,
      "device = torch.npu.current_device()", "memory metrics only"),
    C('if dist.get_backend() != "nccl":', "dist_backend", R, False, 'if dist.get_backend() not in ("nccl", "hccl"):',
      "memory metrics only"),
    C("peak_bytes = torch.cuda.max_memory_allocated(device)", "torch_cuda_api", R, False,
      "peak_bytes = torch.npu.max_memory_allocated(device)", "memory metrics only"),
    C("results_dict = {0: torch.cuda.max_memory_allocated()}", "torch_cuda_api", R, False,
      "results_dict = {0: torch.npu.max_memory_allocated()}", "memory metrics only"),
    C("torch.cuda.reset_max_memory_allocated(device)", "torch_cuda_api", R, False,
      "torch.npu.reset_max_memory_allocated(device)", "memory metrics only"),
])

E("allennlp_trainer", "allennlp/training/gradient_descent_trainer.py", "explicit_replacement",
  "allenai/allennlp training/gradient_descent_trainer.py (from torch.cuda import amp, cuda.device_count default device)", [
    C("from torch.cuda import amp", "amp", R, True, "from torch import amp",
      "module alias: amp.GradScaler / amp.autocast below are the CUDA ones"),
    C("self._scaler = amp.GradScaler()", "amp", R, True, 'self._scaler = amp.GradScaler("npu")',
      "use_amp: no loss scaling on NPU otherwise"),
    C("with amp.autocast(self._use_amp):", "amp", R, True,
      'with amp.autocast("npu", enabled=self._use_amp):', "use_amp silently trains in fp32"),
    C("if cuda.device_count() > 0:", "torch_cuda_api", R, True,
      "if torch.npu.device_count() > 0:",
      "imported as `from torch import cuda`: 0 on NPU, so cuda_device defaults to -1 and training runs on the CPU"),
    C("check_for_gpu(cuda_device)", "torch_cuda_api", R, True, "check_for_npu(cuda_device)",
      "allennlp.common.checks.check_for_gpu raises ConfigurationError when torch.cuda.device_count() == 0 "
      "for any non-negative device"),
    C("model = model.cuda(cuda_device)", "tensor_to_device", R, True, "model = model.npu(cuda_device)", ""),
])

E("allennlp_jsonnet", "training_config/bidaf_elmo.jsonnet", "explicit_replacement",
  "allennlp-models bidaf_elmo.jsonnet (GRU span-end encoder, FairScale FSDP accelerator, use_amp)", [
    C('"type": "gru",', "unsupported_op_workaround", R, True, '"type": "lstm",',
      "2-layer GRU with dropout 0.2: nn.GRU's dropout argument is ✘ in Ascend's 2.7.1 list"),
    C('"type": "fairscale_fsdp",', "distributed_framework", R, False, '"type": "torch",',
      "unconfirmed: FairScale FSDP on NPU (AllenNLP's accelerator assumes CUDA devices)"),
])

# --------------------------------------------------------------------------------------------------
# ELECTRA / T5 / BART fine-tuning scripts
# --------------------------------------------------------------------------------------------------

E("electra_run_glue", "examples/run_glue_electra.py", "explicit_replacement",
  "huggingface/transformers 2.x examples/run_glue.py adapted to ELECTRA (apex amp, DataParallel, local_rank)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry script"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(args.seed)",
      "torch.manual_seed already seeds the NPU generator"),
    C("from apex import amp", "amp", R, False, "from apex import amp  # Ascend apex patch (O1/O2 on NPU)",
      "works with Ascend's apex patch (amp O1/O2, dynamic loss scale); otherwise switch to torch.npu.amp — "
      "unconfirmed parity for this flow"),
    C("=model = torch.nn.DataParallel(model)", "distributed_framework", R, True,
      "pass  # DataParallel is unsupported on NPU: launch with torchrun + DDP instead",
      "torch.nn.DataParallel ✘; reached whenever more than one device is visible"),
    C("model = torch.nn.DataParallel(model)  # replicate for eval", "distributed_framework", R, True,
      "pass  # no DataParallel on NPU", "same, evaluation path"),
    C('device = torch.device("cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu")', "device_type", R, True,
      'device = torch.device("npu" if torch.npu.is_available() and not args.no_cuda else "cpu")',
      "falls back to CPU silently"),
    C("args.n_gpu = 0 if args.no_cuda else torch.cuda.device_count()", "torch_cuda_api", R, True,
      "args.n_gpu = 0 if args.no_cuda else torch.npu.device_count()",
      "n_gpu drives batch size and DataParallel; 0 on NPU"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(args.local_rank)", ""),
    C('device = torch.device("cuda", args.local_rank)', "device_type", R, True,
      'device = torch.device("npu", args.local_rank)', ""),
    C('torch.distributed.init_process_group(backend="nccl")', "dist_backend", R, True,
      'torch.distributed.init_process_group(backend="hccl")', ""),
])

E("t5_train", "t5_summarization/train_t5.py", "explicit_replacement",
  "popular 'T5 fine-tuning with PyTorch' notebook as a script (from torch import cuda, bf16 autocast, model.parallelize)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry script"),
    C("device = 'cuda' if cuda.is_available() else 'cpu'", "device_type", R, True,
      "device = 'npu' if torch.npu.is_available() else 'cpu'",
      "aliased `from torch import cuda`: silently trains on the CPU"),
    C("if args.bf16 and torch.cuda.is_bf16_supported():", "device_capability_check", R, True,
      "if args.bf16 and torch.npu.is_bf16_supported():",
      "returns False without CUDA, so --bf16 silently degrades to fp16/fp32; T5 is known to overflow in fp16"),
    C("with torch.cuda.amp.autocast(enabled=amp_dtype is not None, dtype=amp_dtype or torch.float16):", "amp", R, True,
      "with torch.autocast(device_type=\"npu\", enabled=amp_dtype is not None, dtype=amp_dtype or torch.float16):",
      "CUDA autocast does not cast NPU ops"),
    C("mem = cuda.max_memory_allocated() / 2**30 if cuda.is_available() else 0.0", "torch_cuda_api", R, False,
      "mem = torch.npu.max_memory_allocated() / 2**30 if torch.npu.is_available() else 0.0", "logging only"),
    C("if args.model_parallel and cuda.device_count() > 1:", "torch_cuda_api", R, False,
      "if args.model_parallel and torch.npu.device_count() > 1:",
      "opt-in path; unchanged it is skipped on NPU (device_count 0)"),
    C("model.parallelize(device_map)", "distributed_framework", R, False,
      "model = model.to(device)  # T5 naive parallelize() hard-codes 'cuda:N'",
      "transformers' deprecated T5 parallelize() builds 'cuda:' + str(idx) devices; unconfirmed on NPU"),
    C("scaler = torch.cuda.amp.GradScaler() if amp_dtype == torch.float16 else None", "amp", R, True,
      "scaler = torch.npu.amp.GradScaler() if amp_dtype == torch.float16 else None", "fp16 without loss scaling otherwise"),
    C("=if cuda.is_available():", "torch_cuda_api", R, False, "if torch.npu.is_available():", "cache release only"),
    C("=cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "cache release only"),
])

E("bart_trainer", "scripts/finetune_bart_xsum.py", "explicit_replacement",
  "BART-large XSum fine-tuning with HF Seq2SeqTrainer (tf32, apex fused AdamW, ddp_backend) + manual beam decoding", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = os.environ.get("CUDA_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7")', "env_var", R, True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = os.environ.get("ASCEND_RT_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7")',
      "CUDA_VISIBLE_DEVICES does not restrict NPUs"),
    C("=import torch", "import_torch_npu", A, False, "import torch_npu",
      "transformers imports torch_npu itself (is_torch_npu_available); explicit import recommended"),
    C('model = model.to("cuda").eval().half()', "device_type", R, True, 'model = model.to("npu").eval().half()', ""),
    C("enc = {k: v.cuda(non_blocking=True) for k, v in enc.items()}", "tensor_to_device", R, True,
      "enc = {k: v.npu(non_blocking=True) for k, v in enc.items()}", ""),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "no-op without CUDA"),
    C("tf32=True,", "device_capability_check", R, True, "tf32=None,",
      "TrainingArguments raises ValueError('--tf32 requires Ampere or a newer GPU arch...') because "
      "is_torch_tf32_available() is False on NPU"),
    C('optim="adamw_apex_fused",', "fused_optimizer", R, True, 'optim="adamw_torch",',
      "needs NVIDIA apex FusedAdam (CUDA); Ascend's apex has NpuFused* instead. transformers' NPU fused AdamW "
      "option name not confirmed in the knowledge base"),
    C('ddp_backend="nccl",', "dist_backend", R, True, 'ddp_backend="hccl",', ""),
    C('logger.info("peak memory %.1f GiB", torch.cuda.max_memory_allocated() / 2**30)', "torch_cuda_api", R, False,
      'logger.info("peak memory %.1f GiB", torch.npu.max_memory_allocated() / 2**30)', "logging only (prints 0)"),
])

# --------------------------------------------------------------------------------------------------
# Megatron-style BERT pretraining
# --------------------------------------------------------------------------------------------------

E("meg_fused_kernels", "megatron/fused_kernels/__init__.py", "kernel_rewrite",
  "NVIDIA/Megatron-LM megatron/fused_kernels/__init__.py (JIT cpp_extension.load of softmax / layer-norm .cu kernels)", [
    C('os.environ["TORCH_CUDA_ARCH_LIST"] = ""', "env_var", X, False, None, "harmless on NPU; goes with the nvcc build"),
    C("cpp_extension.CUDA_HOME)", "custom_cuda_extension", X, True, None,
      "CUDA_HOME is None without a CUDA toolkit: None + '/bin/nvcc' raises TypeError in load()"),
    C("return cpp_extension.load(", "custom_cuda_extension", X, True, None,
      "nvcc JIT build of the fused kernels; cpp_extension.load is ✘ on A2/A3. load() becomes a no-op and the "
      "kernels are replaced by torch_npu ops (see fused_softmax / fused_layer_norm)"),
    C('raw_output = subprocess.check_output([cuda_dir + "/bin/nvcc", "-V"],', "custom_cuda_extension", X, True, None,
      "no nvcc on an Ascend host"),
    C("import scaled_upper_triang_masked_softmax_cuda", "custom_cuda_extension", X, False, None,
      "test helper only"),
    C("import scaled_masked_softmax_cuda", "custom_cuda_extension", X, False, None, "test helper only"),
    C("import fused_mix_prec_layer_norm_cuda", "custom_cuda_extension", X, False, None, "test helper only"),
])

E("meg_fused_softmax", "megatron/model/fused_softmax.py", "kernel_rewrite",
  "NVIDIA/Megatron-LM megatron/model/fused_softmax.py (FusedScaleMaskSoftmax over the scaled_*_softmax_cuda kernels)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "the rewrite calls torch_npu.npu_scaled_masked_softmax"),
    C("softmax_results = scaled_upper_triang_masked_softmax_cuda.forward(", "custom_cuda_extension", R, True,
      "softmax_results = torch_npu.npu_scaled_masked_softmax(inputs, causal_mask, scale, fixed_triu_mask=True)",
      "causal (GPT-style) path"),
    C("input_grads = scaled_upper_triang_masked_softmax_cuda.backward(", "custom_cuda_extension", R, True,
      "input_grads = torch_npu.npu_scaled_masked_softmax_backward(output_grads, softmax_results, causal_mask, scale_t[0], True)",
      ""),
    C("softmax_results = scaled_masked_softmax_cuda.forward(inputs, mask, scale_t[0])", "custom_cuda_extension", R, True,
      "softmax_results = torch_npu.npu_scaled_masked_softmax(inputs, mask, scale_t[0], False)",
      "BERT padding-mask path"),
    C("input_grads = smsc.backward(", "custom_cuda_extension", R, True,
      "input_grads = torch_npu.npu_scaled_masked_softmax_backward(output_grads, softmax_results, mask, scale_t[0], False)",
      ""),
    C("return scaled_masked_softmax_cuda.get_batch_per_block(sq, sk, b, np)", "custom_cuda_extension", R, True,
      "return 1  # no CUDA warp/block tiling constraint for the NPU op",
      "called from is_kernel_available on every fp16 forward: ImportError on NPU even before the kernel"),
])

E("meg_fused_layer_norm", "megatron/model/fused_layer_norm.py", "kernel_rewrite",
  "NVIDIA/Megatron-LM megatron/model/fused_layer_norm.py (MixedFusedLayerNorm over fused_mix_prec_layer_norm_cuda)", [
    C("fused_mix_prec_layer_norm_cuda = importlib.import_module(", "custom_cuda_extension", X, True, None,
      "module built by fused_kernels.load(); ImportError on NPU when any transformer layer is constructed"),
    C("return FusedLayerNormAffineFunction.apply(", "custom_cuda_extension", R, True,
      "return torch.nn.functional.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)",
      "native layer_norm has an NPU kernel"),
])

E("meg_mpu_random", "megatron/mpu/random.py", "explicit_replacement",
  "NVIDIA/Megatron-LM megatron/mpu/random.py (CudaRNGStatesTracker, _lazy_call RNG restore, activation checkpointing)", [
    C("from torch.cuda import _lazy_call, device as device_ctx_manager", "torch_cuda_api", R, True,
      "from torch_npu.npu import _lazy_call, device as device_ctx_manager",
      "torch.cuda._lazy_call only queues work for CUDA init, which never happens: RNG states are silently never "
      "restored, so recomputed activations use different dropout masks"),
    C("device = torch.device('cuda')", "device_type", R, True, "device = torch.device('npu')", ""),
    C("device = torch.device('cuda', device)", "device_type", R, True, "device = torch.device('npu', device)", ""),
    C("idx = torch.cuda.current_device()", "torch_cuda_api", R, True, "idx = torch.npu.current_device()", ""),
    C("default_generator = torch.cuda.default_generators[idx]", "torch_cuda_api", R, True,
      "default_generator = torch.npu.default_generators[idx]",
      "named in msFmkTransplt's documented limitations as needing a manual change"),
    C("orig_rng_state = torch.cuda.get_rng_state()", "torch_cuda_api", R, True,
      "orig_rng_state = torch.npu.get_rng_state()", "raises without CUDA"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", R, True, "torch.npu.manual_seed(seed)",
      "the tensor-parallel seed must reach the NPU generator, otherwise all TP ranks draw identical dropout masks"),
    C("=self.states_[name] = torch.cuda.get_rng_state()", "torch_cuda_api", R, True,
      "self.states_[name] = torch.npu.get_rng_state()", ""),
    C("orig_cuda_rng_state = torch.cuda.get_rng_state()", "torch_cuda_api", R, True,
      "orig_cuda_rng_state = torch.npu.get_rng_state()", ""),
    C("advance tracked state", "torch_cuda_api", R, True,
      "self.states_[name] = torch.npu.get_rng_state()", ""),
    C("torch.cuda.manual_seed(data_parallel_seed)", "torch_cuda_api", R, False,
      "torch.npu.manual_seed(data_parallel_seed)",
      "same seed torch.manual_seed already applied in _set_random_seed"),
    C("ctx.fwd_cuda_rng_state = torch.cuda.get_rng_state()", "torch_cuda_api", R, True,
      "ctx.fwd_cuda_rng_state = torch.npu.get_rng_state()", "activation checkpointing (--checkpoint-activations)"),
    C("bwd_cuda_rng_state = torch.cuda.get_rng_state()", "torch_cuda_api", R, True,
      "bwd_cuda_rng_state = torch.npu.get_rng_state()", ""),
])

E("meg_initialize", "megatron/initialize.py", "explicit_replacement",
  "NVIDIA/Megatron-LM megatron/initialize.py (CUDA assert, device binding, fused-kernel compile, nvfuser JIT warm-up)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "(or `import mindspeed.megatron_adaptor`, which patches much of what is labelled in the megatron files)"),
    C("assert torch.cuda.is_available(), 'Megatron requires CUDA.'", "torch_cuda_api", R, True,
      "assert torch.npu.is_available(), 'Megatron requires an NPU.'", ""),
    C("fused_kernels.load(args)  # rank 0 compiles", "custom_cuda_extension", X, True, None,
      "nvcc JIT build; no CUDA toolchain on the NPU host"),
    C("=fused_kernels.load(args)", "custom_cuda_extension", X, True, None, "other ranks load the built kernels"),
    C("device_count = torch.cuda.device_count()", "torch_cuda_api", R, True,
      "device_count = torch.npu.device_count()",
      "0 on NPU: no set_device and, silently, no model-parallel group initialisation"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", R, True, "torch.npu.set_device(device)", ""),
    C("if torch.cuda.device_count() > 0:", "torch_cuda_api", R, True, "if torch.npu.device_count() > 0:",
      "the model-parallel RNG tracker is never seeded; its fork() later raises 'rng state ... is not added'"),
    C("torch._C._jit_set_nvfuser_enabled(True)", "compile_mode", X, False, None,
      "nvFuser TorchScript switch; unconfirmed on current torch/torch_npu (transfer_to_npu disables jit.script)"),
    C("dtype=dtype, device='cuda')  # gelu bias", "device_type", R, True, "dtype=dtype, device='npu')  # gelu bias",
      "JIT warm-up runs in every pretrain"),
    C("dtype=dtype, device='cuda')  # gelu input", "device_type", R, True, "dtype=dtype, device='npu')  # gelu input", ""),
    C("dtype=dtype, device='cuda')  # bda input", "device_type", R, True, "dtype=dtype, device='npu')  # bda input", ""),
    C("dtype=dtype, device='cuda')  # bda residual", "device_type", R, True,
      "dtype=dtype, device='npu')  # bda residual", ""),
    C("bias = torch.rand((args.hidden_size), dtype=dtype, device='cuda').expand_as(residual)", "device_type", R, True,
      "bias = torch.rand((args.hidden_size), dtype=dtype, device='npu').expand_as(residual)", ""),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "no-op without CUDA"),
])

E("meg_optimizer", "megatron/optimizer/optimizer.py", "explicit_replacement",
  "NVIDIA/Megatron-LM megatron/optimizer/optimizer.py (amp_C multi_tensor_scale copies, torch.cuda.*Tensor flags, param.type() checks)", [
    C("from apex.multi_tensor_apply import multi_tensor_applier", "fused_optimizer", X, False, None,
      "unconfirmed whether Ascend's apex patch keeps apex.multi_tensor_apply; unused after the port"),
    C("=import amp_C", "custom_cuda_extension", X, True, None,
      "apex CUDA extension; msFmkTransplt deletes `import amp_C`"),
    C("multi_tensor_applier(amp_C.multi_tensor_scale,", "custom_cuda_extension", R, True,
      "torch._foreach_copy_(that, this)",
      "fp16 master/model param copies every step"),
    C("self.found_inf = torch.cuda.FloatTensor([0.0])", "torch_cuda_api", R, True,
      "self.found_inf = torch.tensor([0.0], dtype=torch.float, device=torch.npu.current_device())", ""),
    C("self._dummy_overflow_buf = torch.cuda.IntTensor([0])", "torch_cuda_api", R, True,
      "self._dummy_overflow_buf = None", "only used by the amp_C copy"),
    C("self._scale_one = torch.cuda.FloatTensor([1.0])", "torch_cuda_api", R, True,
      "self._scale_one = torch.tensor([1.0], dtype=torch.float, device=torch.npu.current_device())", "bf16 without a scaler"),
    C("if param.type() in ['torch.cuda.HalfTensor',", "device_type", R, True,
      "if param.type() in ['torch.npu.HalfTensor',",
      "param.type() is 'torch.npu.HalfTensor' for NPU params: every fp16 param falls through to the TypeError"),
    C("'torch.cuda.BFloat16Tensor']:", "device_type", R, True, "'torch.npu.BFloat16Tensor']:", ""),
    C("elif param.type() == 'torch.cuda.FloatTensor':", "device_type", R, True,
      "elif param.type() == 'torch.npu.FloatTensor':", "fp32 params (LayerNorm kept in fp32 etc.)"),
])

E("meg_optimizer_init", "megatron/optimizer/__init__.py", "explicit_replacement",
  "NVIDIA/Megatron-LM megatron/optimizer/__init__.py (apex FusedAdam / FusedSGD as the base optimizers)", [
    C("from apex.optimizers import FusedAdam as Adam", "fused_optimizer", R, True,
      "from torch_npu.optim import NpuFusedAdamW as Adam",
      "apex FusedAdam is a CUDA kernel (not in Ascend's apex patch); Megatron uses it in AdamW mode"),
    C("from apex.optimizers import FusedSGD as SGD", "fused_optimizer", R, True,
      "from torch_npu.optim import NpuFusedSGD as SGD", ""),
])

E("meg_pretrain_sh", "examples/pretrain_bert_distributed.sh", "explicit_replacement",
  "Megatron-LM examples/pretrain_bert_distributed.sh (NCCL env, nvidia-smi check, fused-kernel flags)", [
    C("export CUDA_DEVICE_MAX_CONNECTIONS=1", "env_var", X, False, None,
      "CUDA launch-queue knob for TP comm/compute ordering; effect on NPU unconfirmed"),
    C("export NCCL_IB_DISABLE=0", "env_var", X, False, None, "NCCL-only"),
    C("export NCCL_IB_GID_INDEX=3", "env_var", X, False, None, "NCCL-only"),
    C("export NCCL_SOCKET_IFNAME=ib0", "env_var", R, False, "export HCCL_SOCKET_IFNAME=ib0",
      "host NIC for HCCL root-info negotiation; multi-node only"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", R, False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "watchdog knob; HCCL's defaults to 1 already"),
    C("nvidia-smi -L | wc -l | xargs -I{} test {} -ge $GPUS_PER_NODE || {", "torch_cuda_api", R, True,
      "npu-smi info -l | grep -c 'NPU ID' | xargs -I{} test {} -ge $NPUS_PER_NODE || {",
      "no nvidia-smi: the count is 0 and the script exits 1"),
    C("nvcc --version | grep release", "custom_cuda_extension", X, False, None, "informational; no nvcc on NPU"),
    C("--distributed-backend nccl \\", "dist_backend", R, True, "--distributed-backend hccl \\",
      "plain torch_npu port; MindSpeed's own recipes keep 'nccl' because it remaps it to HCCL"),
    C("--gradient-accumulation-fusion \\", "custom_cuda_extension", X, True, None,
      "needs the fused_weight_gradient_dense CUDA extension"),
])

# --------------------------------------------------------------------------------------------------
# files around the code
# --------------------------------------------------------------------------------------------------

E("nlp_requirements", "requirements.txt", "explicit_replacement",
  "requirements.txt of a fairseq/Megatron/HF research repo pinned to cu118 wheels", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "device_type", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "x86 hosts take the CPU torch wheel; aarch64 uses plain PyPI torch"),
    C("torch==2.0.1+cu118", "import_torch_npu", R, True, "torch==2.1.0\ntorch-npu==2.1.0.post17",
      "CUDA wheel; torch_npu must match the torch version exactly"),
    C("torchaudio==2.0.2+cu118", "device_type", R, True, "torchaudio==2.1.0", "CUDA wheel"),
    C("triton==2.0.0", "triton_kernel_tuning", R, False, "triton-ascend",
      "nothing in this repo launches Triton kernels directly (xformers' dependency); unconfirmed need"),
    C("xformers==0.0.20", "attention_kernel", X, True, None,
      "no NPU backend; the cu118/torch-2.0.1-pinned wheel also conflicts with the NPU torch"),
    C("flash-attn==1.0.9", "attention_kernel", X, True, None, "cannot be built/installed on NPU"),
    C("deepspeed==0.9.5", "distributed_framework", R, False, "deepspeed>=0.14",
      "unconfirmed which release first ships accelerator/npu_accelerator.py; deepspeed_npu supports 0.9.2"),
    C("cupy-cuda11x>=12.0", "custom_cuda_extension", X, True, None, "no Ascend build of cupy"),
    C("=pynvrtc", "custom_cuda_extension", X, False, None, "ctypes wrapper installs, needs libnvrtc at runtime (SRU only)"),
    C("nvidia-ml-py3", "torch_cuda_api", X, False, None, "NVML has no NPU equivalent; unused at import time"),
    C("pynvml>=11.5.0", "torch_cuda_api", X, False, None, "same"),
])

E("nlp_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "NGC-based training Dockerfile for fairseq + apex + Megatron + OpenNMT (CUDA ext builds)", [
    C("FROM nvcr.io/nvidia/pytorch:23.04-py3", "device_type", R, True,
      "FROM ascendai/pytorch:2.1.0  # CANN + torch + torch_npu base image",
      "NGC CUDA base image"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0;8.0;9.0+PTX"', "env_var", X, False, None, "nvcc-only"),
    C("ENV CUDA_HOME=/usr/local/cuda", "env_var", X, True, None,
      "fairseq's setup.py builds libnat_cuda / ngram_repeat_block_cuda whenever CUDA_HOME is set: the build fails"),
    C("ENV NCCL_DEBUG=WARN", "env_var", X, False, None, "NCCL-only"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", R, False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "NPUs are mounted by the Ascend docker runtime (ASCEND_VISIBLE_DEVICES) or --device /dev/davinciN at run time"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", X, False, None, "nvidia-container-runtime only"),
    C("RUN git clone https://github.com/NVIDIA/apex.git /workspace/apex && \\", "custom_cuda_extension", R, True,
      "RUN git clone https://gitee.com/ascend/apex.git /workspace/apex && \\",
      "Ascend apex patch (scripts/build.sh) instead of NVIDIA apex"),
    C('--global-option="--cpp_ext" --global-option="--cuda_ext" \\', "custom_cuda_extension", R, True,
      "bash scripts/build.sh --python=3.8 && pip install apex/dist/apex-*.whl",
      "apex CUDA extensions need nvcc"),
    C("RUN cd /workspace/fairseq/fairseq/modules/lightconv_layer && python cuda_function_gen.py && python setup.py install && \\",
      "custom_cuda_extension", X, True, None, "lightconv_cuda is a CUDAExtension (.cu)"),
    C("cd /workspace/fairseq/fairseq/modules/dynamicconv_layer && python cuda_function_gen.py && python setup.py install",
      "custom_cuda_extension", X, True, None, "dynamicconv_cuda is a CUDAExtension (.cu)"),
    C("pip install cupy-cuda11x pynvrtc", "custom_cuda_extension", X, True, None, "no Ascend cupy"),
    C('RUN python -c "import torch, apex, amp_C, fused_layer_norm_cuda;', "custom_cuda_extension", R, True,
      'RUN python -c "import torch, torch_npu, apex; print(torch.__version__, torch.npu.is_available())"',
      "amp_C / fused_layer_norm_cuda do not exist on NPU: the image build fails"),
])
