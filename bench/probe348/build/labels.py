# Labels for probe348 (semi-supervised video object segmentation: XMem / STCN / Cutie / AOT / DeAOT / STM / MiVOS).
# One label per upstream line that a careful porter would edit for Ascend NPU (torch_npu).
# The port these labels describe pins torch==2.1.0 + torch-npu==2.1.0.post17 (torch_npu autoload only exists
# from 2.5.1, so entry points need an explicit `import torch_npu`).
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry point: torch 2.1.0 has no torch_npu autoload (only from 2.5.1), so torch.npu / the 'npu' "
               "device and the hccl backend do not exist until torch_npu is imported")
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
SET_ENV_NOTE = ("CANN environment (LD_LIBRARY_PATH to libascendcl etc.) must be loaded before python starts, "
                "otherwise `import torch_npu` fails; only unnecessary if the login shell already sources it")
NOOP_CACHE = ("torch.cuda.empty_cache() is a silent no-op when CUDA was never initialised; the NPU caching "
              "allocator is simply not trimmed (memory/perf only)")
MEM_STAT = ("torch.cuda memory statistics return 0 when CUDA is not initialised - log-only value, silently wrong")
AMP_NOTE = ("torch.cuda.amp.autocast on a host without CUDA only warns and disables itself: the requested mixed "
            "precision silently does not happen on the NPU")
LOAD_NOTE = ("checkpoint was saved from CUDA tensors; torch.load without map_location tries to restore them on a "
             "CUDA device and raises on an NPU host")


# ---------------------------------------------------------------- XMem
E("xmem_train", "train.py", "explicit_replacement",
  "XMem train.py (hkchengrex/XMem): torchrun entry, nccl init, per-rank set_device, staged training loop",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('distributed.init_process_group(backend="nccl")', "dist_backend", "replace", True,
        'distributed.init_process_group(backend="hccl")', "NCCL backend is not available in torch_npu builds; HCCL is the NPU collective backend"),
      C("print(f'CUDA Device count: {torch.cuda.device_count()}')", "torch_cuda_api", "replace", False,
        "print(f'NPU Device count: {torch.npu.device_count()}')", "log-only; torch.cuda.device_count() silently prints 0 on an NPU host"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(local_rank)", "torch.cuda.set_device raises on a torch build without CUDA; each rank must bind its NPU"),
  ])

E("xmem_trainer", "model/trainer.py", "explicit_replacement",
  "XMem model/trainer.py: DDP wrapper, .cuda() on batches, GradScaler/autocast, checkpoint map_location",
  [
      C("XMem(config).cuda(),", "tensor_to_device", "replace", True, "XMem(config).npu(),",
        ".cuda() raises without CUDA; the model must live on the rank's NPU before DDP wraps it"),
      C("self.scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
        "self.scaler = torch.npu.amp.GradScaler()",
        "torch.cuda.amp.GradScaler disables itself without CUDA; with fp16 autocast on NPU the unscaled gradients underflow"),
      C("data[k] = v.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "data[k] = v.npu(non_blocking=True)", "every batch tensor is moved with .cuda(), which raises on an NPU host"),
      C("with torch.cuda.amp.autocast(enabled=self.config['amp']):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=self.config['amp']):", AMP_NOTE),
      C("torch.cuda.max_memory_allocated()/(2**20)", "torch_cuda_api", "replace", False,
        "self.logger.log_scalar('train/mem_MB', torch.npu.max_memory_allocated()/(2**20), it)", MEM_STAT),
      C("map_location = 'cuda:%d' % self.local_rank", "device_type", "replace", True,
        "map_location = 'npu:%d' % self.local_rank",
        "target device of the checkpoint remap; 'cuda:k' cannot be materialised on an NPU host (the 'cuda:0' dict key on the next line names the saved location and stays)"),
      C("map_location = f'cuda:{self.local_rank}'", "device_type", "replace", True,
        "map_location = f'npu:{self.local_rank}'", "same remap target for load_network"),
  ])

E("xmem_network", "model/network.py", "device_branch_or_abstraction",
  "XMem model/network.py: top-level nn.Module, weight loading with caller-supplied map_location (device-agnostic)",
  [])

E("xmem_memory_manager", "inference/memory_manager.py", "explicit_replacement",
  "XMem inference/memory_manager.py with a long-video fork's pinned-host offload of long-term memory",
  [
      C("self.long_mem.k = self._lt_key_host.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "self.long_mem.k = self._lt_key_host.npu(non_blocking=True)", "offloaded memory bank is brought back with .cuda(); raises on an NPU host"),
      C("self.long_mem.s = self._lt_shrinkage_host.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "self.long_mem.s = self._lt_shrinkage_host.npu(non_blocking=True)", "same, shrinkage term"),
      C("self.long_mem.v = [v.cuda(non_blocking=True) for v in self._lt_value_host]", "tensor_to_device", "replace", True,
        "self.long_mem.v = [v.npu(non_blocking=True) for v in self._lt_value_host]", "same, value groups"),
      C("self._lt_key_host = self.long_mem.k.cpu().pin_memory()", "pin_memory", "replace", False,
        "self._lt_key_host = self.long_mem.k.cpu().pin_memory(device='npu')",
        "unconfirmed: bare pin_memory() targets the CUDA host allocator in torch 2.1; pinning for the NPU keeps the H2D copy asynchronous"),
      C("self._lt_shrinkage_host = self.long_mem.s.cpu().pin_memory()", "pin_memory", "replace", False,
        "self._lt_shrinkage_host = self.long_mem.s.cpu().pin_memory(device='npu')", "same as the key buffer (unconfirmed)"),
      C("self._lt_value_host = [v.cpu().pin_memory() for v in self.long_mem.v]", "pin_memory", "replace", False,
        "self._lt_value_host = [v.cpu().pin_memory(device='npu') for v in self.long_mem.v]", "same as the key buffer (unconfirmed)"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", NOOP_CACHE),
  ])

E("xmem_eval", "eval.py", "explicit_replacement",
  "XMem eval.py: DAVIS/YouTubeVOS/MOSE evaluation with CUDA-event timing and AMP",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("network = XMem(config, args.model).cuda().eval()", "tensor_to_device", "replace", True,
        "network = XMem(config, args.model, map_location='cpu').npu().eval()",
        ".cuda() raises; also XMem() torch.loads the CUDA-saved weights with map_location=None, which fails without CUDA"),
      C("model_weights = torch.load(args.model)", "tensor_to_device", "replace", True,
        "model_weights = torch.load(args.model, map_location='cpu')", LOAD_NOTE),
      C("with torch.cuda.amp.autocast(enabled=not args.benchmark):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=not args.benchmark):", AMP_NOTE),
      C("rgb = data['rgb'].cuda()[0]", "tensor_to_device", "replace", True, "rgb = data['rgb'].npu()[0]",
        ".cuda() raises on an NPU host"),
      C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "start = torch.npu.Event(enable_timing=True)", "torch.cuda.Event is a dummy class on a CPU-only torch build and raises when instantiated"),
      C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "end = torch.npu.Event(enable_timing=True)", "same"),
      C("msk = torch.Tensor(msk).cuda()", "tensor_to_device", "replace", True, "msk = torch.Tensor(msk).npu()",
        ".cuda() raises on an NPU host"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "torch.cuda.synchronize lazily initialises CUDA and raises on a build without CUDA"),
      C("print(f'Max allocated memory (MB): {torch.cuda.max_memory_allocated() / (2**20)}')", "torch_cuda_api", "replace", False,
        "print(f'Max allocated memory (MB): {torch.npu.max_memory_allocated() / (2**20)}')", MEM_STAT),
  ])

E("xmem_interactive", "interactive_demo.py", "device_branch_or_abstraction",
  "XMem interactive_demo.py: cuda/mps/cpu device pick passed down to the GUI, S2M and f-BRS",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
        "if hasattr(torch, 'npu') and torch.npu.is_available():\n    device = torch.device('npu')\nelif torch.cuda.is_available():",
        "without an NPU branch the cascade silently falls through to CPU on an NPU host"),
      C("with torch.cuda.amp.autocast(enabled=not args.no_amp):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=(not args.no_amp) and device.type == 'npu'):", AMP_NOTE),
  ])

E("xmem_launch", "scripts/train_s03.sh", "explicit_replacement",
  "XMem-style stage-0+3 launcher: CUDA_VISIBLE_DEVICES, OMP_NUM_THREADS, torch.distributed.run",
  [
      C("=set -e", "import_torch_npu", "npu_only_addition", True, SET_ENV, SET_ENV_NOTE),
      C("export CUDA_VISIBLE_DEVICES=${GPUS}", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=${GPUS}",
        "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; ranks would silently land on NPUs 0..N-1 instead of the chosen ones"),
      C("export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512", "env_var", "replace", False,
        "export PYTORCH_NPU_ALLOC_CONF=max_split_size_mb:512", "allocator tuning only; the CUDA variable is silently ignored by torch_npu"),
      C("CUDA_VISIBLE_DEVICES=${GPUS%%,*} python eval.py", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=${GPUS%%,*} python eval.py --model ${LAST} --output ../output/${EXP_ID}_d17 --dataset D17",
        "device selection for the sanity eval is silently ignored otherwise"),
  ])

E("xmem_requirements", "requirements.txt", "explicit_replacement",
  "XMem-style requirements.txt pinning CUDA 11.3 wheels of torch/torchvision",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu113", "device_type", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "Ascend docs install CPU torch from the cpu index on x86; once the +cu113 pins are gone the cu113 index is merely useless (unconfirmed that a CUDA torch wheel breaks torch_npu)"),
      C("torch==1.12.1+cu113", "device_type", "replace", True, "torch==2.1.0",
        "+cu113 local-version wheel has no aarch64 build and torch_npu must match the torch version exactly"),
      C("torchvision==0.13.1+cu113", "device_type", "replace", True, "torchvision==0.16.0",
        "CUDA wheel; torchvision must match the new torch 2.1.0"),
      C("=pyyaml", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post17",
        "the torch_npu wheel itself (pairs with torch 2.1.0); pyyaml above is one of its prerequisites"),
      C("=nvidia-ml-py3", "device_type", "removal", False, None,
        "NVML bindings have no NPU counterpart; the optional logger hook just fails to init (npu-smi / torch.npu.mem_get_info instead)"),
  ])

E("xmem_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "XMem-style Dockerfile on nvidia/cuda devel base with cu113 torch wheels",
  [
      C("FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04", "device_type", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "CUDA base image has no CANN toolkit/driver userland; torch_npu cannot load in it"),
      C("RUN pip install --no-cache-dir torch==1.12.1+cu113 torchvision==0.13.1+cu113 \\", "device_type", "replace", True,
        "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post17 pyyaml \\",
        "CUDA wheels of torch; the NPU image needs the matching CPU torch plus the torch-npu wheel"),
      C("--extra-index-url https://download.pytorch.org/whl/cu113", "device_type", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu", "index only matters for the pins above (unconfirmed that a CUDA torch wheel breaks torch_npu)"),
      C('ENV TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6+PTX"', "custom_cuda_extension", "removal", False, None,
        "nvcc arch list; nothing is compiled with nvcc on the NPU image"),
      C("ENV FORCE_CUDA=1", "custom_cuda_extension", "removal", False, None,
        "forces CUDA builds of extensions; meaningless without nvcc"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=all",
        "read by the nvidia container runtime only; NPUs are exposed by the Ascend docker runtime / --device /dev/davinci* (unconfirmed which the target cluster uses)"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "nvidia container runtime setting; ignored on Ascend hosts"),
  ])

# ---------------------------------------------------------------- STCN
E("stcn_eval_davis", "eval_davis.py", "explicit_replacement",
  "STCN eval_davis.py: model.cuda().eval(), cuda sync + time.time() timing, AMP flag",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("prop_model = STCN().cuda().eval()", "tensor_to_device", "replace", True, "prop_model = STCN().npu().eval()",
        ".cuda() raises on an NPU host"),
      C("prop_saved = torch.load(args.model)", "tensor_to_device", "replace", True,
        "prop_saved = torch.load(args.model, map_location='cpu')", LOAD_NOTE),
      C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=args.amp):", AMP_NOTE),
      C("rgb = data['rgb'].cuda()", "tensor_to_device", "replace", True, "rgb = data['rgb'].npu()", ".cuda() raises"),
      C("msk = data['gt'][0].cuda()", "tensor_to_device", "replace", True, "msk = data['gt'][0].npu()", ".cuda() raises"),
      C("torch.cuda.synchronize()  # wait for the H2D copies", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # wait for the H2D copies before starting the clock", "raises without CUDA; NPU timing needs the NPU sync"),
      C("out_masks = torch.zeros((processor.t, 1, *size), dtype=torch.uint8, device='cuda')", "device_type", "replace", True,
        "out_masks = torch.zeros((processor.t, 1, *size), dtype=torch.uint8, device='npu')", "'cuda' device string raises"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "raises without CUDA"),
  ])

E("stcn_inference_core", "inference_core.py", "device_branch_or_abstraction",
  "STCN inference_core.py: memory-profile driven buffering between host and GPU, hard-coded self.device = 'cuda'",
  [
      C("self.device = 'cuda'", "device_type", "replace", True, "self.device = 'npu'",
        "single place that decides the compute device; every .to(self.device) below follows it"),
      C("self.images = self.images.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "self.images = self.images.to(self.device, non_blocking=True)", ".cuda() raises on an NPU host"),
      C("mask, _ = pad_divide_by(mask.cuda(), 16)", "tensor_to_device", "replace", True,
        "mask, _ = pad_divide_by(mask.to(self.device), 16)", ".cuda() raises"),
      C("if prob.is_cuda:", "device_type", "replace", True, "if prob.device.type != 'cpu':",
        "is_cuda is False for NPU tensors, so an NPU tensor is returned to callers that expect a host tensor (numpy/PIL)"),
  ])

# ---------------------------------------------------------------- AOT / DeAOT
E("aot_default_config", "configs/default.py", "explicit_replacement",
  "AOT/DeAOT configs/default.py (yoxu515/aot-benchmark): DIST_BACKEND, TEST_GPU_ID, TRAIN_GPUS, AMP/cuDNN flags",
  [
      C('self.DIST_BACKEND = "nccl"', "dist_backend", "replace", True, 'self.DIST_BACKEND = "hccl"  # "gloo"',
        "value is passed straight to dist.init_process_group in the trainer; nccl does not exist on NPU"),
  ])

E("aot_train_tool", "tools/train.py", "explicit_replacement",
  "AOT tools/train.py: argparse front-end spawning one process per GPU with torch.multiprocessing",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        IMPORT_NOTE + "; spawned workers re-import this module, so the import also reaches every rank"),
      C("cfg.TRAIN_GPUS = torch.cuda.device_count() - args.start_gpu", "torch_cuda_api", "replace", True,
        "cfg.TRAIN_GPUS = torch.npu.device_count() - args.start_gpu",
        "returns 0 on an NPU host, so --gpu_num 0 silently trains on a single device instead of all NPUs"),
  ])

E("aot_trainer", "networks/managers/trainer.py", "explicit_replacement",
  "AOT networks/managers/trainer.py: per-process set_device, SyncBN+DDP, GradScaler, EMA, .cuda(self.gpu) batches",
  [
      C("torch.cuda.set_device(self.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(self.gpu)",
        "raises on a build without CUDA; each spawned rank must bind its NPU"),
      C("self.model = build_vos_model(cfg.MODEL_VOS, cfg).cuda(self.gpu)", "tensor_to_device", "replace", True,
        "self.model = build_vos_model(cfg.MODEL_VOS, cfg).npu(self.gpu)", ".cuda() raises"),
      C("self.model.encoder).cuda(self.gpu)", "tensor_to_device", "replace", True, "self.model.encoder).npu(self.gpu)",
        "SyncBN-converted encoder re-moved with .cuda(); raises"),
      C("self.scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True, "self.scaler = torch.npu.amp.GradScaler()",
        "CUDA GradScaler disables itself without CUDA; fp16 grads unscaled once autocast is ported"),
      C("ref_imgs = ref_imgs.cuda(self.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
        "ref_imgs = ref_imgs.npu(self.gpu, non_blocking=True)", ".cuda() raises"),
      C("prev_imgs = prev_imgs.cuda(self.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
        "prev_imgs = prev_imgs.npu(self.gpu, non_blocking=True)", ".cuda() raises"),
      C("curr_img.cuda(self.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
        "curr_img.npu(self.gpu, non_blocking=True)", ".cuda() raises"),
      C("ref_labels = ref_labels.cuda(self.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
        "ref_labels = ref_labels.npu(self.gpu, non_blocking=True)", ".cuda() raises"),
      C("prev_labels = prev_labels.cuda(self.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
        "prev_labels = prev_labels.npu(self.gpu, non_blocking=True)", ".cuda() raises"),
      C("curr_label.cuda(self.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
        "curr_label.npu(self.gpu, non_blocking=True)", ".cuda() raises"),
      C("with torch.cuda.amp.autocast(enabled=True):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=True):", AMP_NOTE),
      C("max_mem = torch.cuda.max_memory_allocated(", "torch_cuda_api", "replace", False,
        "max_mem = torch.npu.max_memory_allocated(", MEM_STAT),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", NOOP_CACHE),
  ])

E("aot_evaluator", "networks/managers/evaluator.py", "explicit_replacement",
  "AOT networks/managers/evaluator.py: multi-GPU sequence queue, CUDA-event frame timing, per-sequence empty_cache",
  [
      C("torch.cuda.set_device(self.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(self.gpu)",
        "raises without CUDA; binds the rank's NPU"),
      C("self.model = build_vos_model(cfg.MODEL_VOS, cfg).cuda(self.gpu)", "tensor_to_device", "replace", True,
        "self.model = build_vos_model(cfg.MODEL_VOS, cfg).npu(self.gpu)", ".cuda() raises"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", NOOP_CACHE),
      C("current_img = current_img.cuda(self.gpu,", "tensor_to_device", "replace", True,
        "current_img = current_img.npu(self.gpu,", ".cuda() raises"),
      C("current_label = sample['current_label'].cuda(", "tensor_to_device", "replace", True,
        "current_label = sample['current_label'].npu(", ".cuda() raises"),
      C("=now_timer = torch.cuda.Event(", "torch_cuda_api", "replace", True, "now_timer = torch.npu.Event(",
        "torch.cuda.Event cannot be instantiated on a CPU-only torch build"),
      C("now_timer = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "now_timer = torch.npu.Event(enable_timing=True)", "same"),
      C("torch.cuda.synchronize(self.gpu)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(self.gpu)",
        "raises without CUDA"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA; needed before reading NPU event times"),
      C("max_mem = torch.cuda.max_memory_allocated(", "torch_cuda_api", "replace", False,
        "max_mem = torch.npu.max_memory_allocated(", MEM_STAT),
  ])

E("aot_attention", "networks/layers/attention.py", "kernel_rewrite",
  "AOT networks/layers/attention.py: long-term MHA and short-term local attention using spatial-correlation-sampler",
  [
      C("=self.enable_corr = enable_corr", "custom_cuda_extension", "replace", True,
        "self.enable_corr = enable_corr and SpatialCorrelationSampler is not None and not torch.npu.is_available()",
        "V1 builds the CUDA correlation op unguarded: TypeError when the package is absent, and the installed op rejects NPU tensors; the unfold path below is the NPU implementation"),
  ])

E("aot_eval_tool", "tools/eval.py", "explicit_replacement",
  "AOT tools/eval.py: --gpu_id/--gpu_num flags, mp.spawn evaluation workers, optional AMP",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("with torch.cuda.amp.autocast(enabled=True):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=True):", AMP_NOTE),
      C("if args.gpu_id + args.gpu_num > torch.cuda.device_count():", "torch_cuda_api", "replace", True,
        "if args.gpu_id + args.gpu_num > torch.npu.device_count():",
        "device_count() is 0 on an NPU host, so multi-device evaluation always exits here"),
      C("args.gpu_num, args.gpu_id, torch.cuda.device_count()))", "torch_cuda_api", "replace", False,
        "args.gpu_num, args.gpu_id, torch.npu.device_count()))", "error message only"),
  ])

E("aot_demo", "tools/demo.py", "explicit_replacement",
  "AOT tools/demo.py: single-GPU demo on cfg.TEST_GPU_ID writing overlay videos",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("model = build_vos_model(cfg.MODEL_VOS, cfg).cuda(gpu_id)", "tensor_to_device", "replace", True,
        "model = build_vos_model(cfg.MODEL_VOS, cfg).npu(gpu_id)", ".cuda() raises"),
      C("current_img = current_img.cuda(gpu_id, non_blocking=True)", "tensor_to_device", "replace", True,
        "current_img = current_img.npu(gpu_id, non_blocking=True)", ".cuda() raises"),
      C("current_label = sample['current_label'].cuda(", "tensor_to_device", "replace", True,
        "current_label = sample['current_label'].npu(", ".cuda() raises"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", NOOP_CACHE),
      C("with torch.cuda.amp.autocast(enabled=True):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=True):", AMP_NOTE),
  ])

E("aot_checkpoint_util", "utils/checkpoint.py", "explicit_replacement",
  "AOT utils/checkpoint.py: load_network[_and_optimizer] mapping checkpoints onto cuda:<gpu>",
  [
      C('map_location=torch.device("cuda:" + str(gpu)))', "device_type", "replace", True,
        'map_location=torch.device("npu:" + str(gpu)))', "cuda device in map_location raises on an NPU host"),
      C("return net.cuda(gpu), opt, pretrained_dict_remove", "tensor_to_device", "replace", True,
        "return net.npu(gpu), opt, pretrained_dict_remove", ".cuda() raises"),
      C('map_location=torch.device("cuda:{}".format(gpu)))', "device_type", "replace", True,
        'map_location=torch.device("npu:{}".format(gpu)))', "same, v2 loader"),
      C("net = net.cuda(gpu)", "tensor_to_device", "replace", True, "net = net.npu(gpu)", ".cuda() raises"),
      C("map_location='cuda:{}'.format(gpu))", "device_type", "replace", True, "map_location='npu:{}'.format(gpu))",
        "cuda device string raises"),
      C("return net.cuda(gpu), pretrained_dict_remove", "tensor_to_device", "replace", True,
        "return net.npu(gpu), pretrained_dict_remove", ".cuda() raises"),
  ])

E("aot_train_sh", "train_eval.sh", "explicit_replacement",
  "AOT train_eval.sh: pre / pre_ytb_dav stages then DAVIS/YouTube-VOS evaluation, NCCL workarounds",
  [
      C("=#!/bin/bash", "import_torch_npu", "npu_only_addition", True, SET_ENV, SET_ENV_NOTE),
      C("export CUDA_VISIBLE_DEVICES=${devices}", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=${devices}",
        "ignored by the Ascend runtime; device selection silently lost"),
      C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None,
        "NCCL-only workaround for consumer GPUs; no effect under HCCL"),
      C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None,
        "NCCL logging knob; HCCL logs via the CANN log settings instead"),
      C("CUDA_VISIBLE_DEVICES=0 python tools/eval.py", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=0 python tools/eval.py --exp_name ${exp} --stage ${stage} --model ${model} \\",
        "single-device speed test would silently see all NPUs"),
  ])

E("deaot_correlation_setup", "networks/ops/correlation/setup.py", "kernel_rewrite",
  "vendored Pytorch-Correlation-extension setup.py (CUDAExtension + nvcc gencode list) in an AOT/DeAOT fork",
  [
      C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", True,
        "from torch.utils.cpp_extension import BuildExtension, CppExtension",
        "the ported build uses CppExtension (host fallback only; NPU tensors take the torch path in the wrapper)"),
      C("=nvcc_args = [", "custom_cuda_extension", "removal", False, None,
        "nvcc flag list (and the gencode lines under it) is dead once no .cu is built"),
      C("if os.environ.get('TORCH_CUDA_ARCH_LIST'):", "env_var", "removal", False, None,
        "CUDA arch override; dead with the nvcc flags"),
      C("CUDAExtension('spatial_correlation_sampler_backend', [", "custom_cuda_extension", "replace", True,
        "CppExtension('spatial_correlation_sampler_backend', [",
        "CUDAExtension needs CUDA_HOME/nvcc and aborts the build on an NPU host"),
      C("os.path.join(this_dir, 'csrc', 'correlation_cuda_kernel.cu'),", "custom_cuda_extension", "removal", True, None,
        ".cu source cannot be compiled without nvcc"),
      C("], extra_compile_args={'cxx': cxx_args, 'nvcc': nvcc_args},", "custom_cuda_extension", "replace", False,
        "], extra_compile_args={'cxx': cxx_args},", "nvcc key is ignored by CppExtension; cleanup"),
  ])

E("deaot_correlation_op", "networks/ops/correlation/spatial_correlation_sampler.py", "kernel_rewrite",
  "vendored spatial_correlation_sampler.py autograd Function calling the compiled backend",
  [
      C("import spatial_correlation_sampler_backend as correlation", "custom_cuda_extension", "replace", False,
        "from .correlation_torch import correlation_torch  # unfold-based reference, runs on NPU",
        "the compiled backend is still importable after the CppExtension port; the NPU path needs the torch implementation instead"),
      C("output = correlation.forward(input1, input2,", "custom_cuda_extension", "replace", True,
        "output = correlation_torch(input1, input2,",
        "the backend has no NPU kernel (CUDA kernel or host loop only) and rejects NPU tensors"),
      C("grad_input1, grad_input2 = correlation.backward(input1, input2, grad_output,", "custom_cuda_extension", "replace", True,
        "grad_input1, grad_input2 = correlation_torch_backward(input1, input2, grad_output,",
        "same for the backward used in training; rewritten as autograd through the unfold implementation"),
  ])

# ---------------------------------------------------------------- Cutie
E("cutie_train", "cutie/train.py", "explicit_replacement",
  "Cutie cutie/train.py (hkchengrex/Cutie): hydra entry, torchrun + nccl, TF32/cuDNN flags, staged training",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('distributed.init_process_group(backend="nccl")', "dist_backend", "replace", True,
        'distributed.init_process_group(backend="hccl")', "nccl is not available on NPU"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
        "raises without CUDA"),
      C("props = torch.cuda.get_device_properties(local_rank)", "device_capability_check", "replace", True,
        "props = torch.npu.get_device_properties(local_rank)", "torch.cuda.get_device_properties raises without CUDA"),
      C("f'capability {props.major}.{props.minor}')", "device_capability_check", "replace", True,
        "f'AI cores {props.cube_core_num}')",
        "NPU device properties carry no major/minor (name, total_memory, L2_cache_size, cube/vector core counts only) -> AttributeError"),
      C("torch.cuda.manual_seed_all(cfg.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(cfg.seed)",
        "queued lazily and never run without CUDA; torch.manual_seed above already seeds the NPU generator (unconfirmed for every torch_npu version)"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", NOOP_CACHE),
      C("torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", "replace", False,
        "log.info(f'Max NPU memory allocated: {torch.npu.max_memory_allocated() / 2**30:.2f} GiB')", MEM_STAT),
  ])

E("cutie_eval_config", "cutie/config/eval_config.yaml", "device_branch_or_abstraction",
  "Cutie cutie/config/eval_config.yaml (hydra) with a device key consumed by eval_vos.py",
  [
      C("=device: cuda", "device_type", "replace", True, "device: npu",
        "eval_vos.py builds torch.device(cfg.device); 'cuda' cannot be used on an NPU host"),
  ])

E("cutie_eval_vos", "cutie/eval_vos.py", "device_branch_or_abstraction",
  "Cutie cutie/eval_vos.py with a multi-GPU torchrun evaluation option",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("dist.init_process_group(backend='nccl')", "dist_backend", "replace", True,
        "dist.init_process_group(backend='hccl')", "nccl is not available on NPU"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
        "raises without CUDA"),
      C("return torch.device(f'cuda:{local_rank}'), dist.get_rank(), dist.get_world_size()", "device_type", "replace", True,
        "return torch.device(f'npu:{local_rank}'), dist.get_rank(), dist.get_world_size()", "cuda device string"),
      C("if device.type == 'cuda':", "device_type", "replace", False, "if device.type == 'npu':",
        "guard is simply False on NPU, so the CUDA call below is never reached; only the log line is lost"),
      C("log.info(f'Running on {torch.cuda.get_device_name(device)}')", "torch_cuda_api", "replace", False,
        "log.info(f'Running on {torch.npu.get_device_name(device)}')", "log-only, unreachable on NPU until the guard is ported"),
      C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", "replace", True,
        "with torch.autocast(device_type=device.type, enabled=use_amp):", AMP_NOTE),
      C("image = data['rgb'].cuda()[0]", "tensor_to_device", "replace", True, "image = data['rgb'].to(device)[0]",
        ".cuda() raises"),
      C("mask = mask.cuda()[0]", "tensor_to_device", "replace", True, "mask = mask.to(device)[0]", ".cuda() raises"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA (benchmark mode)"),
      C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
        "raises without CUDA (benchmark mode)"),
      C("torch.cuda.max_memory_allocated() / (2**20)", "torch_cuda_api", "replace", False,
        "log.info(f'Max allocated memory (MB): {torch.npu.max_memory_allocated() / (2**20):.1f}')", MEM_STAT),
  ])

E("cutie_inference_core", "cutie/inference/inference_core.py", "device_branch_or_abstraction",
  "Cutie cutie/inference/inference_core.py: device-agnostic InferenceCore (follows the tensors it is given)",
  [
      C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", False,
        "with torch.autocast(device_type=mask.device.type, enabled=False):",
        "the fp32 island only switches off CUDA autocast; under NPU autocast it is a no-op, but the input is already .float() and log/prod are fp32-listed ops, so results should not change (unconfirmed for the NPU autocast lists)"),
  ])

E("cutie_transformer_layers", "cutie/model/transformer/transformer_layers.py", "device_branch_or_abstraction",
  "Cutie object-transformer layers in a fork that swapped nn.MultiheadAttention for SDPA with sdp_kernel selection",
  [
      C("if not torch.cuda.is_available():", "device_capability_check", "add_branch", False,
        "if hasattr(torch, 'npu') and torch.npu.is_available():\n        return False, False, True\n    if not torch.cuda.is_available():",
        "on an NPU host this reports 'pre-Volta GPU' and only sets sdp backend flags the NPU SDPA does not use; misleading warning, no failure"),
      C("with torch.backends.cuda.sdp_kernel(", "attention_kernel", "replace", False,
        "with (contextlib.nullcontext() if q.device.type == 'npu' else torch.backends.cuda.sdp_kernel(",
        "torch.backends.cuda.sdp_kernel is marked unsupported in Ascend's 2.7.1 API table; it only toggles CUDA backend flags, so keeping it is not known to fail (unconfirmed)"),
  ])

# ---------------------------------------------------------------- STM / MiVOS
E("stm_eval", "eval_DAVIS.py", "explicit_replacement",
  "STM eval_DAVIS.py (seoungwugoh/STM): -g flag into CUDA_VISIBLE_DEVICES, nn.DataParallel model, cuDNN benchmark",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = GPU", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = GPU",
        "-g device selection is silently ignored by the Ascend runtime (set before the first NPU call, so still effective)"),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
        "guards a log line only"),
      C("print('using Cuda devices, num:', torch.cuda.device_count())", "torch_cuda_api", "replace", False,
        "print('using NPU devices, num:', torch.npu.device_count())", "log-only"),
      C("model = nn.DataParallel(STM())", "unsupported_op_workaround", "replace", True, "model = STM()",
        "torch.nn.DataParallel is unsupported on Ascend (use DDP or a single device)"),
      C("if torch.cuda.is_available() and not args.cpu:", "torch_cuda_api", "replace", True,
        "if torch.npu.is_available() and not args.cpu:", "False on an NPU host: the model silently stays on the CPU"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", ".cuda() raises once the guard is ported"),
      C("model.load_state_dict(torch.load(pth_path))", "unsupported_op_workaround", "replace", True,
        "model.load_state_dict({k.replace('module.', '', 1): v for k, v in torch.load(pth_path, map_location='cpu').items()})",
        "weights were saved from the CUDA DataParallel wrapper: CUDA storages need map_location and the 'module.' prefix no longer matches once DataParallel is gone"),
      C("pred, Es = Run_video(Fs, Ms, num_frames, num_objects, Mem_every=5, Mem_number=None)", "tensor_to_device", "replace", True,
        "pred, Es = Run_video(Fs.npu(), Ms.npu(), num_frames, num_objects, Mem_every=5, Mem_number=None)",
        "DataParallel used to scatter the CPU batch onto the GPU; without it the frames must be moved explicitly (Fs stays on the host for -viz)"),
  ])

E("stm_model", "model.py", "device_branch_or_abstraction",
  "STM model.py: ResNet-50 encoders, space-time memory read, ToCuda() helper used for padded memory",
  [
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "ToCuda silently returns CPU tensors on an NPU host -> device mismatch with the NPU model in Pad_memory/Soft_aggregation"),
      C("return [x.cuda() for x in xs]", "tensor_to_device", "replace", True, "return [x.npu() for x in xs]", ".cuda() raises"),
      C("return xs.cuda()", "tensor_to_device", "replace", True, "return xs.npu()", ".cuda() raises"),
  ])

E("mivos_interactive_gui", "interactive_gui.py", "explicit_replacement",
  "MiVOS interactive_gui.py (hkchengrex/MiVOS): PyQt GUI entry loading propagation/fusion/S2M nets with .cuda()",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
        "memory gauge only; stays 'N/A' on NPU"),
      C("free, total = torch.cuda.mem_get_info()", "torch_cuda_api", "replace", False,
        "free, total = torch.npu.mem_get_info()", "memory gauge only; unreachable on NPU until the guard is ported"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", NOOP_CACHE),
      C("this_image = this_image.cuda()", "tensor_to_device", "replace", True, "this_image = this_image.npu()",
        ".cuda() raises"),
      C("with torch.cuda.amp.autocast(enabled=not args.no_amp):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=not args.no_amp):", AMP_NOTE),
      C("prop_saved = torch.load(args.prop_model)", "tensor_to_device", "replace", True,
        "prop_saved = torch.load(args.prop_model, map_location='cpu')", LOAD_NOTE),
      C("prop_model = PropagationNetwork().cuda().eval()", "tensor_to_device", "replace", True,
        "prop_model = PropagationNetwork().npu().eval()", ".cuda() raises"),
      C("fusion_saved = torch.load(args.fusion_model)", "tensor_to_device", "replace", True,
        "fusion_saved = torch.load(args.fusion_model, map_location='cpu')", LOAD_NOTE),
      C("fusion_model = FusionNet().cuda().eval()", "tensor_to_device", "replace", True,
        "fusion_model = FusionNet().npu().eval()", ".cuda() raises"),
      C("s2m_saved = torch.load(args.s2m_model)", "tensor_to_device", "replace", True,
        "s2m_saved = torch.load(args.s2m_model, map_location='cpu')", LOAD_NOTE),
      C("s2m_model = S2M().cuda().eval()", "tensor_to_device", "replace", True, "s2m_model = S2M().npu().eval()",
        ".cuda() raises"),
  ])

E("mivos_fbrs_controller", "interact/fbrs_controller.py", "device_branch_or_abstraction",
  "MiVOS interact/fbrs_controller.py: f-BRS click controller with a 'cuda:0' default device",
  [
      C("def __init__(self, checkpoint_path, device='cuda:0', max_size=800):", "device_type", "replace", True,
        "def __init__(self, checkpoint_path, device='npu:0', max_size=800):",
        "the GUI constructs FBRSController(args.fbrs_model) with the default, so 'cuda:0' is what gets used"),
  ])

E("mivos_environment", "environment.yml", "explicit_replacement",
  "MiVOS/STCN-style conda environment.yml with pytorch + cudatoolkit from the pytorch/nvidia channels",
  [
      C("=- nvidia", "device_type", "removal", False, None, "CUDA package channel; nothing from it is needed on NPU"),
      C("=- pytorch=1.11.0", "device_type", "replace", True, "- pytorch=2.1.0  # CPU build; torch-npu comes from pip below",
        "torch_npu needs an exact torch match; 1.11 only has EOL torch_npu releases for old CANN"),
      C("=- torchvision=0.12.0", "device_type", "replace", True, "- torchvision=0.16.0", "must follow torch 2.1.0"),
      C("=- cudatoolkit=11.3", "device_type", "removal", False, None,
        "CUDA runtime is dead weight on an NPU host (unconfirmed whether it also drags in a CUDA pytorch variant)"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post17",
        "the torch_npu wheel (pairs with torch 2.1.0) is pip-only"),
  ])
