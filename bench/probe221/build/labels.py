ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# --------------------------------------------------------------------------------------------
# OpenNMT-py
# --------------------------------------------------------------------------------------------
E("onmt_distributed", "onmt/utils/distributed.py", "device_branch_or_abstraction",
  "OpenNMT-py onmt/utils/distributed.py (multi_init, all_gather_list, spawned_infer)", [
    C("all_gather_list._in_buffer = torch.cuda.ByteTensor(max_size)", "torch_cuda_api", "replace", True,
      "all_gather_list._in_buffer = torch.empty(max_size, dtype=torch.uint8, device='npu')",
      "legacy typed CUDA tensor constructor; no CUDA on the NPU host"),
    C("torch.cuda.ByteTensor(max_size) for i in range(world_size)", "torch_cuda_api", "replace", True,
      "torch.empty(max_size, dtype=torch.uint8, device='npu') for i in range(world_size)",
      "HCCL all_gather needs the output buffers on the NPU too"),
    C("torch.distributed.all_gather(out_buffers, in_buffer.cuda())", "tensor_to_device", "replace", True,
      "torch.distributed.all_gather(out_buffers, in_buffer.npu())",
      ".cuda() fails without CUDA; HCCL needs NPU tensors"),
    C("torch.cuda.set_device(device_id)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(device_id)",
      "bind the spawned inference worker to its NPU"),
])

E("onmt_misc", "onmt/utils/misc.py", "device_branch_or_abstraction",
  "OpenNMT-py onmt/utils/misc.py (use_gpu, set_random_seed, autocast helper)", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(seed)",
      "torch.manual_seed above already seeds the NPU generator; torch.cuda.manual_seed is a lazy no-op without CUDA"),
    C('device_type = "cuda" if torch.cuda.is_available() else "cpu"', "amp", "replace", True,
      'device_type = "npu" if torch.npu.is_available() else "cpu"',
      "on the NPU host this silently picks CPU autocast (bf16 on CPU) instead of NPU autocast"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if not torch.npu.is_available():",
      "memory report helper; unchanged it just logs n/a on NPU"),
    C("alloc = torch.cuda.memory_allocated(device) / 2**30", "torch_cuda_api", "replace", False,
      "alloc = torch.npu.memory_allocated(device) / 2**30",
      "logging only"),
    C("reserved = torch.cuda.memory_reserved(device) / 2**30", "torch_cuda_api", "replace", False,
      "reserved = torch.npu.memory_reserved(device) / 2**30",
      "logging only"),
])

E("onmt_train_single", "onmt/train_single.py", "device_branch_or_abstraction",
  "OpenNMT-py onmt/train_single.py (configure_process, IterOnDevice)", [
    C('device = torch.device(device_id) if device_id >= 0 else torch.device("cpu")', "device_type", "replace", True,
      'device = torch.device("npu", device_id) if device_id >= 0 else torch.device("cpu")',
      "a bare int ordinal is read as a CUDA device by torch.device; make the NPU explicit (whether newer torch maps it to the registered accelerator is unconfirmed)"),
    C("torch.cuda.set_device(device_id)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(device_id)",
      "each spawned trainer must bind to its NPU"),
    C("pin_memory=device_id >= 0,", "pin_memory", "replace", False,
      'pin_memory=device_id >= 0, pin_memory_device="npu" if device_id >= 0 else "",',
      "without a pin_memory_device the DataLoader only pins when torch.cuda is available, so on NPU pinning is silently dropped (copy/compute overlap lost); whether torch_npu patches this default is unconfirmed"),
])

E("onmt_bin_train", "onmt/bin/train.py", "device_branch_or_abstraction",
  "OpenNMT-py onmt/bin/train.py (onmt_train entry point, spawn per GPU rank)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401",
      "process entry point (and re-imported by spawn children); registers the npu device on torch_npu < 2.5.1"),
    C('os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")', "env_var", "replace", False,
      'os.environ.setdefault("HCCL_ASYNC_ERROR_HANDLING", "1")',
      "NCCL watchdog knob is ignored by HCCL; HCCL_ASYNC_ERROR_HANDLING is the torch_npu counterpart"),
    C("if torch.cuda.is_available() and not opt.gpu_ranks:", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available() and not opt.gpu_ranks:",
      "only drives a warning"),
    C("n_visible = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "n_visible = torch.npu.device_count()",
      "returns 0 on the NPU host, so the check below aborts every -gpu_ranks run"),
])

E("onmt_trainer", "onmt/trainer.py", "device_branch_or_abstraction",
  "OpenNMT-py onmt/trainer.py (Trainer.train/validate/_gradient_accumulation)", [
    C("torch.cuda.empty_cache()  # drop blocks cached", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # drop blocks cached while building the model",
      "silent no-op without CUDA; NPU cache simply not released (memory hygiene only)"),
    C("if step % 1000 == 0 and self.gpu_rank <= 0 and torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if step % 1000 == 0 and self.gpu_rank <= 0 and torch.npu.is_available():",
      "memory logging guard; False on NPU so the report is just skipped"),
    C("% (step, torch.cuda.max_memory_allocated() / 2**30)", "torch_cuda_api", "replace", False,
      "% (step, torch.npu.max_memory_allocated() / 2**30)",
      "logging only"),
    C("with torch.cuda.amp.autocast(enabled=self.optim.amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=self.optim.amp):",
      "CUDA autocast disables itself (with a warning) when CUDA is absent, so fp16 validation silently runs in fp32 on NPU"),
    C('if "CUDA out of memory" in trace_content:', "torch_cuda_api", "replace", False,
      'if "out of memory" in trace_content:',
      "OOM-skip heuristic matches the CUDA allocator message; on NPU the OOM text differs (exact wording unconfirmed) so OOM batches crash instead of being skipped"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "OOM recovery path; no-op without CUDA"),
])

E("onmt_optimizers", "onmt/utils/optimizers.py", "device_branch_or_abstraction",
  "OpenNMT-py onmt/utils/optimizers.py (build_torch_optimizer, Optimizer.from_opt, vendored apex FusedAdam)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "the ported fusedadam branch names torch_npu.optim directly"),
    C("optimizer = FusedAdam(params, lr=opt.learning_rate, betas=betas)", "fused_optimizer", "replace", True,
      "optimizer = torch_npu.optim.NpuFusedAdam(params, lr=opt.learning_rate, betas=betas)",
      "vendored FusedAdam imports the CUDA-only fused_adam_cuda extension; -optim fusedadam cannot start on NPU"),
    C("=import apex", "amp", "removal", False, None,
      "only served FP16_Optimizer; after that swap it is dead, and an ImportError if the NPU image ships without Ascend apex"),
    C("optimizer = apex.contrib.optimizers.FP16_Optimizer(", "amp", "replace", True,
      "optimizer = optimizer  # no FP16_Optimizer on NPU: loss scaling via torch.npu.amp.GradScaler (see from_opt)",
      "FP16_Optimizer drives the wrapped optimizer through FusedAdam's step(grads=, output_params=, scale=) protocol, which NpuFusedAdam does not implement; whether apex.contrib survives in Ascend apex is unconfirmed"),
    C('=if opt.optim == "fusedadam":', "amp", "replace", True,
      'if opt.optim == "fusedadam" and not torch.npu.is_available():',
      "the 'legacy' path calls FP16_Optimizer.backward; on NPU route fp16 through the GradScaler branch"),
    C("from torch.cuda.amp import GradScaler", "amp", "replace", True,
      "from torch.npu.amp import GradScaler",
      "CUDA GradScaler disables itself without CUDA, so model_dtype fp16 silently trains without loss scaling/autocast"),
    C('fused_adam_cuda = importlib.import_module("fused_adam_cuda")', "custom_cuda_extension", "replace", False,
      'raise RuntimeError("fused_adam_cuda is CUDA-only; use torch_npu.optim.NpuFusedAdam")',
      "dead once the build site uses NpuFusedAdam; fail loudly if someone instantiates it"),
])

E("onmt_translator", "onmt/translate/translator.py", "device_branch_or_abstraction",
  "OpenNMT-py onmt/translate/translator.py (Inference/Translator, -gpu handling)", [
    C('torch.device("cuda", self._gpu) if self._use_cuda else torch.device("cpu")', "device_type", "replace", True,
      'torch.device("npu", self._gpu) if self._use_cuda else torch.device("cpu")',
      "-gpu N must select npu:N; every batch is moved to self._dev"),
    C("torch.cuda.synchronize(self._dev)", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize(self._dev)",
      "reached with -report_time -gpu N; CUDA synchronize raises on the NPU host"),
])

E("onmt_model_builder", "onmt/model_builder.py", "device_branch_or_abstraction",
  "OpenNMT-py onmt/model_builder.py (build_base_model device branch, load_test_model)", [
    C('device = torch.device("cuda", gpu_id)', "device_type", "replace", True,
      'device = torch.device("npu", gpu_id)',
      "model is built directly on the accelerator picked by gpu_ranks / -gpu"),
    C('device = torch.device("cuda")', "device_type", "replace", True,
      'device = torch.device("npu")',
      "same branch without an explicit ordinal"),
    C('if model_opt.model_dtype == "fp16" and model_opt.optim == "fusedadam":', "amp", "replace", True,
      'if model_opt.model_dtype == "fp16" and model_opt.optim == "fusedadam" and not torch.npu.is_available():',
      "pure-fp16 weights were only for the apex FP16_Optimizer path; with NpuFusedAdam + GradScaler, half weights make GradScaler.unscale_ refuse fp16 grads"),
])

E("onmt_rnn_encoder", "onmt/encoders/rnn_encoder.py", "device_branch_or_abstraction",
  "OpenNMT-py onmt/encoders/rnn_encoder.py (RNNEncoder with pack_padded_sequence, rnn_factory)", [
    # Deliberately no labels: pack/unpack and nn.LSTM run on NPU (see README), everything else is device-agnostic.
])

E("onmt_sru", "onmt/models/sru.py", "kernel_rewrite",
  "OpenNMT-py onmt/models/sru.py (SRU with a cupy/pynvrtc runtime-compiled CUDA kernel)", [
    C("=# Check 1.", "custom_cuda_extension", "add_branch", True,
      'if hasattr(torch, "npu") and torch.npu.is_available(): return True  # NPU uses the pure-PyTorch recurrence',
      "cupy/pynvrtc cannot be installed on Ascend and CUDA is absent, so SRU(...) aborts at construction; short-circuit the check on NPU"),
    C("SRU_Compute.maybe_load_sru_mod()", "custom_cuda_extension", "replace", True,
      "if torch.cuda.is_available(): SRU_Compute.maybe_load_sru_mod()",
      "do not try to NVRTC-compile the kernel when running on NPU"),
    C("FUNC = SRU_FWD_FUNC if not self.bidirectional else SRU_BiFWD_FUNC", "custom_cuda_extension", "add_branch", True,
      'if u.device.type == "npu": return self._forward_reference(u, x, bias, init, mask_h)',
      "the NVRTC sru_fwd kernel launch has no NPU equivalent; needs a torch-op (sigmoid/mul loop over time) rewrite of the recurrence"),
])

E("onmt_mha", "onmt/modules/multi_headed_attn.py", "device_branch_or_abstraction",
  "OpenNMT-py 3.x onmt/modules/multi_headed_attn.py (flash-attn 2 / SDPA switch, rotary)", [
    C("with torch.backends.cuda.sdp_kernel(", "attention_kernel", "replace", False,
      "with contextlib.nullcontext():  # NPU SDPA selects its fused kernel itself",
      "CUDA SDPA backend selector; Ascend lists torch.backends.cuda.sdp_kernel as unsupported (x) - whether it raises or is a silent no-op on NPU is unconfirmed"),
])

E("onmt_opts", "onmt/opts.py", "explicit_replacement",
  "OpenNMT-py onmt/opts.py (train/translate argparse groups: gpu_ranks, gpu_backend, optim, model_dtype)", [
    C('default="nccl",', "dist_backend", "replace", True,
      'default="hccl",',
      "multi_init passes opt.gpu_backend straight to init_process_group; NCCL does not exist on Ascend"),
])

E("onmt_wmt_yaml", "config/wmt14_ende_big.yaml", "explicit_replacement",
  "OpenNMT-py WMT14 en-de Transformer-big recipe YAML (saved config with distributed block)", [
    C("gpu_backend: nccl", "dist_backend", "replace", True,
      "gpu_backend: hccl",
      "the saved config overrides the CLI default; passed verbatim to init_process_group"),
])

E("onmt_train_sh", "examples/wmt14/train_ende.sh", "explicit_replacement",
  "OpenNMT-py examples/wmt14 shell pipeline (build_vocab, onmt_train on 4 GPUs, average, onmt_translate, sacrebleu)", [
    C("=set -euo pipefail", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN runtime libraries/paths must be in the environment before torch_npu is imported (unless the image already sources it)"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "CUDA_VISIBLE_DEVICES is ignored on Ascend: the job silently sees every NPU on the node"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False,
      "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "NCCL logging knob, silently ignored by HCCL"),
    C("export NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None,
      "NVLink P2P policy has no HCCL meaning; dead setting"),
    C("nvidia-smi --query-gpu=index,name,memory.total --format=csv", "device_type", "replace", True,
      "npu-smi info",
      "nvidia-smi is absent on the Ascend host and set -e aborts the script here"),
    C("CUDA_VISIBLE_DEVICES=0 onmt_translate \\", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=0 onmt_translate \\",
      "device pinning for translation; ignored on Ascend"),
])

E("onmt_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "OpenNMT-py docker image (CUDA base, cu118 torch wheel, apex --cuda_ext, flash-attn, CTranslate2)", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "device_type", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "CUDA base image has no CANN toolkit/driver user space; start from a CANN image (tag illustrative)"),
    C("RUN pip install torch==${TORCH_VERSION}+cu118 --index-url https://download.pytorch.org/whl/cu118", "device_type", "replace", True,
      "RUN pip install torch==${TORCH_VERSION} --index-url https://download.pytorch.org/whl/cpu && pip install torch-npu==${TORCH_VERSION}",
      "CUDA wheel index; Ascend uses the CPU torch wheel plus the matching torch-npu wheel (x86; aarch64 uses plain PyPI torch)"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6+PTX"', "custom_cuda_extension", "removal", False, None,
      "only steers nvcc builds; dead on Ascend"),
    C("git clone https://github.com/NVIDIA/apex /opt/apex && \\", "custom_cuda_extension", "replace", True,
      "git clone https://gitcode.com/Ascend/apex /opt/apex && \\",
      "NVIDIA apex --cuda_ext needs nvcc and fails to build; Ascend apex (patched, pure-Python + NPU fused optimizers) is the counterpart"),
    C('--config-settings "--build-option=--cuda_ext" ./', "custom_cuda_extension", "replace", True,
      "./  # Ascend apex: bash scripts/build.sh then pip install the produced wheel",
      "--cuda_ext compiles CUDA kernels; no nvcc on the Ascend image"),
    C("RUN pip install flash-attn==2.3.6 --no-build-isolation", "attention_kernel", "removal", True, None,
      "flash-attn cannot be built/installed on NPU and the build step fails the image; SDPA / npu_fusion_attention cover it"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all \\", "env_var", "replace", False,
      "ENV ASCEND_VISIBLE_DEVICES=0-7 \\",
      "nvidia-container-runtime knob; on Ascend the Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES (ids/ranges; value illustrative) or devices are mounted with --device; usually set at docker run time"),
    C("NVIDIA_DRIVER_CAPABILITIES=compute,utility \\", "env_var", "removal", False, None,
      "nvidia-container-runtime only"),
    C("NCCL_DEBUG=WARN", "env_var", "replace", False,
      "ASCEND_GLOBAL_LOG_LEVEL=2",
      "NCCL logging knob, ignored by HCCL"),
])

E("onmt_server", "onmt/translate/translation_server.py", "device_branch_or_abstraction",
  "OpenNMT-py onmt/translate/translation_server.py (ServerModel to_cpu/to_gpu, CTranslate2Translator wrapper)", [
    C('"device": "cuda" if opt.cuda else "cpu",', "device_type", "replace", True,
      '"device": "cpu",  # CTranslate2 has no Ascend backend',
      "with -gpu 0 the CT2 model would be opened on CUDA and fail at load; CT2 only offers cpu/cuda"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "unload path; no-op without CUDA (NPU memory stays cached)"),
    C("torch.cuda.empty_cache()  # give the memory back", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # give the memory back to other models",
      "timeout to_cpu path; no-op without CUDA, so offloading frees nothing on the NPU"),
    C("torch.cuda.set_device(self.opt.gpu)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(self.opt.gpu)",
      "reload after timeout; raises without CUDA"),
    C("self.translator.model.cuda()", "tensor_to_device", "replace", True,
      "self.translator.model.npu()",
      "reload after timeout; .cuda() raises without CUDA"),
])

E("onmt_avg", "tools/average_models.py", "device_branch_or_abstraction",
  "OpenNMT-py tools/average_models.py (checkpoint averaging on CPU)", [
    # Deliberately no labels: map_location="cpu", a vestigial -use_cuda flag and GPU wording in the docstring only.
])

# --------------------------------------------------------------------------------------------
# CTranslate2
# --------------------------------------------------------------------------------------------
E("ct2_translate", "tools/ct2_translate.py", "explicit_replacement",
  "CTranslate2 OpenNMTPyConverter + ctranslate2.Translator batch translation script", [
    C('os.environ.setdefault("CT2_CUDA_ALLOCATOR", "cub_caching")', "env_var", "removal", False, None,
      "CUDA allocator knob of CTranslate2; meaningless once the translator runs on CPU"),
    C('p_tr.add_argument("--device", default="cuda", choices=["auto", "cpu", "cuda"])', "device_type", "replace", True,
      'p_tr.add_argument("--device", default="cpu", choices=["auto", "cpu"])',
      "CTranslate2 has only cpu/cuda backends; the default cuda device fails to load on an Ascend host (serve on CPU or switch to onmt_translate on NPU)"),
])

E("onmt_server_reqs", "server/requirements.txt", "explicit_replacement",
  "requirements for an onmt_server / CTranslate2 REST deployment", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "device_type", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; Ascend pairs the CPU torch wheel with torch-npu (x86)"),
    C("torch==2.0.1+cu118", "device_type", "replace", True,
      "torch==2.1.0",
      "+cu118 local version does not exist on the CPU index; move to a torch release with a maintained torch-npu (2.1.0 <-> torch-npu 2.1.0.postN)"),
    C("OpenNMT-py==3.4.3", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post12",
      "add the torch-npu pin matching torch==2.1.0 (placed after the torch/OpenNMT pins)"),
    C("bitsandbytes==0.41.2", "unsupported_op_workaround", "removal", False, None,
      "CUDA-only 8-bit kernels in this release (NPU support only in later multi-backend builds); only needed for -quant_type bnb_8bit"),
    C("nvidia-ml-py==12.535.108", "torch_cuda_api", "replace", False,
      "# nvidia-ml-py removed: health endpoint uses torch.npu.mem_get_info / npu-smi",
      "installs, but NVML calls fail at runtime on Ascend; the health endpoint must use torch.npu / npu-smi"),
])

# --------------------------------------------------------------------------------------------
# JoeyNMT (1.x style: use_cuda flag, apex amp, DataParallel)
# --------------------------------------------------------------------------------------------
E("joey_training", "joeynmt/training.py", "device_branch_or_abstraction",
  "JoeyNMT 1.x joeynmt/training.py (TrainManager: use_cuda, n_gpu, apex amp O1, _DataParallel)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401",
      "module doubles as the training entry point (python -m joeynmt.training / __main__ block)"),
    C('self.use_cuda = train_config["use_cuda"] and torch.cuda.is_available()', "torch_cuda_api", "replace", True,
      'self.use_cuda = train_config["use_cuda"] and torch.npu.is_available()',
      "False on the NPU host: training silently runs on CPU; the use_cuda config key keeps its meaning 'use the accelerator'"),
    C("self.n_gpu = torch.cuda.device_count() if self.use_cuda else 0", "torch_cuda_api", "replace", True,
      "self.n_gpu = torch.npu.device_count() if self.use_cuda else 0",
      "device count drives loss summation, per-device batch sizes and the multi-device branch"),
    C('self.device = torch.device("cuda" if self.use_cuda else "cpu")', "device_type", "replace", True,
      'self.device = torch.device("npu" if self.use_cuda else "cpu")',
      "model and every batch go to self.device"),
    C("self.model = _DataParallel(self.model)", "distributed_framework", "replace", True,
      'logger.warning("nn.DataParallel is not supported on Ascend NPU; use one NPU or launch DDP with torchrun")',
      "torch.nn.DataParallel is marked unsupported on all Ascend products"),
])

E("joey_helpers", "joeynmt/helpers.py", "device_branch_or_abstraction",
  "JoeyNMT 1.x joeynmt/helpers.py (set_seed, load_checkpoint, tile, misc utilities)", [
    C("if torch.cuda.is_available() and torch.cuda.device_count() > 0:", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available() and torch.npu.device_count() > 0:",
      "guard is False on NPU so the block is skipped; torch.manual_seed above already seeds the NPU generator"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "redundant with torch.manual_seed on NPU; kept for symmetry"),
    C("checkpoint = torch.load(path, map_location='cuda' if use_cuda else 'cpu')", "device_type", "replace", True,
      "checkpoint = torch.load(path, map_location='npu' if use_cuda else 'cpu')",
      "use_cuda stays True on NPU after the TrainManager port; map_location='cuda' then fails to deserialize"),
])

E("joey_batch", "joeynmt/batch.py", "explicit_replacement",
  "JoeyNMT 1.x joeynmt/batch.py (Batch._make_cuda with .cuda() calls)", [
    C("self.src = self.src.cuda()", "tensor_to_device", "replace", True,
      "self.src = self.src.npu()", ".cuda() raises without CUDA; use_cuda is True on NPU after the port"),
    C("self.src_mask = self.src_mask.cuda()", "tensor_to_device", "replace", True,
      "self.src_mask = self.src_mask.npu()", "same"),
    C("self.src_length = self.src_length.cuda()", "tensor_to_device", "replace", True,
      "self.src_length = self.src_length.npu()", "same"),
    C("self.trg_input = self.trg_input.cuda()", "tensor_to_device", "replace", True,
      "self.trg_input = self.trg_input.npu()", "same"),
    C("self.trg = self.trg.cuda()", "tensor_to_device", "replace", True,
      "self.trg = self.trg.npu()", "same"),
    C("self.trg_mask = self.trg_mask.cuda()", "tensor_to_device", "replace", True,
      "self.trg_mask = self.trg_mask.npu()", "same"),
])

E("joey_prediction", "joeynmt/prediction.py", "device_branch_or_abstraction",
  "JoeyNMT 1.x joeynmt/prediction.py (validate_on_data, parse_test_args, test)", [
    C("and torch.cuda.is_available())", "torch_cuda_api", "replace", True,
      "and torch.npu.is_available())",
      "False on NPU: test/translate silently decode on CPU"),
    C('device = torch.device("cuda" if use_cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if use_cuda else "cpu")',
      "model.to(device) for evaluation"),
    C("n_gpu = torch.cuda.device_count() if use_cuda else 0", "torch_cuda_api", "replace", True,
      "n_gpu = torch.npu.device_count() if use_cuda else 0",
      "0 on NPU; per-device batch size logging and multi-device branch depend on it"),
    C("model = _DataParallel(model)", "distributed_framework", "replace", True,
      "pass  # nn.DataParallel is unsupported on Ascend NPU: evaluate on a single NPU",
      "torch.nn.DataParallel is marked unsupported on all Ascend products"),
])

E("joey_yaml", "configs/transformer_iwslt14_deen_bpe.yaml", "explicit_replacement",
  "JoeyNMT IWSLT14 de-en Transformer BPE config (use_cuda / fp16 flags)", [
    # Deliberately no labels: use_cuda keeps its meaning ("use the accelerator") once TrainManager is ported,
    # fp16 stays valid with Ascend apex amp O1; the comment naming CUDA_VISIBLE_DEVICES is only a comment.
])

E("joey_requirements", "requirements.txt", "explicit_replacement",
  "JoeyNMT fork requirements.txt pinned to a CUDA 11.3 torch wheel plus apex and gpustat", [
    C("torch==1.11.0+cu113", "device_type", "replace", True,
      "torch==1.11.0+cpu",
      "CUDA build of torch; Ascend uses the CPU torch wheel of the same version (x86)"),
    C("torchtext==0.12.0", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==1.11.0.post14",
      "torch-npu pin matching torch 1.11.0 (added after the torch/torchtext pins)"),
    C("apex @ git+https://github.com/NVIDIA/apex.git@22.04-dev", "amp", "replace", True,
      "# apex: build Ascend apex (gitcode.com/Ascend/apex, scripts/build.sh) and pip install the produced wheel",
      "NVIDIA apex amp O1 casts through CUDA tensor types; the NPU needs the Ascend apex patch (or a switch to torch.npu.amp)"),
    C("gpustat==1.0.0", "torch_cuda_api", "removal", False, None,
      "NVML-based GPU monitor; installs but shows nothing on Ascend (use npu-smi)"),
])

# --------------------------------------------------------------------------------------------
# Sockeye 3 (PyTorch port): `import torch as pt`, --dist with torchrun, --amp / --apex-amp
# --------------------------------------------------------------------------------------------
E("sockeye_utils", "sockeye/utils.py", "device_branch_or_abstraction",
  "Sockeye 3 sockeye/utils.py (init_device, get_num_gpus, nvidia-smi memory query, seeding)", [
    C("if not pt.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if not pt.npu.is_available():",
      "False on NPU: Sockeye logs 'CUDA not available, using cpu' and silently trains on CPU"),
    C("device = pt.device('cpu') if use_cpu else pt.device('cuda', args.device_id)", "device_type", "replace", True,
      "device = pt.device('cpu') if use_cpu else pt.device('npu', args.device_id)",
      "the single device object used for model, batches and DDP device_ids"),
    C("pt.cuda.set_device(device)", "torch_cuda_api", "replace", True,
      "pt.npu.set_device(device)",
      "bind each torchrun worker to its local NPU"),
    C("return pt.cuda.device_count()", "torch_cuda_api", "replace", True,
      "return pt.npu.device_count()",
      "used to validate --device-id and the number of workers; 0 on the NPU host"),
    C('if shutil.which("nvidia-smi") is None:', "device_type", "replace", False,
      "return {i: ((pt.npu.mem_get_info(i)[1] - pt.npu.mem_get_info(i)[0]) // 2**20, pt.npu.mem_get_info(i)[1] // 2**20) for i in device_ids}",
      "nvidia-smi is absent so the helper logs a warning and returns {}; memory logging only"),
])

E("sockeye_train", "sockeye/train.py", "device_branch_or_abstraction",
  "Sockeye 3 sockeye/train.py (torchrun --dist, apex FusedAdam, --amp / --apex-amp, DDP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401",
      "sockeye-train entry point (torchrun target)"),
    C('os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")', "env_var", "replace", False,
      'os.environ.setdefault("PYTORCH_NPU_ALLOC_CONF", "expandable_segments:True")',
      "CUDA allocator knob is ignored by the NPU caching allocator; memory fragmentation only"),
    C("adam_impl = apex.optimizers.FusedAdam", "fused_optimizer", "replace", False,
      "adam_impl = apex.optimizers.NpuFusedAdamW if args.optimizer == C.OPTIMIZER_ADAMW else apex.optimizers.NpuFusedAdam",
      "unconfirmed which way it breaks: if Ascend apex (installed for --apex-amp) still exports FusedAdam, its constructor raises for missing CUDA kernels and the NameError/AttributeError fallback does not catch it; if the name is gone, plain torch Adam runs (perf only)"),
    C("adam_kwargs['adam_w_mode'] = args.optimizer == C.OPTIMIZER_ADAMW", "fused_optimizer", "replace", False,
      "pass  # NpuFusedAdam / NpuFusedAdamW take no adam_w_mode argument",
      "apex-FusedAdam-only keyword; follows the swap above (NPU fused optimizers encode AdamW in the class)"),
    C("return torch.cuda.amp.autocast(cache_enabled=False)", "amp", "replace", True,
      "return torch.npu.amp.autocast(cache_enabled=False)",
      "CUDA autocast disables itself without CUDA: --amp silently trains in fp32"),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler()",
      "CUDA GradScaler disables itself without CUDA"),
    C("else torch.distributed.Backend.NCCL)", "dist_backend", "replace", True,
      'else "hccl")',
      "--dist under torchrun would try to create an NCCL process group"),
])

E("sockeye_translate", "sockeye/translate.py", "device_branch_or_abstraction",
  "Sockeye 3 sockeye/translate.py (translation CLI on the device from utils.init_device)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401",
      "sockeye-translate entry point"),
    C('if translator.device.type == "cuda":', "device_type", "replace", False,
      'if translator.device.type in ("cuda", "npu"):',
      "on NPU the sync is skipped, so per-sentence timings only measure kernel launch (reporting only)"),
    C("torch.cuda.synchronize(translator.device)", "torch_cuda_api", "replace", False,
      "torch.npu.synchronize(translator.device)",
      "timing sync; only reached once the guard above admits npu"),
])

E("sockeye_env", "environment.yml", "explicit_replacement",
  "conda environment.yml for Sockeye 3 (pytorch + pytorch-cuda from the pytorch/nvidia channels)", [
    C("=- nvidia", "device_type", "removal", False, None,
      "channel only serves CUDA runtime packages"),
    C("=- pytorch=2.1.2", "device_type", "replace", True,
      "- pytorch=2.1.0",
      "torch-npu wheels exist only for exact torch releases (2.1.0 <-> torch-npu 2.1.0.postN; none for 2.1.2)"),
    C("=- pytorch-cuda=12.1", "device_type", "replace", True,
      "- cpuonly",
      "pytorch-cuda selects the CUDA build of torch; Ascend needs the CPU build plus torch-npu"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True,
      "- torch-npu==2.1.0.post12",
      "torch-npu wheel matching torch 2.1.0 (first pip entry)"),
    C('- "apex @ git+https://github.com/NVIDIA/apex.git@23.08"', "amp", "replace", True,
      "# apex: build Ascend apex (gitcode.com/Ascend/apex, scripts/build.sh) and pip install the produced wheel",
      "NVIDIA apex amp/FusedAdam target CUDA; --apex-amp on NPU needs the Ascend apex patch"),
])

E("sockeye_slurm", "scripts/train_big_multinode.sbatch", "explicit_replacement",
  "SLURM + torchrun multi-node launcher for sockeye.train --dist (NCCL over InfiniBand)", [
    C("#SBATCH --gres=gpu:8", "device_type", "replace", False,
      "#SBATCH --gres=npu:8",
      "generic resource name is whatever the Ascend cluster's gres.conf defines; no Slurm/Ascend reference in the knowledge base (unconfirmed)"),
    C("module load cuda/12.1 nccl/2.18", "env_var", "replace", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CUDA/NCCL modules do not exist on the Ascend nodes (set -e aborts); the CANN environment must be sourced instead"),
    C("export NCCL_SOCKET_IFNAME=ib0", "env_var", "replace", False,
      "export HCCL_SOCKET_IFNAME=ib0",
      "HCCL ignores NCCL_SOCKET_IFNAME and picks its own host NIC for the root handshake; usually fine, wrong NIC makes link setup fail"),
    C("export NCCL_IB_HCA=mlx5", "env_var", "removal", False, None,
      "NCCL-only InfiniBand HCA selection; HCCL traffic goes over the NPU RoCE ports"),
    C("export NCCL_DEBUG=INFO", "env_var", "replace", False,
      "export ASCEND_GLOBAL_LOG_LEVEL=1",
      "NCCL log level, ignored by HCCL"),
    C("srun --ntasks-per-node=1 nvidia-smi -L", "device_type", "replace", True,
      "srun --ntasks-per-node=1 npu-smi info",
      "nvidia-smi is absent on Ascend nodes; the failing step aborts the job under set -e"),
])

# --------------------------------------------------------------------------------------------
# fairseq (classic NMT toolkit): CUDA extensions with Python fallbacks
# --------------------------------------------------------------------------------------------
E("fairseq_setup", "setup.py", "kernel_rewrite",
  "fairseq setup.py (CppExtension + CUDAExtension for libnat_cuda / ngram_repeat_block_cuda)", [
    C('if "CUDA_HOME" in os.environ:', "custom_cuda_extension", "add_branch", False,
      'elif "ASCEND_TOOLKIT_HOME" in os.environ: extensions.append(NpuExtension("fairseq.ngram_repeat_block_npu", sources=["fairseq/clib/npu/ngram_repeat_block_npu.cpp"]))',
      "without CUDA_HOME the CUDA extensions are skipped and the pure-Python fallbacks run; an AscendC/NpuExtension port of the n-gram blocker is a speed-up only"),
])

E("fairseq_ngram", "fairseq/ngram_repeat_block.py", "kernel_rewrite",
  "fairseq fairseq/ngram_repeat_block.py (optional CUDA extension with Python fallback)", [
    # Deliberately no labels: the extension is not built on Ascend, is_cuda_extension_usable() returns False
    # before touching device="cuda", and the Python fallback runs on NPU tensors unchanged.
])
