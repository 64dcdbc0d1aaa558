# Labels for probe168 (document AI on NVIDIA GPUs -> Ascend NPU).
# One entry per upstream file; one C(...) per line a careful porter would edit.
# Target stack assumed by the ported lines: torch 2.1.0 + torch-npu 2.1.0.post10 (CANN 8.0.0),
# transformers >= 4.32 (native NPU support in Trainer), no transfer_to_npu.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ---------------------------------------------------------------------------------------------
# LayoutLM family (unilm/layoutlmft, LayoutLMv3 examples)
# ---------------------------------------------------------------------------------------------

E("p168-01-layoutlmv3-run-funsd-cord", "examples/run_funsd_cord.py", "device_branch_or_abstraction",
  "LayoutLMv3 examples/run_funsd_cord.py (HF Trainer token classification, --fp16)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "Entry script. transformers>=4.32 imports torch_npu itself when TrainingArguments probes for an NPU "
      "(before the ported torch.npu call runs), so the explicit import is belt-and-braces, not required."),
    C("n_devices = torch.cuda.device_count() if torch.cuda.is_available() else 1", "torch_cuda_api", "replace", True,
      "n_devices = torch.npu.device_count() if torch.npu.is_available() else 1",
      "On an NPU host is_available() is False -> n_devices=1, so max_steps is silently computed for 1 device "
      "(8x too many steps on 8 NPUs)."),
])

E("p168-02-layoutlmv2-modeling", "layoutlmft/models/layoutlmv2/modeling_layoutlmv2.py", "explicit_replacement",
  "layoutlmft LayoutLMv2 modeling (detectron2 ResNeXt-FPN visual backbone, SyncBN groups per node)", [
    C("node_size = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "node_size = torch.npu.device_count()",
      "Returns 0 on an NPU host -> world_size % 0 / world_size // 0 raise ZeroDivisionError when SyncBN "
      "conversion is enabled under torch.distributed."),
])

E("p168-03-layoutlmv3-od-train-net", "examples/object_detection/train_net.py", "explicit_replacement",
  "LayoutLMv3/DiT object_detection/train_net.py (detectron2 DefaultTrainer, AMPTrainer, launch)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "Entry script; detectron2 must be able to build torch.device('npu') (torch_npu 2.1 has no autoload)."),
    C("cfg.merge_from_list(args.opts)", "device_type", "npu_only_addition", True,
      'cfg.MODEL.DEVICE = "npu"',
      "detectron2's config defaults MODEL.DEVICE to 'cuda' and build_model() moves the model there; "
      "nothing in this script or the yaml overrides it, so a line must be added."),
    C("self._trainer = (AMPTrainer if cfg.SOLVER.AMP.ENABLED else SimpleTrainer)(model, data_loader, optimizer)",
      "amp", "replace", True,
      "self._trainer = (NPUAMPTrainer if cfg.SOLVER.AMP.ENABLED else SimpleTrainer)(model, data_loader, optimizer)",
      "detectron2's AMPTrainer asserts torch.cuda.is_available() in run_step and uses torch.cuda.amp; the "
      "LayoutLMv3 cascade configs enable SOLVER.AMP. Needs an NPU AMP trainer (torch.npu.amp autocast/GradScaler). "
      "detectron2 internals, not covered by the knowledge base."),
    C("=launch(", "distributed_framework", "replace", True,
      "launch_npu(",
      "detectron2.engine.launch hard-codes backend='NCCL', torch.cuda.set_device and a torch.cuda.device_count() "
      "check in its worker; multi-device runs (--num-gpus 8) need an hccl-aware launch (or patched detectron2). "
      "detectron2 internals, not covered by the knowledge base."),
])

E("p168-04-layoutlmft-requirements", "requirements.txt", "explicit_replacement",
  "unilm layoutlmft / LayoutLMv3 requirements.txt (torch 1.10 cu113, detectron2 wheel index)", [
    C("-f https://download.pytorch.org/whl/torch_stable.html", "torch_cuda_api", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_stable lists +cuXXX local versions that win over +cpu for an unpinned local version; torch_npu "
      "needs the CPU torch build on x86 (aarch64 uses plain PyPI)."),
    C("torch==1.10.1+cu113", "torch_cuda_api", "replace", True, "torch==2.1.0",
      "CUDA build, and 1.10 has no torch_npu release; torch-npu wheel version must equal the torch version."),
    C("torchvision==0.11.2+cu113", "torch_cuda_api", "replace", True, "torchvision==0.16.0",
      "CUDA build matched to torch 1.10; must match the new torch 2.1.0."),
    C("numpy>=1.21,<1.24", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "torch-npu pin goes right after the torch pins (CANN 8.0.0 pairing)."),
    C("-f https://dl.fbaipublicfiles.com/detectron2/wheels/cu113/torch1.10/index.html", "custom_cuda_extension",
      "removal", True, None,
      "Prebuilt detectron2 wheels are nvcc builds for CUDA 11.3 + torch 1.10 (x86 only); they do not load "
      "against torch 2.1 CPU/NPU."),
    C("detectron2==0.6", "custom_cuda_extension", "replace", True,
      "detectron2 @ git+https://github.com/facebookresearch/detectron2.git@v0.6",
      "Must be built from source without CUDA (CPU ops only) against the new torch."),
    C("transformers==4.12.5", "distributed_framework", "replace", True, "transformers>=4.32.0",
      "Trainer 4.12 only knows cuda/cpu and silently trains on CPU on an NPU host; native NPU support "
      "starts at transformers 4.32.0."),
])

E("p168-05-layoutlmv3-funsd-launcher", "examples/run_funsd.sh", "explicit_replacement",
  "LayoutLMv3 FUNSD fine-tuning shell launcher (torch.distributed.launch, --fp16)", [
    C("=set -e", "import_torch_npu", "npu_only_addition", True, SET_ENV,
      "CANN environment must be sourced or `import torch_npu` fails (libhccl.so / ASCEND_OPP_PATH)."),
    C("export CUDA_VISIBLE_DEVICES=", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "Ignored by the Ascend runtime, so device restriction is silently lost."),
    C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None,
      "No effect on HCCL (HCCL logging is controlled via ASCEND_GLOBAL_LOG_LEVEL); harmless leftover."),
    C("NUM_GPUS=$(echo ${CUDA_VISIBLE_DEVICES}", "env_var", "replace", True,
      "NUM_GPUS=$(echo ${ASCEND_RT_VISIBLE_DEVICES} | tr ',' '\\n' | wc -l)",
      "Once the export above is renamed, this would count an empty variable as 1 -> silently one process."),
])

E("p168-06-layoutxlm-xfun-trainer", "layoutlmft/trainers/xfun_trainer.py", "explicit_replacement",
  "layoutlmft XfunReTrainer (LayoutXLM relation extraction prediction_loop with torch.cuda.amp.autocast)", [
    C("from torch.cuda.amp import autocast", "amp", "replace", False,
      "from torch.npu.amp import autocast",
      "CUDA autocast is disabled with a warning on an NPU host -> eval silently runs fp32 (slower, still correct)."),
])

# ---------------------------------------------------------------------------------------------
# Donut (clovaai/donut)
# ---------------------------------------------------------------------------------------------

E("p168-07-donut-train", "train.py", "explicit_replacement",
  "Donut train.py (pytorch_lightning Trainer, gpus=, strategy='ddp', precision=16)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "Entry script; PL needs the npu device registered."),
    C('checkpoint = torch.load(path + "artifacts.ckpt")', "tensor_to_device", "replace", False,
      'checkpoint = torch.load(path + "artifacts.ckpt", map_location="cpu")',
      "Only fails when resuming a checkpoint written on a CUDA host (cuda-tagged storages); NPU-written ones load."),
    C('state_dict = torch.load(path + "pytorch_model.bin")', "tensor_to_device", "replace", False,
      'state_dict = torch.load(path + "pytorch_model.bin", map_location="cpu")',
      "Same as above for the weights file saved by save_pretrained from a CUDA model."),
    C("gpus=torch.cuda.device_count(),", "torch_cuda_api", "replace", True,
      "devices=torch.npu.device_count(),",
      "0 on an NPU host."),
    C('strategy="ddp",', "dist_backend", "replace", True,
      'strategy=DDPStrategy(process_group_backend="hccl"),',
      "PL picks 'nccl' only for cuda root devices and falls back to 'gloo', which cannot reduce NPU tensors."),
    C('accelerator="gpu",', "device_type", "replace", True,
      "accelerator=NPUAccelerator(),",
      "PL's GPU accelerator raises when no CUDA device is available; PL ships no NPU accelerator, a custom one "
      "(or a community plugin) is needed."),
    C("precision=16,", "amp", "replace", False,
      'precision="16-mixed",  # with MixedPrecisionPlugin("16-mixed", device="npu") in plugins',
      "Unconfirmed: PL's native AMP plugin builds autocast for 'cuda'; with a custom NPU accelerator it must be "
      "pointed at 'npu' or AMP is not applied."),
])

E("p168-08-donut-lightning-module", "lightning_module.py", "explicit_replacement",
  "Donut lightning_module.py (DonutModelPLModule / DonutDataPLModule)", [
    C("self.config.train_batch_sizes[0] * torch.cuda.device_count() * self.config.get(", "torch_cuda_api",
      "replace", True,
      'self.config.train_batch_sizes[0] * torch.npu.device_count() * self.config.get("num_nodes", 1)',
      "device_count() is 0 on an NPU host -> ZeroDivisionError computing max_iter when max_epochs is set."),
    C("=pin_memory=True,", "pin_memory", "replace", False,
      'pin_memory=True, pin_memory_device="npu",',
      "Without pin_memory_device the DataLoader only pins when CUDA is available: silently unpinned (perf)."),
    C("DataLoader(val_dataset, batch_size=batch_size, pin_memory=True, shuffle=False)", "pin_memory", "replace",
      False,
      'DataLoader(val_dataset, batch_size=batch_size, pin_memory=True, pin_memory_device="npu", shuffle=False)',
      "Same, validation loader."),
])

E("p168-09-donut-model", "donut/model.py", "explicit_replacement",
  "Donut donut/model.py (SwinEncoder + MBart decoder, inference() casts to half on cuda)", [
    C('if self.device.type == "cuda":  # half is not compatible', "device_type", "replace", True,
      'if self.device.type in ("cuda", "npu"):  # half is not compatible in cpu implementation.',
      "On NPU the branch is skipped: the input is neither cast to half nor moved to the device "
      "(the .to() is inside the branch) -> device/dtype mismatch against a half model on NPU."),
    C('if self.device.type != "cuda":', "device_type", "replace", True,
      'if self.device.type not in ("cuda", "npu"):',
      "On NPU the encoder output would be cast to fp32 while the decoder is half -> dtype mismatch in "
      "cross-attention."),
])

E("p168-10-donut-test", "test.py", "explicit_replacement",
  "Donut test.py (model.half(); model.to('cuda') when available)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "Entry script."),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on an NPU host -> evaluation silently runs on CPU in fp32."),
    C('pretrained_model.to("cuda")', "tensor_to_device", "replace", True, 'pretrained_model.to("npu")',
      "Raises once the guard is ported."),
])

# ---------------------------------------------------------------------------------------------
# Nougat (facebookresearch/nougat)
# ---------------------------------------------------------------------------------------------

E("p168-11-nougat-predict", "predict.py", "device_branch_or_abstraction",
  "Nougat predict.py (CLI; device choice delegated to nougat.utils.device)", [])

E("p168-12-nougat-device-utils", "nougat/utils/device.py", "device_branch_or_abstraction",
  "Nougat nougat/utils/device.py (default_batch_size from VRAM, move_to_device bf16 + cuda)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "This module is where both entry points (predict.py, app.py) touch the device API; importing torch_npu "
      "here covers both."),
    C("    if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "    if torch.npu.is_available():",
      "Batch size falls back to 1 with a misleading 'No GPU found' warning: performance only."),
    C("torch.cuda.get_device_properties(0).total_memory", "torch_cuda_api", "replace", False,
      "torch.npu.get_device_properties(0).total_memory / 1024 / 1024 / 1000 * 0.3",
      "Not reached until the guard above is ported; total_memory is one of the properties NPU supports."),
    C("if cuda and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if cuda and torch.npu.is_available():",
      "False on an NPU host -> the model silently stays on CPU."),
    C('model = model.to("cuda")', "tensor_to_device", "replace", True, 'model = model.to("npu")',
      "Raises once the guard is ported."),
])

E("p168-13-nougat-api", "app.py", "explicit_replacement",
  "Nougat app.py (FastAPI server: bf16 model to cuda, pin_memory loader, empty_cache)", [
    C("        if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "        if torch.npu.is_available():",
      "False on an NPU host -> the server silently converts on CPU."),
    C('model.to("cuda")', "tensor_to_device", "replace", True, 'model.to("npu")', "Raises once the guard is ported."),
    C("pin_memory=True,", "pin_memory", "replace", False, 'pin_memory=True, pin_memory_device="npu",',
      "Silently unpinned on NPU (perf)."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "Silent no-op when CUDA is not initialised; NPU cache is simply not released between requests."),
])

E("p168-14-nougat-rasterize", "nougat/dataset/rasterize.py", "device_branch_or_abstraction",
  "Nougat nougat/dataset/rasterize.py (pypdfium2 rendering, CPU only)", [])

# ---------------------------------------------------------------------------------------------
# UDOP / Pix2Struct fine-tuning
# ---------------------------------------------------------------------------------------------

E("p168-15-udop-finetune-rvlcdip", "finetune_rvlcdip.py", "explicit_replacement",
  "UDOP (i-Code-Doc) RVL-CDIP fine-tuning script with a Seq2SeqTrainer subclass", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "transformers>=4.32 imports torch_npu while parsing TrainingArguments, before the ported torch.npu calls."),
    C("torch.cuda.amp.autocast(enabled=self.args.fp16 or self.args.bf16, dtype=amp_dtype)", "amp", "replace", False,
      "with torch.no_grad(), torch.npu.amp.autocast(enabled=self.args.fp16 or self.args.bf16, dtype=amp_dtype):",
      "CUDA autocast is disabled with a warning on NPU -> generation during eval silently runs fp32 (slower)."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "Silent no-op on NPU; cache not returned after generation."),
    C("if training_args.bf16 and not (torch.cuda.is_available() and torch.cuda.is_bf16_supported()):",
      "device_capability_check", "replace", True,
      "if training_args.bf16 and not (torch.npu.is_available() and torch.npu.is_bf16_supported()):",
      "On an NPU host this silently switches a T5-based model from bf16 to fp16, where T5 activations overflow "
      "(NaN loss); Atlas A2 supports bf16."),
])

E("p168-16-udop-launcher", "scripts/finetune_rvlcdip.sh", "explicit_replacement",
  "UDOP RVL-CDIP torchrun launcher (nvidia-smi device count, NCCL/PYTORCH_CUDA_ALLOC_CONF env)", [
    C("OUTPUT_DIR=${OUTPUT_DIR:-", "import_torch_npu", "npu_only_addition", True, SET_ENV,
      "CANN environment must be sourced before torchrun starts the workers."),
    C("NUM_GPUS=$(nvidia-smi -L | wc -l)", "torch_cuda_api", "replace", True,
      'NUM_GPUS=$(npu-smi info -l | grep -c "NPU ID")',
      "nvidia-smi does not exist on an Ascend host -> NUM_GPUS=0 and torchrun refuses --nproc_per_node=0."),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "Ignored by HCCL; HCCL_ASYNC_ERROR_HANDLING is the torch_npu watchdog switch (already 1 by default)."),
    C("export NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None, "NVLink-specific NCCL tuning; no-op on Ascend."),
    C("export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512", "env_var", "replace", False,
      "export PYTORCH_NPU_ALLOC_CONF=max_split_size_mb:512",
      "Silently ignored by the NPU caching allocator; only fragmentation tuning is lost."),
])

E("p168-17-pix2struct-finetune", "train_pix2struct.py", "explicit_replacement",
  "Pix2Struct DocVQA fine-tuning loop (DDP, bf16/fp16 autocast, GradScaler, bitsandbytes/fused AdamW, torch.compile)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "Entry script."),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "Raises on a CPU/NPU torch build."),
    C('dist.init_process_group(backend="nccl")', "dist_backend", "replace", True,
      'dist.init_process_group(backend="hccl")', "NCCL is not available; HCCL is the NPU backend."),
    C("if args.cpu or not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if args.cpu or not torch.npu.is_available():",
      "True on an NPU host -> training silently runs on CPU."),
    C('return torch.device(f"cuda:{local_rank}" if local_rank >= 0 else "cuda")', "device_type", "replace", True,
      'return torch.device(f"npu:{local_rank}" if local_rank >= 0 else "npu")', "Raises once the guard is ported."),
    C("return bnb.optim.AdamW8bit(groups, lr=args.lr, betas=(0.9, 0.999))", "fused_optimizer", "replace", True,
      "return torch_npu.optim.NpuFusedAdamW(groups, lr=args.lr, betas=(0.9, 0.999))",
      "Only with --optim adamw_8bit: bitsandbytes 8-bit optimizers are CUDA kernels (NPU support covers NF4 only)."),
    C("fused=torch.cuda.is_available())", "fused_optimizer", "replace", False,
      "return torch_npu.optim.NpuFusedAdamW(groups, lr=args.lr, betas=(0.9, 0.999))",
      "Falls back to the unfused AdamW on NPU (perf); fused=True would not accept NPU params, so use NpuFusedAdamW."),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "Lazy no-op without CUDA; torch.manual_seed above is what seeds the run."),
    C("use_bf16 = args.bf16 and torch.cuda.is_bf16_supported()", "device_capability_check", "replace", True,
      "use_bf16 = args.bf16 and torch.npu.is_bf16_supported()",
      "Queries the CUDA device (raises without CUDA, or reports False) -> at best a silent switch to fp16 for a "
      "T5-style decoder that overflows in fp16."),
    C("scaler = torch.cuda.amp.GradScaler(enabled=use_amp and not use_bf16)", "amp", "replace", False,
      "scaler = torch.npu.amp.GradScaler(enabled=use_amp and not use_bf16)",
      "Disabled with a warning on NPU; only matters for the fp16 path."),
    C('return torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=use_amp)', "amp", "replace", False,
      'return torch.autocast(device_type="npu", dtype=amp_dtype, enabled=use_amp)',
      "CUDA autocast is disabled with a warning -> silently fp32 training (slower, more memory)."),
    C('model = torch.compile(model, mode="max-autotune")', "compile_mode", "replace", False,
      'model = torch.compile(model, backend="npugraphs")',
      "Only with --compile. Unconfirmed for torch 2.1: Inductor's max-autotune relies on Triton GPU codegen; "
      "NPU graph mode needs a newer torch_npu."),
    C("pin_memory=True,", "pin_memory", "replace", False, 'pin_memory=True, pin_memory_device="npu",',
      "Silently unpinned on NPU (perf)."),
    C("mem = torch.cuda.max_memory_allocated() / 2 ** 30", "torch_cuda_api", "replace", False,
      "mem = torch.npu.max_memory_allocated() / 2 ** 30", "Logs 0 on NPU; logging only."),
])

E("p168-18-pix2struct-environment", "environment.yml", "explicit_replacement",
  "conda environment.yml for the Pix2Struct fine-tuning project (pytorch + nvidia channels, pytorch-cuda)", [
    C("=- nvidia", "torch_cuda_api", "removal", False, None,
      "Channel is unused once pytorch-cuda is gone; harmless."),
    C("- pytorch-cuda=12.1", "torch_cuda_api", "replace", True, "- cpuonly",
      "Selects the CUDA build of pytorch (unsatisfiable on aarch64); torch_npu needs the CPU build."),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post10",
      "torch-npu pin matching pytorch=2.1.0."),
    C("- bitsandbytes==0.41.3", "custom_cuda_extension", "removal", False, None,
      "CUDA-kernel package, only used by --optim adamw_8bit; installs but cannot run on NPU."),
])

# ---------------------------------------------------------------------------------------------
# Table Transformer (microsoft/table-transformer, vendored DETR)
# ---------------------------------------------------------------------------------------------

E("p168-19-tatr-main", "src/main.py", "device_branch_or_abstraction",
  "Table Transformer src/main.py (DETR training/eval driver, device from config/--device)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "Entry script; torch.device(args.device) with 'npu' needs torch_npu."),
])

E("p168-20-tatr-misc", "detr/util/misc.py", "explicit_replacement",
  "DETR util/misc.py as vendored by Table Transformer (all_gather on cuda, init_distributed_mode)", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "tensor_to_device",
      "replace", True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
      "Raises under distributed training. (fp64 all_reduce on HCCL is unconfirmed; float32 would be the safe "
      "fallback.)"),
    C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", "replace", True,
      'tensor = torch.ByteTensor(storage).to("npu")', "Raises when world_size > 1."),
    C('local_size = torch.tensor([tensor.numel()], device="cuda")', "tensor_to_device", "replace", True,
      'local_size = torch.tensor([tensor.numel()], device="npu")', "Raises when world_size > 1."),
    C('size_list = [torch.tensor([0], device="cuda") for _ in range(world_size)]', "tensor_to_device", "replace",
      True, 'size_list = [torch.tensor([0], device="npu") for _ in range(world_size)]', "Raises when world_size > 1."),
    C('tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="cuda"))', "tensor_to_device",
      "replace", True, 'tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="npu"))',
      "Raises when world_size > 1."),
    C('padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="cuda")', "tensor_to_device",
      "replace", True, 'padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="npu")',
      "Raises when world_size > 1 and sizes differ."),
    C("has_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "has_cuda = torch.npu.is_available()", "Only decides whether 'max mem' is logged."),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB))", "Logging only (reached once has_cuda is ported)."),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()", "SLURM path: modulo by 0 on an NPU host."),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "Raises on a CPU/NPU torch build."),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True, "args.dist_backend = 'hccl'",
      "NCCL is not available; HCCL is the NPU backend."),
])

E("p168-21-tatr-engine", "detr/engine.py", "device_branch_or_abstraction",
  "DETR engine.py (train_one_epoch / evaluate, device passed in)", [])

E("p168-22-tatr-inference", "src/inference.py", "explicit_replacement",
  "Table Transformer src/inference.py (TableExtractionPipeline, --detection_device/--structure_device)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "Entry script."),
    C("parser.add_argument('--detection_device', default=\"cuda\")", "device_type", "replace", True,
      "parser.add_argument('--detection_device', default=\"npu\")",
      "Default device string; torch.load(map_location=torch.device('cuda')) raises on an NPU host."),
    C("parser.add_argument('--structure_device', default=\"cuda\")", "device_type", "replace", True,
      "parser.add_argument('--structure_device', default=\"npu\")", "Same for the structure model."),
])

E("p168-23-tatr-launcher", "scripts/train_structure.sh", "explicit_replacement",
  "Table Transformer structure-training launcher (torch.distributed.launch --use_env, NCCL env, --device cuda)", [
    C("# 8 x V100 32GB", "import_torch_npu", "npu_only_addition", True, SET_ENV,
      "Must be sourced before `set -euo pipefail`: CANN's set_env.sh reads unset variables and aborts under set -u."),
    C("export CUDA_VISIBLE_DEVICES=", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "Ignored on Ascend; device restriction silently lost."),
    C("export NCCL_SOCKET_IFNAME=", "env_var", "replace", False,
      "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
      "Ignored by HCCL; matters only on multi-homed hosts where HCCL's default NIC choice is wrong."),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "No HCCL meaning; no-op."),
    C("--device cuda \\", "device_type", "replace", True, "--device npu \\",
      "Passed to torch.device(args.device) in main.py."),
])

E("p168-24-tatr-structure-config", "src/structure_config.json", "explicit_replacement",
  "Table Transformer structure_config.json (DETR hyper-parameters incl. device)", [
    C('"device": "cuda",', "device_type", "replace", True, '"device": "npu",',
      "Used by main.py when --device is not given and by DETR build_model for the criterion."),
])

E("p168-25-msda-setup", "models/ops/setup.py", "kernel_rewrite",
  "Deformable-DETR models/ops/setup.py (MultiScaleDeformableAttention CUDAExtension) as used by layout/table detectors", [
    C("raise NotImplementedError('Cuda is not availabel')", "custom_cuda_extension", "replace", True,
      "return []  # no nvcc on Ascend: MSDeformAttn uses the PyTorch path (grid_sample)",
      "setup.py aborts on a host without CUDA; there is no NPU kernel for MSDA in torch_npu's op lists, so the "
      "extension is skipped and the pure-PyTorch implementation is used instead (slower)."),
])

E("p168-26-msda-functions", "models/ops/functions/ms_deform_attn_func.py", "kernel_rewrite",
  "Deformable-DETR ms_deform_attn_func.py (autograd Function over the compiled MSDA op + PyTorch reference)", [
    C("import MultiScaleDeformableAttention as MSDA", "custom_cuda_extension", "replace", True,
      "MSDA = None  # CUDA-only extension is not built on Ascend; see ms_deform_attn_core_pytorch",
      "ImportError at import time once the extension is not built."),
])

E("p168-27-msda-module", "models/ops/modules/ms_deform_attn.py", "kernel_rewrite",
  "Deformable-DETR MSDeformAttn module (call site of MSDeformAttnFunction.apply)", [
    C("from ..functions import MSDeformAttnFunction", "custom_cuda_extension", "replace", True,
      "from ..functions.ms_deform_attn_func import ms_deform_attn_core_pytorch",
      "The ported call site needs the PyTorch implementation."),
    C("output = MSDeformAttnFunction.apply(", "custom_cuda_extension", "replace", True,
      "output = ms_deform_attn_core_pytorch(value, input_spatial_shapes, sampling_locations, attention_weights)",
      "MSDA CUDA op replaced by the grid_sample-based implementation (grid_sampler_2d has an NPU kernel)."),
    C("value, input_spatial_shapes, input_level_start_index, sampling_locations, attention_weights, self.im2col_step)",
      "custom_cuda_extension", "removal", True, None,
      "Continuation of the old call (level_start_index / im2col_step are CUDA-kernel arguments)."),
])

# ---------------------------------------------------------------------------------------------
# docTR (mindee/doctr) references + API server
# ---------------------------------------------------------------------------------------------

E("p168-28-doctr-train-recognition", "references/recognition/train_pytorch.py", "explicit_replacement",
  "docTR references/recognition/train_pytorch.py (--device int, --amp, pin_memory=cuda available)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "Entry script."),
    C("return images.cuda(non_blocking=True) if torch.cuda.is_available() else images", "tensor_to_device",
      "replace", True, "return images.npu(non_blocking=True) if torch.npu.is_available() else images",
      "On an NPU host the batches silently stay on CPU."),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", "replace", False, "scaler = torch.npu.amp.GradScaler()",
      "Disabled with a warning on NPU (--amp only)."),
    C("with torch.cuda.amp.autocast():", "amp", "replace", False, "with torch.npu.amp.autocast():",
      "CUDA autocast disabled on NPU -> silently fp32 (--amp only)."),
    C("with torch.cuda.amp.autocast(enabled=amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=amp):", "Same, evaluation loop."),
    C("sampler=SequentialSampler(val_set), pin_memory=torch.cuda.is_available()", "pin_memory", "replace", False,
      "val_loader = DataLoader(val_set, batch_size=args.batch_size, drop_last=False, num_workers=args.workers, "
      "sampler=SequentialSampler(val_set), pin_memory=torch.npu.is_available(), pin_memory_device=\"npu\", "
      "collate_fn=val_set.collate_fn)",
      "Evaluates False on NPU -> unpinned (perf)."),
    C("=pin_memory=torch.cuda.is_available(),", "pin_memory", "replace", False,
      'pin_memory=torch.npu.is_available(), pin_memory_device="npu",', "Same, train loader."),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
      "With --device N this raises 'PyTorch cannot access your GPU' on an NPU host."),
    C("if args.device >= torch.cuda.device_count():", "torch_cuda_api", "replace", True,
      "if args.device >= torch.npu.device_count():", "0 devices -> 'Invalid device index' once the check above passes."),
    C("elif torch.cuda.is_available():", "torch_cuda_api", "replace", True, "elif torch.npu.is_available():",
      "Without --device the default switch to the accelerator never happens -> silent CPU training."),
    C("torch.cuda.set_device(args.device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.device)",
      "Raises on a CPU/NPU torch build."),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "Raises."),
])

E("p168-29-doctr-api-server", "api/app/main.py", "explicit_replacement",
  "docTR-style FastAPI OCR server (PyTorch predictor .to(cuda).half(), warm-up sync, OOM handling)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "Server entry module."),
    C('DEVICE = os.getenv("OCR_DEVICE", "cuda:0")', "device_type", "replace", True,
      'DEVICE = os.getenv("OCR_DEVICE", "npu:0")', "Default device string."),
    C('if torch.cuda.is_available() and DEVICE.startswith("cuda"):', "torch_cuda_api", "replace", True,
      'if torch.npu.is_available() and DEVICE.startswith("npu"):',
      "False on an NPU host -> predictor silently served from CPU."),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "Only guards the warm-up sync and a log line."),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", False, "torch.npu.synchronize()",
      "Inside the guard above; warm-up timing only."),
    C('logger.info("warm-up done on %s (%s)", DEVICE, torch.cuda.get_device_name(0))', "torch_cuda_api", "replace",
      False, 'logger.info("warm-up done on %s (%s)", DEVICE, torch.npu.get_device_name(0))',
      "Inside the guard; logging only."),
    C('"gpu_mem_mb": round(torch.cuda.memory_allocated() / 2 ** 20, 1),', "torch_cuda_api", "replace", False,
      '"gpu_mem_mb": round(torch.npu.memory_allocated() / 2 ** 20, 1),', "Health endpoint silently reports 0."),
    C("except torch.cuda.OutOfMemoryError:", "torch_cuda_api", "replace", False,
      "except RuntimeError as e:  # NPU OOM; re-raise unless 'out of memory' in str(e)",
      "Unconfirmed whether torch_npu raises NPU OOM as torch.cuda.OutOfMemoryError; if not, OOM becomes a 500 "
      "instead of a 503 with a cache flush."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "Silent no-op on NPU."),
    C("torch.cuda.synchronize(DEVICE)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(DEVICE)",
      "Unguarded: raises on every request on an NPU host."),
])

E("p168-30-doctr-dockerfile", "api/Dockerfile", "explicit_replacement",
  "docTR API Dockerfile (nvidia/cuda base image, cu118 torch wheels)", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04", "torch_cuda_api", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "Needs the CANN toolkit (and its set_env exports) in the image; the CUDA runtime is useless."),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0",
      "Only read by the NVIDIA/Ascend container runtimes; with plain --device mounts it is irrelevant."),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None, "NVIDIA runtime only."),
    C("--index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api", "replace", True,
      "RUN pip3 install --no-cache-dir torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheels; torch_npu needs the CPU build (x86) / PyPI build (aarch64)."),
    C("COPY requirements.txt /app/requirements.txt", "import_torch_npu", "npu_only_addition", True,
      "RUN pip3 install --no-cache-dir torch-npu==2.1.0.post10", "torch-npu pin."),
    C("ENV OCR_DEVICE=cuda:0", "device_type", "replace", True, "ENV OCR_DEVICE=npu:0", "Read by the server."),
])

E("p168-31-doctr-compose", "api/docker-compose.yml", "explicit_replacement",
  "docTR API docker-compose.yml (deploy.resources.reservations nvidia GPU)", [
    C("- OCR_DEVICE=cuda:0", "device_type", "replace", True, "- OCR_DEVICE=npu:0", "Read by the server."),
    C("- CUDA_VISIBLE_DEVICES=0", "env_var", "replace", False, "- ASCEND_RT_VISIBLE_DEVICES=0",
      "Only one device is mapped into the container, so this is a no-op either way."),
    C("- ~/.cache/doctr:/root/.cache/doctr", "device_type", "npu_only_addition", True,
      "- /usr/local/Ascend/driver:/usr/local/Ascend/driver:ro",
      "Without Ascend Docker Runtime the driver libraries (libascend_hal.so) must be mounted."),
    C("- driver: nvidia", "device_type", "replace", True, "- /dev/davinci0:/dev/davinci0",
      "compose fails to start without the NVIDIA runtime; NPUs are passed as /dev/davinciN plus "
      "/dev/davinci_manager, /dev/devmm_svm, /dev/hisi_hdc under services.ocr-api.devices."),
    C("capabilities: [gpu]", "device_type", "removal", True, None,
      "Part of the NVIDIA device reservation (goes with the deploy block)."),
])

# ---------------------------------------------------------------------------------------------
# Shared PDF rendering / batching utility
# ---------------------------------------------------------------------------------------------

E("p168-32-pdf-batching-utils", "docai/batching.py", "device_branch_or_abstraction",
  "In-repo PDF rendering + batching helper (pypdfium2, auto batch size from free memory, CUDA-stream prefetcher)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "Library module: needed only if the calling job does not already import torch_npu."),
    C("pin_memory=True,", "pin_memory", "replace", False, 'pin_memory=True, pin_memory_device="npu",',
      "Silently unpinned on NPU; the prefetcher then cannot overlap copies (perf)."),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "select_device() silently returns CPU on an NPU host."),
    C('return torch.device("cuda", torch.cuda.current_device())', "device_type", "replace", True,
      'return torch.device("npu", torch.npu.current_device())', "Raises once the guard is ported."),
    C('if device.type != "cuda":', "device_type", "replace", False, 'if device.type not in ("cuda", "npu"):',
      "Batch size silently 1 on NPU (perf)."),
    C("free, total = torch.cuda.mem_get_info(device)", "torch_cuda_api", "replace", False,
      "free, total = torch.npu.mem_get_info(device)", "Reached only once the device-type check is ported."),
    C('device: Union[str, torch.device] = "cuda"', "device_type", "replace", True,
      'def __init__(self, loader: Iterable, device: Union[str, torch.device] = "npu", dtype: Optional[torch.dtype] = None):',
      "CUDAPrefetcher(loader) with the default device (as in the module docstring) raises."),
    C("self.stream = torch.cuda.Stream(device=self.device)", "torch_cuda_api", "replace", True,
      "self.stream = torch.npu.Stream(device=self.device)", "Raises on a CPU/NPU torch build."),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True, "with torch.npu.stream(self.stream):",
      "Raises."),
    C("torch.cuda.current_stream(self.device).wait_stream(self.stream)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream(self.device).wait_stream(self.stream)", "Raises."),
    C("t.record_stream(torch.cuda.current_stream(self.device))", "torch_cuda_api", "replace", True,
      "t.record_stream(torch.npu.current_stream(self.device))", "Raises."),
    C('if device.type == "cuda":', "device_type", "replace", False, 'if device.type in ("cuda", "npu"):',
      "NPU takes the synchronous path: correct but no copy/compute overlap."),
])
