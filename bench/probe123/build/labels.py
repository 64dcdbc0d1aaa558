# Labels for probe123 (Chinese open-source speech stacks: FunASR / WeNet / CosyVoice / GPT-SoVITS).
# One C(...) per upstream line a careful porter would edit for Ascend NPU + torch_npu.
ENTRIES = []
def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}
def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


E("funasr_auto_model", "funasr/auto/auto_model.py", "explicit_replacement",
  "FunASR funasr/auto/auto_model.py (AutoModel.build_model / inference)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "AutoModel is the public entry point; torch.npu only exists once torch_npu is imported (pinned torch < 2.5, no autoload)"),
    C('device = kwargs.get("device", "cuda")', "device_type", "replace", True, 'device = kwargs.get("device", "npu")',
      "default device string; once the availability check is ported, 'cuda' would reach model.to() and fail"),
    C("if not torch.cuda.is_available() or kwargs.get(\"ngpu\", 1) == 0:", "torch_cuda_api", "replace", True,
      'if not torch.npu.is_available() or kwargs.get("ngpu", 1) == 0:',
      "torch.cuda.is_available() is False on an NPU host: silently forces CPU and batch_size=1"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA initialised; NPU cache is not released (memory only)"),
])


E("funasr_train", "funasr/bin/train.py", "explicit_replacement",
  "FunASR funasr/bin/train.py (hydra entry, DDP/FSDP setup, torchrun)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "training entry point launched by torchrun; registers the npu device and HCCL backend"),
    C("from torch.cuda.amp import autocast, GradScaler", "amp", "replace", True,
      "from torch.npu.amp import autocast, GradScaler",
      "torch.cuda.amp.GradScaler disables itself with a warning when CUDA is absent, so use_fp16 silently trains without loss scaling"),
    C('dist.init_process_group(backend=kwargs.get("backend", "nccl")', "dist_backend", "replace", True,
      'dist.init_process_group(backend=kwargs.get("backend", "hccl"), init_method="env://")',
      "NCCL is not available on Ascend; HCCL is the collective backend"),
    C("=torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "torch.cuda.set_device raises on a host without CUDA"),
    C('device = kwargs.get("device", "cuda")', "device_type", "replace", True, 'device = kwargs.get("device", "npu")',
      "default device string written back into kwargs and used for the single-card path"),
    C("model = model.cuda(local_rank)", "tensor_to_device", "replace", True, "model = model.npu(local_rank)",
      "Module.cuda fails without CUDA"),
    C("device_id=torch.cuda.current_device(),", "torch_cuda_api", "replace", True,
      "device_id=torch.npu.current_device(),", "FSDP device_id taken from the CUDA runtime"),
    C('model = model.to(device=kwargs.get("device", "cuda"))', "device_type", "replace", True,
      'model = model.to(device=kwargs.get("device", "npu"))', "single-card fallback device string"),
    C("scaler = ShardedGradScaler(enabled=use_fp16) if use_fsdp else scaler", "amp", "replace", False,
      'scaler = ShardedGradScaler(device="npu", enabled=use_fp16) if use_fsdp else scaler',
      "ShardedGradScaler defaults to device='cuda'; FSDP itself is marked unsupported in Ascend's 2.7.1 list, so this path is unconfirmed on NPU"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; memory hygiene only"),
])


E("funasr_trainer", "funasr/train_utils/trainer.py", "explicit_replacement",
  "FunASR funasr/train_utils/trainer.py (Trainer with maybe_autocast, GPU memory logging)", [
    C("from torch.cuda.amp import autocast, GradScaler", "amp", "replace", True,
      "from torch.npu.amp import autocast, GradScaler",
      "maybe_autocast uses this autocast; CUDA autocast disables itself on a host without CUDA, so use_fp16/use_bf16 silently run fp32"),
    C('self.device = kwargs.get("device", "cuda")', "device_type", "replace", False,
      'self.device = kwargs.get("device", "npu")',
      "fallback only: funasr/bin/train.py always passes the model's real device"),
    C("and (torch.cuda.max_memory_reserved() / 1024 / 1024 / 1024) > 70", "torch_cuda_api", "replace", False,
      "and (torch.npu.max_memory_reserved() / 1024 / 1024 / 1024) > 70",
      "returns 0 without CUDA initialised, so reset_gpu_cache never fires (memory hygiene only)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA"),
    C("torch.cuda.memory_allocated() / 1024 / 1024 / 1024,", "torch_cuda_api", "replace", False,
      "torch.npu.memory_allocated() / 1024 / 1024 / 1024,", "log line reports 0 GB on NPU; cosmetic"),
    C("torch.cuda.max_memory_allocated() / 1024 / 1024 / 1024,", "torch_cuda_api", "replace", False,
      "torch.npu.max_memory_allocated() / 1024 / 1024 / 1024,", "log line reports 0 GB on NPU; cosmetic"),
    C("torch.cuda.memory_reserved() / 1024 / 1024 / 1024,", "torch_cuda_api", "replace", False,
      "torch.npu.memory_reserved() / 1024 / 1024 / 1024,", "log line reports 0 GB on NPU; cosmetic"),
    C("torch.cuda.max_memory_reserved() / 1024 / 1024 / 1024,", "torch_cuda_api", "replace", False,
      "torch.npu.max_memory_reserved() / 1024 / 1024 / 1024,", "log line reports 0 GB on NPU; cosmetic"),
])


E("funasr_paraformer", "funasr/models/paraformer/model.py", "explicit_replacement",
  "FunASR funasr/models/paraformer/model.py (Paraformer encode/inference)", [
    C("from torch.cuda.amp import autocast", "amp", "replace", False,
      "from torch.npu.amp import autocast",
      "used only as autocast(False) around specaug/CMVN: once the trainer's autocast is NPU, the CUDA one no longer "
      "switches it off; the ops inside are mostly autocast-neutral, so the effect is small (precision hygiene)"),
])


E("funasr_export_utils", "funasr/utils/export_utils.py", "explicit_replacement",
  "FunASR funasr/utils/export_utils.py (onnx / torchscript / BladeDISC export)", [
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "torch_cuda_api", "replace", False,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "on NPU the torchscript is silently traced on CPU, which still yields a usable file; tracing on npu is optional "
      "and unconfirmed to help any Ascend runtime"),
    C('if device == "cuda":', "device_type", "replace", False, 'if device != "cpu":',
      "goes with the device choice above: only needed if the trace is moved to npu"),
    C("model = model.cuda()", "tensor_to_device", "replace", False, "model = model.to(device)",
      "inside the device branch of _torchscripts; reached only once the branch accepts npu"),
    C("dummy_input = dummy_input.cuda()", "tensor_to_device", "replace", False, "dummy_input = dummy_input.to(device)",
      "same branch"),
    C("dummy_input = tuple([i.cuda() for i in dummy_input])", "tensor_to_device", "replace", False,
      "dummy_input = tuple([i.to(device) for i in dummy_input])", "same branch"),
])


E("funasr_wss_server", "runtime/python/websocket/funasr_wss_server.py", "explicit_replacement",
  "FunASR runtime/python/websocket/funasr_wss_server.py (2pass streaming server)", [
    C('parser.add_argument("--device", type=str, default="cuda", help="cuda, cpu")', "device_type", "replace", True,
      'parser.add_argument("--device", type=str, default="npu", help="npu, cpu")',
      "passed to every AutoModel; with the ported availability check an explicit 'cuda' reaches model.to() and fails"),
])


E("funasr_finetune_sh", "examples/industrial_data_pretraining/paraformer/finetune.sh", "explicit_replacement",
  "FunASR examples/industrial_data_pretraining/paraformer/finetune.sh (torchrun launcher)", [
    C("=workspace=`pwd`", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced before torchrun or `import torch_npu` fails to find libhccl/libascendcl"),
    C('export CUDA_VISIBLE_DEVICES="0,1"', "env_var", "replace", True, 'export ASCEND_RT_VISIBLE_DEVICES="0,1"',
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; card selection would silently be lost"),
    C("gpu_num=$(echo $CUDA_VISIBLE_DEVICES", "env_var", "replace", True,
      "gpu_num=$(echo $ASCEND_RT_VISIBLE_DEVICES | awk -F \",\" '{print NF}')",
      "process count is derived from the visible-device list; must read the renamed variable"),
])


E("wenet_train", "wenet/bin/train.py", "explicit_replacement",
  "WeNet 2.x wenet/bin/train.py (one process per GPU, --gpu / --ddp.* flags)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; needed for the npu device, torch.npu.* and the hccl backend"),
    C("default='nccl',", "dist_backend", "replace", True, "default='hccl',",
      "default collective backend for --ddp.dist_backend"),
    C("choices=['nccl', 'gloo'],", "dist_backend", "replace", True, "choices=['hccl', 'gloo'],",
      "argparse would reject --ddp.dist_backend hccl from run.sh"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = str(args.gpu)", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = str(args.gpu)",
      "each rank pins itself to one card through the visible-device mask; ignored on Ascend, so every rank would land on npu:0"),
    C("=torch.manual_seed(777)", "compile_mode", "npu_only_addition", False,
      "torch.npu.set_compile_mode(jit_compile=False)",
      "speech batches have dynamic shapes; binary (non-JIT) op mode avoids recompiling per shape (performance)"),
    C("assert (torch.cuda.is_available())", "torch_cuda_api", "replace", True, "assert (torch.npu.is_available())",
      "assertion fails on an NPU host"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()",
      "DDP needs the model on the accelerator; Module.cuda raises without CUDA"),
    C('device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")',
      "device handed to the executor for every batch"),
    C("use_cuda = args.gpu >= 0 and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_npu = args.gpu >= 0 and torch.npu.is_available()",
      "False on an NPU host: single-card training silently runs on CPU"),
    C("device = torch.device('cuda' if use_cuda else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if use_npu else 'cpu')", "single-card device string"),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True, "scaler = torch.npu.amp.GradScaler()",
      "CUDA GradScaler disables itself without CUDA; --use_amp would silently lose loss scaling"),
])


E("wenet_train_utils", "wenet/utils/train_utils.py", "explicit_replacement",
  "WeNet 3.x wenet/utils/train_utils.py (init_distributed, wrap_cuda_model, batch_forward)", [
    C("default='nccl',", "dist_backend", "replace", True, "default='hccl',",
      "default for --ddp.dist_backend, consumed by both init_process_group and deepspeed.init_distributed"),
    C("choices=['nccl', 'gloo'],", "dist_backend", "replace", True, "choices=['hccl', 'gloo'],",
      "argparse must accept hccl"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "raises on a host without CUDA"),
    C("assert (torch.cuda.is_available())", "torch_cuda_api", "replace", True, "assert (torch.npu.is_available())",
      "assertion fails on an NPU host"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()",
      "DDP path moves the model with Module.cuda"),
    C('device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")',
      "device returned to train.py and used by the executor for every batch"),
    C("device_id=torch.cuda.current_device())", "torch_cuda_api", "replace", True,
      "device_id=torch.npu.current_device())", "FSDP device_id read from the CUDA runtime raises without CUDA"),
    C('device = torch.device("cuda:{}".format(local_rank))', "device_type", "replace", True,
      'device = torch.device("npu:{}".format(local_rank))', "FSDP path device string"),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True, "scaler = torch.npu.amp.GradScaler()",
      "CUDA GradScaler disables itself without CUDA; --use_amp silently loses loss scaling"),
    C("scaler = sharded_grad_scaler.ShardedGradScaler(enabled=True)", "amp", "replace", False,
      'scaler = sharded_grad_scaler.ShardedGradScaler(device="npu", enabled=True)',
      "ShardedGradScaler defaults to device='cuda'; FSDP is marked unsupported in Ascend's 2.7.1 API list, so unconfirmed"),
    C('"deepspeed": torch.cuda.amp.autocast(', "amp", "replace", True,
      '"deepspeed": torch.npu.amp.autocast(enabled=dtype is not None, dtype=dtype, cache_enabled=False),',
      "with DeepSpeed fp16/bf16 the weights are half precision and fp32 features rely on autocast; CUDA autocast is a no-op on NPU"),
    C('"torch_ddp": torch.cuda.amp.autocast(enabled=scaler is not None),', "amp", "replace", True,
      '"torch_ddp": torch.npu.amp.autocast(enabled=scaler is not None),',
      "--use_amp would silently train in fp32"),
    C('"torch_fsdp": torch.cuda.amp.autocast(enabled=True, dtype=dtype)', "amp", "replace", True,
      '"torch_fsdp": torch.npu.amp.autocast(enabled=True, dtype=dtype) if dtype is not None else nullcontext()',
      "FSDP fp16/bf16 autocast silently disabled otherwise"),
])


E("wenet_executor", "wenet/utils/executor.py", "explicit_replacement",
  "WeNet 2.x wenet/utils/executor.py (Executor.train / cv with torch.cuda.amp)", [
    C("with torch.cuda.amp.autocast(scaler is not None):", "amp", "replace", True,
      "with torch.npu.amp.autocast(scaler is not None):",
      "CUDA autocast disables itself on an NPU host: --use_amp silently trains in fp32"),
    C("=torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
      "raises without CUDA; NPU kernels are asynchronous too, so the sync itself must stay"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "same, end of the timed region"),
])


E("wenet_recognize", "wenet/bin/recognize.py", "explicit_replacement",
  "WeNet 2.x wenet/bin/recognize.py (batch decoding with --gpu)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; torch.npu and the npu device need torch_npu"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = str(args.gpu)", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = str(args.gpu)",
      "decode jobs are spread over cards with --gpu; the CUDA mask is ignored on Ascend so all jobs would share npu:0"),
    C("use_cuda = args.gpu >= 0 and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_npu = args.gpu >= 0 and torch.npu.is_available()",
      "False on an NPU host: decoding silently falls back to CPU"),
    C("device = torch.device('cuda' if use_cuda else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if use_npu else 'cpu')", "decode device string"),
])


E("wenet_checkpoint", "wenet/utils/checkpoint.py", "explicit_replacement",
  "WeNet wenet/utils/checkpoint.py (load_checkpoint / save_checkpoint)", [
    # Deliberately no labels: `if torch.cuda.is_available(): torch.load(path)` takes the else-branch on an NPU
    # host and loads with map_location='cpu'; callers then move the model with .to(device). That is already
    # correct on Ascend, and "porting" the check to torch.npu would make torch.load try to restore cuda:N tensors.
])


E("wenet_asr_model", "wenet/transformer/asr_model.py", "explicit_replacement",
  "WeNet wenet/transformer/asr_model.py (CTC/attention model, k2 HLG decoding)", [
    C("ctc_probs = self.ctc.log_softmax(encoder_out)  # (1, maxlen, vocab_size)", "unsupported_op_workaround",
      "replace", False, "ctc_probs = self.ctc.log_softmax(encoder_out).cpu()  # k2 has no NPU context",
      "HLG decoding runs in k2/icefall, which only has CPU and CUDA contexts; on NPU the HLG graph already stays on CPU "
      "(see load_hlg_resource_if_necessary), so the NPU log-probs must be copied to CPU. Unconfirmed in the knowledge base"),
])


E("wenet_run_sh", "examples/aishell/s0/run.sh", "explicit_replacement",
  "WeNet examples/aishell/s0/run.sh (stage 4 torchrun training, stage 5 decoding)", [
    C(". ./path.sh || exit 1;", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN runtime must be on the library path before torch_npu is imported by train.py / recognize.py"),
    C("if command -v nvidia-smi &> /dev/null; then", "device_type", "replace", True,
      "if command -v npu-smi &> /dev/null; then",
      "nvidia-smi is absent on an Ascend host: the script falls to num_gpus=-1 / gpu_list=-1"),
    C("num_gpus=$(nvidia-smi -L | wc -l)", "device_type", "replace", True,
      'num_gpus=$(npu-smi info -l | grep "NPU ID" | wc -l)',
      "card count for the device list (note: on A3 each NPU exposes two logical devices)"),
    C('export CUDA_VISIBLE_DEVICES="${gpu_list}"', "env_var", "replace", True,
      'export ASCEND_RT_VISIBLE_DEVICES="${gpu_list}"', "visible-device mask is ignored by the Ascend runtime"),
    C('echo "CUDA_VISIBLE_DEVICES is ${CUDA_VISIBLE_DEVICES}"', "env_var", "replace", False,
      'echo "ASCEND_RT_VISIBLE_DEVICES is ${ASCEND_RT_VISIBLE_DEVICES}"',
      "log line dereferences the old variable; would print an empty list after the port (cosmetic)"),
    C("num_gpus=$(echo $CUDA_VISIBLE_DEVICES", "env_var", "replace", True,
      "num_gpus=$(echo $ASCEND_RT_VISIBLE_DEVICES | awk -F \",\" '{print NF}')",
      "torchrun --nproc_per_node is derived from the renamed mask"),
    C('dist_backend="nccl"', "dist_backend", "replace", True, 'dist_backend="hccl"',
      "passed as --ddp.dist_backend to train.py"),
    C("export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}", "env_var", "replace", False,
      "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
      "multi-node only; HCCL reads HCCL_SOCKET_IFNAME for the host NIC, NCCL_* is ignored"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None,
      "NCCL-only InfiniBand switch; no HCCL meaning (HCCL uses the NPU RoCE ports), harmless but dead"),
])


E("cosyvoice_model", "cosyvoice/cli/model.py", "explicit_replacement",
  "CosyVoice cosyvoice/cli/model.py (CosyVoiceModel: LLM thread on its own CUDA stream, flow + HiFT token2wav)", [
    C("self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "self.device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "False on an NPU host: LLM, flow and HiFT silently run on CPU"),
    C("self.llm_context = torch.cuda.stream(torch.cuda.Stream(self.device)) if torch.cuda.is_available() else nullcontext()",
      "torch_cuda_api", "replace", False,
      "self.llm_context = torch.npu.stream(torch.npu.Stream(self.device)) if torch.npu.is_available() else nullcontext()",
      "guarded: on NPU it degrades to nullcontext and the LLM thread shares the default stream with token2wav; "
      "correct, only loses overlap (performance)"),
    C("with self.llm_context, torch.cuda.amp.autocast(", "amp", "replace", True,
      "with self.llm_context, torch.npu.amp.autocast(self.fp16 is True and hasattr(self.llm, 'vllm') is False):",
      "with fp16=True the LLM has been .half()'d while speaker embeddings arrive in fp32; only autocast reconciles "
      "the dtypes, and the CUDA autocast is inert on NPU"),
    C("with torch.cuda.amp.autocast(self.fp16):", "amp", "replace", True, "with torch.npu.amp.autocast(self.fp16):",
      "same for the half-precision flow model in token2wav"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "guarded clean-up after each request; skipped on NPU (memory hygiene only)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "inside the guard above"),
    C("torch.cuda.current_stream().synchronize()", "torch_cuda_api", "replace", False,
      "torch.npu.current_stream().synchronize()", "inside the guard above; outputs were already copied with .cpu()"),
])


E("cosyvoice_cli", "cosyvoice/cli/cosyvoice.py", "explicit_replacement",
  "CosyVoice cosyvoice/cli/cosyvoice.py (CosyVoice / CosyVoice2 front classes with load_jit/load_trt/fp16)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "CosyVoice/CosyVoice2 are what webui.py, the FastAPI/gRPC servers and user scripts import; registers npu and torch.npu"),
    C("if torch.cuda.is_available() is False and (load_jit is True or load_trt is True or fp16 is True):",
      "torch_cuda_api", "replace", True,
      "if torch.npu.is_available() is False and (load_jit is True or load_trt is True or fp16 is True):",
      "on an NPU host this silently drops a requested fp16/jit; the port keeps the guard for CPU-only hosts and "
      "must also force load_trt off on NPU (no TensorRT)"),
    C("if torch.cuda.is_available() is False and (load_jit is True or load_trt is True or load_vllm is True or fp16 is True):",
      "torch_cuda_api", "replace", True,
      "if torch.npu.is_available() is False and (load_jit is True or load_trt is True or load_vllm is True or fp16 is True):",
      "same guard for CosyVoice2; load_vllm then needs the vllm-ascend plugin rather than CUDA vLLM"),
])


E("cosyvoice_flow_matching", "cosyvoice/flow/flow_matching.py", "explicit_replacement",
  "CosyVoice cosyvoice/flow/flow_matching.py (ConditionalCFM Euler solver, TensorRT estimator branch)", [
    # Deliberately no labels. The torch.cuda.current_stream() calls live in the TensorRT branch of
    # forward_estimator, which is only taken when CosyVoice(load_trt=True) swapped the estimator for a TRT
    # context; load_trt asserts CUDA and is forced off on NPU (see cosyvoice_cli), so on Ascend the estimator is
    # always an nn.Module and this code is unreachable. Everything else is device-agnostic (device=x.device).
])


E("cosyvoice_export_onnx", "cosyvoice/bin/export_onnx.py", "explicit_replacement",
  "CosyVoice cosyvoice/bin/export_onnx.py (flow estimator ONNX export + onnxruntime consistency check)", [
    C("providers = ['CUDAExecutionProvider' if torch.cuda.is_available() else 'CPUExecutionProvider']",
      "device_type", "replace", False,
      "providers = ['CANNExecutionProvider' if torch.npu.is_available() else 'CPUExecutionProvider']",
      "on NPU the consistency check silently runs on the CPU provider, which is still correct; the CANN execution "
      "provider (onnxruntime-cann build) is unconfirmed in the knowledge base"),
])


E("cosyvoice_train", "cosyvoice/bin/train.py", "explicit_replacement",
  "CosyVoice cosyvoice/bin/train.py (llm/flow/hifigan training via torchrun, DDP or DeepSpeed)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "torchrun entry point; registers the npu device and HCCL for init_distributed"),
    C("parser.add_argument('--ddp.dist_backend', dest='dist_backend', default='nccl'", "dist_backend", "replace", True,
      "parser.add_argument('--ddp.dist_backend', dest='dist_backend', default='hccl', choices=['hccl', 'gloo'], help='distributed backend')",
      "default backend and the allowed choices both exclude hccl"),
    C("scaler = torch.cuda.amp.GradScaler() if args.use_amp else None", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler() if args.use_amp else None",
      "CUDA GradScaler disables itself without CUDA; --use_amp silently loses loss scaling"),
])


E("cosyvoice_requirements", "requirements.txt", "explicit_replacement",
  "CosyVoice requirements.txt (cu121 wheel index, onnxruntime-gpu, tensorrt-cu12)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "device_type", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "Ascend installs pair torch_npu with the CPU torch wheel on x86 (plain PyPI on aarch64); whether torch_npu "
      "also tolerates a +cu121 build is unconfirmed"),
    C("--extra-index-url https://aiinfra.pkgs.visualstudio.com/PublicPackages/_packaging/onnxruntime-cuda-12/pypi/simple/",
      "custom_cuda_extension", "removal", False, None,
      "index only serves CUDA-12 builds of onnxruntime-gpu; dead on Ascend"),
    C("onnxruntime-gpu==1.18.0; sys_platform == 'linux'", "custom_cuda_extension", "replace", False,
      "onnxruntime==1.18.0; sys_platform == 'linux'",
      "frontend (campplus, speech tokenizer) needs an onnxruntime; the CUDA build brings no benefit on Ascend and "
      "has no Linux aarch64 wheel (unconfirmed in the knowledge base)"),
    C("tensorrt-cu12==10.0.1; sys_platform == 'linux'", "custom_cuda_extension", "removal", False, None,
      "TensorRT has no Ascend backend; load_trt is forced off on NPU, so the wheel is dead weight (install "
      "behaviour on aarch64 unconfirmed)"),
    C("tensorrt-cu12-bindings==10.0.1; sys_platform == 'linux'", "custom_cuda_extension", "removal", False, None,
      "same as tensorrt-cu12"),
    C("tensorrt-cu12-libs==10.0.1; sys_platform == 'linux'", "custom_cuda_extension", "removal", False, None,
      "same as tensorrt-cu12"),
    C("=torch==2.3.1", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.3.1.post6",
      "torch_npu must be installed and pinned to the same torch version (2.3.1 <-> 2.3.1.postN)"),
])


E("cosyvoice_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "CosyVoice docker/Dockerfile (nvidia/cuda base image, miniforge, conda env)", [
    C("FROM nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04", "device_type", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "the CUDA base image carries no CANN toolkit/runtime, so torch_npu cannot load inside it"),
    C('echo "source /opt/conda/etc/profile.d/conda.sh" >> /opt/nvidia/entrypoint.d/100.conda.sh && \\',
      "device_type", "removal", True, None,
      "/opt/nvidia/entrypoint.d only exists in NVIDIA base images; the redirect fails and aborts the build"),
    C('echo "conda activate ${VENV}" >> /opt/nvidia/entrypoint.d/110.conda_default_env.sh && \\',
      "device_type", "removal", True, None, "same NVIDIA-image-only entrypoint directory"),
    C("pip install -r requirements.txt -i https://mirrors.aliyun.com/pypi/simple/ --trusted-host=mirrors.aliyun.com",
      "import_torch_npu", "npu_only_addition", True,
      "RUN conda activate ${VENV} && pip install torch-npu==2.3.1.post6",
      "the image clones upstream CosyVoice, whose requirements carry no torch-npu pin"),
])


E("gsv_config", "config.py", "device_branch_or_abstraction",
  "GPT-SoVITS config.py (get_device_dtype_sm, GPU_INFOS / infer_device / is_half discovery)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "config.py is imported first by webui.py, inference_webui.py and the prepare/train scripts; torch.npu needs it"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      "if not (torch.cuda.is_available() or torch.npu.is_available()):",
      "on an NPU host every device slot is reported as CPU/float32, so infer_device becomes cpu and is_half False"),
    C("capability = torch.cuda.get_device_capability(device_idx)", "device_capability_check", "add_branch", True,
      'if torch.npu.is_available(): return torch.device(f"npu:{idx}"), torch.float16, 8.0, torch.npu.get_device_properties(idx).total_memory / (1024**3)',
      "the SM-version/16-series heuristics have no NPU meaning (NPU get_device_capability returns None unless "
      "TORCH_NPU_DEVICE_CAPABILITY is set, and `major, minor = capability` would fail); an NPU branch must return before them"),
    C("GPU_COUNT = torch.cuda.device_count()", "torch_cuda_api", "add_branch", True,
      "GPU_COUNT = torch.npu.device_count() if torch.npu.is_available() else torch.cuda.device_count()",
      "0 on an NPU host: only slot 0 is probed, the other cards never reach GPU_INFOS"),
    C('GPU_INFOS.append(f"{device.index}\\t{torch.cuda.get_device_name(device.index)}")', "torch_cuda_api",
      "add_branch", True,
      'GPU_INFOS.append(f"{device.index}\\t{(torch.npu if device.type == \'npu\' else torch.cuda).get_device_name(device.index)}")',
      "would raise for npu devices on a host without CUDA"),
])


E("gsv_webui", "webui.py", "explicit_replacement",
  "GPT-SoVITS webui.py (v2 era: N-card detection, default batch size, subprocess launchers with _CUDA_VISIBLE_DEVICES)", [
    C("ngpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "ngpu = torch.npu.device_count()",
      "0 on an NPU host: the UI offers only 'CPU' and sizes batches from host RAM"),
    C("if torch.cuda.is_available() or ngpu != 0:", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available() or ngpu != 0:", "card enumeration gate"),
    C("gpu_name = torch.cuda.get_device_name(i)", "torch_cuda_api", "replace", True,
      "gpu_name = torch.npu.get_device_name(i)",
      "raises without CUDA; NPU returns SoC names such as Ascend910B3 (which happen to pass the keyword filter via '10')"),
    C("mem.append(int(torch.cuda.get_device_properties(i).total_memory/ 1024/ 1024/ 1024+ 0.4))", "torch_cuda_api",
      "replace", True, "mem.append(int(torch.npu.get_device_properties(i).total_memory/ 1024/ 1024/ 1024+ 0.4))",
      "per-card memory drives default_batch_size; NPU properties do expose total_memory"),
])


E("gsv_get_text", "GPT_SoVITS/prepare_datasets/1-get-text.py", "transfer_to_npu",
  "GPT-SoVITS GPT_SoVITS/prepare_datasets/1-get-text.py (per-card BERT feature extraction subprocess)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = os.environ["_CUDA_VISIBLE_DEVICES"]', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = os.environ["_CUDA_VISIBLE_DEVICES"]',
      "webui starts one process per selected card and passes the card id here; transfer_to_npu does not rewrite "
      "environment variables, so without this every part would run on npu:0"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu; from torch_npu.contrib import transfer_to_npu",
      "automatic migration for this helper script: torch.cuda.is_available() and the 'cuda:0' device string are "
      "redirected to NPU at runtime, so those lines are intentionally left unlabelled"),
])


E("gsv_inference_webui", "GPT_SoVITS/inference_webui.py", "explicit_replacement",
  "GPT-SoVITS GPT_SoVITS/inference_webui.py (BERT + HuBERT + SoVITS + GPT inference UI)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "launched as its own process by webui.py; needs the npu device registered"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = os.environ["_CUDA_VISIBLE_DEVICES"]', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = os.environ["_CUDA_VISIBLE_DEVICES"]',
      "the card chosen in the main webui is passed through _CUDA_VISIBLE_DEVICES (a private name, unchanged); "
      "the real mask must be the Ascend one"),
    C('is_half = eval(os.environ.get("is_half", "True")) and torch.cuda.is_available()', "torch_cuda_api", "replace",
      True, 'is_half = eval(os.environ.get("is_half", "True")) and torch.npu.is_available()',
      "False on an NPU host: the requested half-precision inference is silently dropped"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "device selection; otherwise all models silently run on CPU"),
    C('=device = "cuda"', "device_type", "replace", True, 'device = "npu"', "device string used by every .to(device)"),
])


E("gsv_s2_train", "GPT_SoVITS/s2_train.py", "explicit_replacement",
  "GPT-SoVITS GPT_SoVITS/s2_train.py (SoVITS/VITS GAN training, mp.spawn + DDP, every branch guarded by torch.cuda.is_available)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = hps.train.gpu_numbers.replace("-", ",")', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = hps.train.gpu_numbers.replace("-", ",")',
      "card selection from the webui ('0-1') is set before torch is imported; ignored by the Ascend runtime"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "training entry script"),
    C("from torch.cuda.amp import GradScaler, autocast", "amp", "replace", True,
      "from torch.npu.amp import GradScaler, autocast",
      "fp16_run would silently train in fp32 with a disabled scaler; the nested autocast(enabled=False) blocks follow the import"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "otherwise n_gpus=1 and a single process trains on CPU"),
    C("n_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "n_gpus = torch.npu.device_count()",
      "number of spawned ranks"),
    C('backend="gloo" if os.name == "nt" or not torch.cuda.is_available() else "nccl",', "dist_backend", "replace", True,
      'backend="gloo" if os.name == "nt" or not torch.npu.is_available() else "hccl",',
      "on NPU the CUDA check picks gloo, which cannot all-reduce NPU tensors; HCCL is the NPU backend"),
    C("if torch.cuda.is_available():  # 每个进程绑定一张卡", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():  # 每个进程绑定一张卡", "per-rank device binding guard"),
    C("torch.cuda.set_device(rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(rank)",
      "binds each spawned rank to its card"),
    C("=pin_memory=True,", "pin_memory", "replace", False, 'pin_memory=True, pin_memory_device="npu",',
      "without CUDA the DataLoader silently skips pinning; naming the npu pin device restores async H2D copies "
      "(performance only; exact torch_npu behaviour unconfirmed)"),
    C("=).cuda(rank)", "tensor_to_device", "replace", True, ").npu(rank)", "generator placement (first arm of the conditional)"),
    C("=if torch.cuda.is_available()", "torch_cuda_api", "replace", True, "if torch.npu.is_available()",
      "condition of the net_g placement expression; else-arm builds it on CPU"),
    C("net_d = MultiPeriodDiscriminator(hps.model.use_spectral_norm).cuda(rank) if torch.cuda.is_available()",
      "tensor_to_device", "replace", True,
      "net_d = MultiPeriodDiscriminator(hps.model.use_spectral_norm).npu(rank) if torch.npu.is_available() else MultiPeriodDiscriminator(hps.model.use_spectral_norm).to(device)",
      "discriminator placement"),
    C("if torch.cuda.is_available():  # DDP 只在有卡时启用", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():  # DDP 只在有卡时启用", "DDP wrapping guard"),
    C("net_g.module.load_state_dict(torch.load(hps.train.pretrained_s2G", "torch_cuda_api", "replace", True,
      'net_g.module.load_state_dict(torch.load(hps.train.pretrained_s2G, map_location="cpu")["weight"], strict=False) if torch.npu.is_available() else net_g.load_state_dict(torch.load(hps.train.pretrained_s2G, map_location="cpu")["weight"], strict=False),',
      "the guard decides whether net_g is DDP-wrapped; with a stale CUDA check the DDP model gets un-prefixed keys "
      "and strict=False silently loads nothing from the pretrained SoVITS"),
    C("net_d.module.load_state_dict(torch.load(hps.train.pretrained_s2D", "torch_cuda_api", "replace", True,
      'net_d.module.load_state_dict(torch.load(hps.train.pretrained_s2D, map_location="cpu")["weight"]) if torch.npu.is_available() else net_d.load_state_dict(torch.load(hps.train.pretrained_s2D, map_location="cpu")["weight"]),',
      "same for the discriminator (strict load, so it raises instead)"),
    C("if torch.cuda.is_available():  # 数据搬到当前卡", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():  # 数据搬到当前卡", "batch transfer guard; else-branch keeps batches on CPU"),
    C("spec, spec_lengths = spec.cuda(rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "spec, spec_lengths = spec.npu(rank, non_blocking=True), spec_lengths.npu(rank, non_blocking=True)", "batch transfer"),
    C("y, y_lengths = y.cuda(rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "y, y_lengths = y.npu(rank, non_blocking=True), y_lengths.npu(rank, non_blocking=True)", "batch transfer"),
    C("ssl = ssl.cuda(rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "ssl = ssl.npu(rank, non_blocking=True)", "batch transfer"),
    C("text, text_lengths = text.cuda(rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "text, text_lengths = text.npu(rank, non_blocking=True), text_lengths.npu(rank, non_blocking=True)", "batch transfer"),
])


E("gsv_s1_train", "GPT_SoVITS/s1_train.py", "explicit_replacement",
  "GPT-SoVITS GPT_SoVITS/s1_train.py (text-to-semantic GPT training with PyTorch Lightning)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = os.environ["_CUDA_VISIBLE_DEVICES"]', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = os.environ["_CUDA_VISIBLE_DEVICES"]',
      "cards picked in the webui arrive in the private _CUDA_VISIBLE_DEVICES; the Ascend mask must be set instead"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "training entry script"),
    C('accelerator="gpu" if torch.cuda.is_available() else "cpu",', "distributed_framework", "replace", True,
      'accelerator="npu" if torch.npu.is_available() else "cpu",',
      "on an NPU host Lightning silently trains on CPU; Lightning ships no NPU accelerator, so 'npu' assumes a "
      "registered NPU accelerator plugin (unconfirmed which one)"),
    C("devices=-1 if torch.cuda.is_available() else 1,", "torch_cuda_api", "replace", True,
      "devices=-1 if torch.npu.is_available() else 1,", "otherwise a single device is used"),
    C('strategy=DDPStrategy(process_group_backend="nccl" if platform.system() != "Windows" else "gloo")', "dist_backend",
      "replace", True,
      'strategy=DDPStrategy(process_group_backend="hccl" if platform.system() != "Windows" else "gloo")',
      "process-group backend for the DDP strategy"),
    C("=if torch.cuda.is_available()", "torch_cuda_api", "replace", True, "if torch.npu.is_available()",
      "guard of the strategy expression; falls back to 'auto' (no DDP) on NPU"),
])


E("gsv_fasterwhisper_asr", "tools/asr/fasterwhisper_asr.py", "explicit_replacement",
  "GPT-SoVITS tools/asr/fasterwhisper_asr.py (dataset labelling with faster-whisper / CTranslate2)", [
    # `device = "cuda" if torch.cuda.is_available() else "cpu"` is deliberately unlabelled: CTranslate2 has no
    # Ascend backend, so CPU is the right answer on an NPU host and the existing check already gives it.
    C("model = WhisperModel(model_path, device=device, compute_type=precision)", "unsupported_op_workaround", "replace",
      False, 'model = WhisperModel(model_path, device=device, compute_type=precision if device == "cuda" else "int8")',
      "the default --precision is float16, which CTranslate2 does not offer on CPU; on an NPU host (CPU fallback) "
      "the model load would fail or be converted. CTranslate2 behaviour is unconfirmed in the knowledge base"),
])


E("gsv_install_sh", "install.sh", "device_branch_or_abstraction",
  "GPT-SoVITS install.sh (conda toolchain, CUDA/ROCm/CPU torch wheel selection)", [
    # The nvidia-smi probe is deliberately unlabelled: on an Ascend host it correctly reports "no CUDA" and the
    # script falls through to the CPU torch wheel, which is exactly the torch build torch_npu expects on x86.
    C("pip install torch==2.5.1 torchaudio==2.5.1 --index-url https://download.pytorch.org/whl/cpu", "import_torch_npu",
      "npu_only_addition", True,
      "    if command -v npu-smi &>/dev/null; then pip install torch-npu==2.5.1; fi",
      "the CPU branch is the one taken on Ascend; torch-npu matching torch 2.5.1 must be added there"),
])
