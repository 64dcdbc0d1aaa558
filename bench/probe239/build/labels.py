# Labels for probe239 (image colorization / old-photo restoration, CUDA -> Ascend NPU).
# One entry per upstream file; one C(...) per line a careful porter would edit.
# required=True only when the unchanged line fails on an NPU host (CPU-only torch build + torch_npu),
# computes something wrong, or silently does the wrong thing there.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# ---------------------------------------------------------------------------------------------
# DDColor (basicsr-based)
# ---------------------------------------------------------------------------------------------

E("ddc_train", "basicsr/train.py", "explicit_replacement",
  "DDColor's vendored basicsr train.py (parse options, init_dist, prefetcher, training loop)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "Training entry point; torch.npu.* used by the ported basicsr modules needs torch_npu loaded (mandatory before torch_npu 2.5.1, recommended after)."),
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed(seed)",
        "On a CPU-only torch build this is a lazy no-op; torch.manual_seed above already seeds the NPU generator, so only cosmetic."),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(seed)",
        "Same as above: queued lazily and never run without CUDA; NPU already seeded by torch.manual_seed."),
      C("opt['num_gpu'] = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "opt['num_gpu'] = torch.npu.device_count()",
        "Returns 0 on an NPU host, so num_gpu: auto silently turns into CPU mode (BaseModel picks 'cpu')."),
      C("device_id = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
        "device_id = torch.npu.current_device()",
        "Raises 'Torch not compiled with CUDA enabled' when resuming."),
      C("map_location=lambda storage, loc: storage.cuda(device_id)", "tensor_to_device", "replace", True,
        "resume_state = torch.load(resume_state_path, map_location=f'npu:{device_id}')",
        "Resume state is mapped onto a CUDA device; fails on NPU."),
      C("'gpu_mem_gb': torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
        "log_vars.update({'gpu_mem_gb': torch.npu.max_memory_allocated() / 1024**3})",
        "Without CUDA initialised memory_stats() is empty, so this logs 0 instead of failing; logging only."),
  ])

E("ddc_dist_util", "basicsr/utils/dist_util.py", "explicit_replacement",
  "basicsr utils/dist_util.py (init_dist for pytorch and slurm launchers)",
  [
      C("def init_dist(launcher, backend='nccl', **kwargs):", "dist_backend", "replace", True,
        "def init_dist(launcher, backend='hccl', **kwargs):",
        "train.py calls init_dist(args.launcher) with the default backend; NCCL is not available on Ascend."),
      C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "num_gpus = torch.npu.device_count()",
        "Returns 0 on NPU hosts; the next line then does rank % 0 (ZeroDivisionError)."),
      C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(rank % num_gpus)",
        "Raises without CUDA; each rank must bind its NPU before HCCL init."),
      C("gpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "gpus_per_node = torch.npu.device_count()",
        "Slurm path: 0 devices -> modulo by zero below."),
      C("torch.cuda.set_device(proc_id % gpus_per_node)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(proc_id % gpus_per_node)",
        "Slurm path: raises without CUDA."),
  ])

E("ddc_base_model", "basicsr/models/base_model.py", "explicit_replacement",
  "basicsr models/base_model.py (device selection, model_to_device with DDP/DataParallel)",
  [
      C("self.device = torch.device('cuda' if opt['num_gpu'] != 0 else 'cpu')", "device_type", "replace", True,
        "self.device = torch.device('npu' if opt['num_gpu'] != 0 else 'cpu')",
        "All model/loss/data placement goes through self.device; 'cuda' fails on the first .to()."),
      C("net, device_ids=[torch.cuda.current_device()], find_unused_parameters=find_unused_parameters)",
        "torch_cuda_api", "replace", True,
        "net, device_ids=[torch.npu.current_device()], find_unused_parameters=find_unused_parameters)",
        "torch.cuda.current_device() raises on an NPU host."),
      C("net = DataParallel(net)", "distributed_framework", "replace", True,
        "raise NotImplementedError('DataParallel is not supported on NPU; launch with torchrun and dist: true')",
        "num_gpu>1 without dist wraps in nn.DataParallel, which Ascend lists as unsupported (use DDP + HCCL)."),
  ])

E("ddc_color_model", "basicsr/models/color_model.py", "explicit_replacement",
  "DDColor basicsr/models/color_model.py (ColorModel: GAN training, Lab conversion, FID validation)",
  [
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()",
        "Silent no-op without CUDA; NPU cache is not released between validation images (memory headroom only)."),
      C("pred, gt = visuals['result'].cuda(), visuals['gt'].cuda()", "tensor_to_device", "replace", True,
        "pred, gt = visuals['result'].to(self.device), visuals['gt'].to(self.device)",
        "FID activations computed on CUDA tensors; fails on NPU."),
      C("self.inception_model_fid.cuda()", "tensor_to_device", "replace", True,
        "self.inception_model_fid.to(self.device)",
        "Inception network for FID is moved to CUDA explicitly."),
  ])

E("ddc_prefetch", "basicsr/data/prefetch_dataloader.py", "explicit_replacement",
  "basicsr data/prefetch_dataloader.py (CUDAPrefetcher with a side stream)",
  [
      C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True,
        "self.stream = torch.npu.Stream()",
        "CUDA stream construction fails on a CPU-only torch build; torch_npu provides npu.Stream."),
      C("self.device = torch.device('cuda' if opt['num_gpu'] != 0 else 'cpu')", "device_type", "replace", True,
        "self.device = torch.device('npu' if opt['num_gpu'] != 0 else 'cpu')",
        "Batches are copied to this device."),
      C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True,
        "with torch.npu.stream(self.stream):",
        "Stream context manager is CUDA-only."),
      C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
        "torch.npu.current_stream().wait_stream(self.stream)",
        "Raises without CUDA; the H2D copy must be ordered before compute on the NPU stream."),
  ])

E("ddc_arch", "basicsr/archs/ddcolor_arch.py", "explicit_replacement",
  "DDColor basicsr/archs/ddcolor_arch.py (ConvNeXt encoder, multi-scale color-query decoder) with a GPU smoke test",
  [
      C("=import time", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "The __main__ smoke test moves the model to the NPU; torch_npu must be imported there."),
      C(".cuda().eval()", "tensor_to_device", "replace", True,
        "model = DDColor(encoder_name='convnext-t', input_size=(512, 512), num_queries=100).npu().eval()",
        "Smoke test puts the model on CUDA."),
      C("x = torch.randn(1, 3, 512, 512).cuda()", "tensor_to_device", "replace", True,
        "x = torch.randn(1, 3, 512, 512).npu()",
        "Smoke test input on CUDA."),
      C("torch.cuda.synchronize()  # finish warm-up", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # finish warm-up",
        "Raises without CUDA; NPU kernels are async so timing needs npu.synchronize."),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()",
        "Same, end of the timed loop."),
  ])

E("ddc_fid", "basicsr/metrics/custom_fid.py", "explicit_replacement",
  "DDColor basicsr/metrics/custom_fid.py (InceptionV3 FID helpers with cuda=True / device='cuda' defaults)",
  [
      C("batch = batch.cuda()", "tensor_to_device", "replace", True,
        "batch = batch.npu()",
        "get_activations defaults to cuda=True and ColorModel calls it with the default; .cuda() fails on NPU."),
      C("def extract_inception_features(data_generator, inception, len_generator=None, device='cuda'):",
        "device_type", "replace", True,
        "def extract_inception_features(data_generator, inception, len_generator=None, device='npu'):",
        "Default device string is CUDA; callers that omit device fail."),
      C("def load_fid_inception(path, device='cuda', num_gpu=1):", "device_type", "replace", True,
        "def load_fid_inception(path, device='npu', num_gpu=1):",
        "Default device string is CUDA."),
      C("inception = nn.DataParallel(inception)", "distributed_framework", "replace", True,
        "pass  # nn.DataParallel is unsupported on NPU; extract features on one NPU (or per-rank under DDP)",
        "Only taken with num_gpu>1, but DataParallel is listed unsupported on Ascend."),
  ])

E("ddc_fused_act", "basicsr/ops/fused_act/fused_act.py", "kernel_rewrite",
  "basicsr ops/fused_act (StyleGAN2 fused bias + leaky ReLU CUDA extension, JIT or prebuilt)",
  [
      C("fused_act_ext = load(", "custom_cuda_extension", "replace", True,
        "fused_act_ext = None  # BASICSR_JIT: the .cu kernel cannot be built without nvcc; the NPU path below is pure torch",
        "With BASICSR_JIT=True this compiles fused_bias_act_kernel.cu with nvcc, which does not exist on Ascend hosts."),
      C("return FusedLeakyReLUFunction.apply(input, bias, negative_slope, scale)", "custom_cuda_extension",
        "add_branch", True,
        "if input.device.type == 'npu': return F.leaky_relu(input + bias.view(1, -1, *[1] * (input.ndim - 2)), negative_slope) * scale",
        "The extension op has no NPU kernel (and is not built); an NPU branch with the equivalent torch ops is needed wherever FusedLeakyReLU is used."),
  ])

E("ddc_setup", "setup.py", "explicit_replacement",
  "BasicSR/DDColor setup.py with optional CUDAExtension builds (BASICSR_EXT=True)",
  [
      C("extension = CUDAExtension", "custom_cuda_extension", "replace", False,
        "extension = CppExtension  # no nvcc on Ascend; NPU kernels would need Ascend C + torch_npu.utils.cpp_extension.NpuExtension",
        "Only reached with FORCE_CUDA=1; the default BASICSR_EXT-off install builds no extension, so not needed to run DDColor."),
  ])

E("ddc_pipeline", "inference/colorization_pipeline.py", "explicit_replacement",
  "DDColor inference/colorization_pipeline.py (ImageColorizationPipeline, self.device = torch.device('cuda'))",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "Inference entry point; needed for torch.npu.*."),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if torch.npu.is_available():",
        "False on an NPU host: inference silently runs on CPU."),
      C("self.device = torch.device('cuda')", "device_type", "replace", True,
        "self.device = torch.device('npu')",
        "CUDA device for the model and inputs."),
      C("self.fp16 = fp16 and self.device.type == 'cuda'", "device_type", "replace", False,
        "self.fp16 = fp16 and self.device.type in ('cuda', 'npu')",
        "--fp16 is silently ignored on NPU (runs fp32); performance only."),
      C("batch = batch.pin_memory().to(self.device, non_blocking=True)", "pin_memory", "replace", False,
        "batch = batch.pin_memory(device='npu').to(self.device, non_blocking=True)",
        "Unconfirmed: whether bare Tensor.pin_memory() pins for the NPU (transfer_to_npu wraps pin_memory's device argument); at worst an unpinned copy."),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.gpu)",
        "Raises without CUDA."),
  ])

E("ddc_export", "export.py", "explicit_replacement",
  "DDColor export.py (ONNX export + onnxruntime check)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "Entry point that traces on an accelerator device."),
      C("parser.add_argument('--device', type=str, default='cuda:0', help='device used for tracing')",
        "device_type", "replace", True,
        "parser.add_argument('--device', type=str, default='npu:0', help='device used for tracing')",
        "Default 'cuda:0' makes model.to(device) and torch.rand(device=...) fail on NPU."),
      C("providers = ['CUDAExecutionProvider', 'CPUExecutionProvider']", "device_type", "replace", False,
        "providers = ['CANNExecutionProvider', 'CPUExecutionProvider']",
        "onnxruntime skips an unavailable provider with a warning and uses CPU; CANN EP is unconfirmed in the knowledge base."),
  ])

E("ddc_train_yml", "options/train/train_ddcolor.yml", "explicit_replacement",
  "DDColor options/train/train_ddcolor.yml (num_gpu: 4, prefetch_mode: cuda, dist_params)",
  [
      C("backend: nccl", "dist_backend", "replace", True,
        "backend: hccl",
        "Passed to init_dist when launched with --launcher slurm (dist_params); NCCL does not exist on Ascend."),
  ])

E("ddc_train_sh", "scripts/train.sh", "explicit_replacement",
  "DDColor scripts/train.sh (CUDA_VISIBLE_DEVICES + torch.distributed.launch)",
  [
      C("=set -e", "env_var", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment must be loaded before torch_npu can initialise."),
      C("CUDA_VISIBLE_DEVICES=0,1,2,3 \\", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=0,1,2,3 \\",
        "Ignored by the Ascend runtime: device selection is silently lost."),
  ])

E("ddc_requirements", "requirements.txt", "explicit_replacement",
  "DDColor requirements.txt pinned to CUDA 11.8 wheels plus onnxruntime-gpu",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu118", "device_type", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "Ascend docs install CPU torch (x86) or plain PyPI torch (aarch64); unconfirmed that a CUDA build breaks torch_npu."),
      C("=torch==2.0.1+cu118", "device_type", "replace", True,
        "torch==2.1.0",
        "+cu118 wheels do not exist for aarch64 Ascend hosts, and torch must equal the torch_npu base version."),
      C("=torchvision", "import_torch_npu", "npu_only_addition", True,
        "torch-npu==2.1.0.post10",
        "The NPU backend package itself."),
      C("onnxruntime-gpu==1.16.3", "device_type", "replace", False,
        "onnxruntime==1.16.3",
        "CUDA build of onnxruntime used only by export.py; unconfirmed whether it installs on aarch64."),
  ])

# ---------------------------------------------------------------------------------------------
# DeOldify (fastai v1)
# ---------------------------------------------------------------------------------------------

E("deo_device", "deoldify/_device.py", "explicit_replacement",
  "DeOldify deoldify/_device.py (device.set(DeviceId.GPU0) via CUDA_VISIBLE_DEVICES)",
  [
      C("os.environ['CUDA_VISIBLE_DEVICES']=str(device.value)", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES']=str(device.value)",
        "Ascend runtime ignores CUDA_VISIBLE_DEVICES; DeviceId.GPU3 would silently run on NPU 0."),
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "First torch import of the process (set() must be called before anything else); needed for torch.npu below."),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if not torch.npu.is_available():",
        "Always False on an NPU host, so set(GPUn) raises DeviceException."),
      C("torch.cuda.get_device_name(0)", "torch_cuda_api", "replace", True,
        "return '{} ({})'.format(self._current_device.name, torch.npu.get_device_name(0))",
        "Raises without CUDA."),
  ])

E("deo_filters", "deoldify/filters.py", "explicit_replacement",
  "DeOldify deoldify/filters.py (ColorizerFilter, MasterFilter) plus an fp16 filter variant",
  [
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()",
        "OOM recovery path; silent no-op without CUDA."),
      C("self.use_amp = self.device.type == 'cuda'", "device_type", "replace", False,
        "self.use_amp = self.device.type in ('cuda', 'npu')",
        "Half-precision filter silently falls back to fp32 on NPU; memory/performance only."),
      C("with torch.cuda.amp.autocast():", "amp", "replace", False,
        "with torch.npu.amp.autocast():",
        "CUDA autocast disables itself with a warning when CUDA is absent; fp32 still correct."),
  ])

E("deo_visualize", "deoldify/visualize.py", "explicit_replacement",
  "DeOldify deoldify/visualize.py (ModelImageVisualizer, VideoColorizer, get_image_colorizer)",
  [
      C("defaults.device = torch.device('cuda')", "device_type", "replace", True,
        "defaults.device = torch.device('npu')",
        "fastai places the learner and batches on defaults.device; 'cuda' fails (and fastai's own import-time default is CPU on an NPU host)."),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()",
        "_clean_mem before every frame; silent no-op without CUDA."),
  ])

E("deo_train", "train_stable.py", "transfer_to_npu",
  "DeOldify ColorizeTrainingStable notebook exported to a script (NoGAN, fastai v1 GANLearner)",
  [
      C("device.set(device=DeviceId.GPU0)", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu; from torch_npu.contrib import transfer_to_npu",
        "fastai v1 picks defaults.device and calls torch.cuda internally at import; the transfer_to_npu patch must land right after device.set and before 'import fastai'."),
  ])

E("deo_env", "environment.yml", "explicit_replacement",
  "DeOldify environment.yml (conda env with cudatoolkit, cu113 pip wheels, fastai 1.0.60)",
  [
      C("=- nvidia", "device_type", "removal", False, None,
        "NVIDIA conda channel is useless on an Ascend host."),
      C("- cudatoolkit=11.3", "device_type", "removal", False, None,
        "CUDA runtime is dead weight once torch is the CPU build; unconfirmed whether it even resolves on aarch64."),
      C("- --extra-index-url https://download.pytorch.org/whl/cu113", "device_type", "replace", False,
        "    - --extra-index-url https://download.pytorch.org/whl/cpu",
        "Ascend installs CPU torch; the pinned versions below are what actually breaks."),
      C("- torch==1.11.0+cu113", "device_type", "replace", True,
        "    - torch==2.1.0",
        "+cu113 wheel has no aarch64 build and must match the torch_npu base version."),
      C("- torchvision==0.12.0+cu113", "device_type", "replace", True,
        "    - torchvision==0.16.0",
        "Must follow the torch version; the cu113 build pins torch 1.11."),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True,
        "    - torch-npu==2.1.0.post10",
        "The NPU backend package."),
      C("- nvidia-ml-py3", "device_type", "removal", False, None,
        "pynvml has no NPU equivalent; nothing in the inference path imports it."),
  ])

# ---------------------------------------------------------------------------------------------
# Bringing-Old-Photos-Back-to-Life (pix2pixHD / SPADE style)
# ---------------------------------------------------------------------------------------------

E("bop_run", "run.py", "explicit_replacement",
  "Bringing-Old-Photos-Back-to-Life run.py (4-stage pipeline, --GPU passed to every stage)",
  [])

E("bop_base_options", "Global/options/base_options.py", "explicit_replacement",
  "BOP Global/options/base_options.py (pix2pixHD-style options, gpu_ids parsing, set_device)",
  [
      C("torch.cuda.set_device(self.opt.gpu_ids[0])", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(self.opt.gpu_ids[0])",
        "Raises without CUDA; every Global/ entry point parses these options."),
  ])

E("bop_detection", "Global/detection.py", "explicit_replacement",
  "BOP Global/detection.py (scratch detection UNet, --GPU int device index)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "Stage-1 scratch detection entry point."),
      C("model.to(config.GPU)", "tensor_to_device", "replace", True,
        "model.to(f'npu:{config.GPU}')",
        "An int passed to .to() means cuda:<n>; fails on NPU."),
      C("scratch_image_scale = scratch_image_scale.to(config.GPU)", "tensor_to_device", "replace", True,
        "scratch_image_scale = scratch_image_scale.to(f'npu:{config.GPU}')",
        "Same int-means-CUDA device index."),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()",
        "Silent no-op without CUDA."),
  ])

E("bop_networks", "Global/models/networks.py", "explicit_replacement",
  "BOP Global/models/networks.py (pix2pixHD define_G/define_D, VAE generator, GANLoss, VGG loss)",
  [
      C("=assert torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "assert torch.npu.is_available()",
        "AssertionError on an NPU host whenever gpu_ids is non-empty."),
      C("netG.cuda(gpu_ids[0])", "tensor_to_device", "replace", True,
        "netG.npu(gpu_ids[0])",
        "Module.cuda fails on NPU."),
      C("=assert(torch.cuda.is_available())", "torch_cuda_api", "replace", True,
        "assert(torch.npu.is_available())",
        "Same assert in define_D."),
      C("netD.cuda(gpu_ids[0])", "tensor_to_device", "replace", True,
        "netD.npu(gpu_ids[0])",
        "Module.cuda fails on NPU."),
      C("self.vgg = VGG19_torch().cuda()", "tensor_to_device", "replace", True,
        "self.vgg = VGG19_torch().npu()",
        "Perceptual-loss VGG forced to CUDA."),
  ])

E("bop_mapping_model", "Global/models/mapping_model.py", "explicit_replacement",
  "BOP Global/models/mapping_model.py (Pix2PixHDModel_Mapping: latent mapping between two VAEs)",
  [
      C("self.netG_A.cuda(opt.gpu_ids[0])", "tensor_to_device", "replace", True,
        "self.netG_A.npu(opt.gpu_ids[0])", "Module.cuda fails on NPU."),
      C("self.netG_B.cuda(opt.gpu_ids[0])", "tensor_to_device", "replace", True,
        "self.netG_B.npu(opt.gpu_ids[0])", "Module.cuda fails on NPU."),
      C("self.mapping_net.cuda(opt.gpu_ids[0])", "tensor_to_device", "replace", True,
        "self.mapping_net.npu(opt.gpu_ids[0])", "Module.cuda fails on NPU."),
      C("input_label = label_map.data.cuda()", "tensor_to_device", "replace", True,
        "input_label = label_map.data.npu()", "Tensor.cuda fails on NPU."),
      C("input_label = torch.cuda.FloatTensor(torch.Size(oneHot_size)).zero_()", "torch_cuda_api", "replace", True,
        "input_label = torch.zeros(oneHot_size, device='npu')",
        "Legacy torch.cuda.FloatTensor constructor needs CUDA."),
      C("input_label = input_label.scatter_(1, label_map.data.long().cuda(), 1.0)", "tensor_to_device", "replace", True,
        "input_label = input_label.scatter_(1, label_map.data.long().npu(), 1.0)", "Tensor.cuda fails on NPU."),
      C("inst_map = inst_map.data.cuda()", "tensor_to_device", "replace", True,
        "inst_map = inst_map.data.npu()", "Tensor.cuda fails on NPU."),
      C("real_image = Variable(real_image.data.cuda())", "tensor_to_device", "replace", True,
        "real_image = Variable(real_image.data.npu())", "Tensor.cuda fails on NPU."),
      C("input_concat = label.data.cuda()", "tensor_to_device", "replace", True,
        "input_concat = label.data.npu()", "Inference path used by Global/test.py."),
      C("inst_data = inst.cuda()", "tensor_to_device", "replace", True,
        "inst_data = inst.npu()", "Inference path (scratch mask)."),
      C("edge = torch.cuda.ByteTensor(t.size()).zero_()", "torch_cuda_api", "replace", True,
        "edge = torch.zeros(t.size(), dtype=torch.uint8, device=t.device)",
        "Legacy torch.cuda.ByteTensor constructor needs CUDA."),
  ])

E("bop_train_mapping", "Global/train_mapping.py", "explicit_replacement",
  "BOP Global/train_mapping.py (pix2pixHD-style training loop, optional apex O1 amp, DataParallel)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "Training entry point."),
      C("from apex import amp", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler()",
        "--fp16 path: NVIDIA apex amp only accepts CUDA params/optimizers; use native NPU amp (or Ascend's apex patch)."),
      C("model, [optimizer_mapping, optimizer_D] = amp.initialize(", "amp", "replace", True,
        "optimizer_mapping, optimizer_D = model.optimizer_mapping, model.optimizer_D",
        "amp.initialize fails on NPU params; native amp needs no model/optimizer patching."),
      C("model = torch.nn.DataParallel(model, device_ids=opt.gpu_ids)", "distributed_framework", "replace", True,
        "model = torch.nn.parallel.DistributedDataParallel(model.npu(), device_ids=[opt.gpu_ids[0]])",
        "nn.DataParallel is listed unsupported on Ascend; multi-NPU needs DDP over HCCL (launcher + init_process_group)."),
      C("save_fake = total_steps % opt.display_freq == display_delta", "amp", "npu_only_addition", False,
        "with torch.npu.amp.autocast(enabled=opt.fp16):  # wraps the forward pass below",
        "apex O1 patched torch functions globally; with native amp the forward must run under autocast, otherwise --fp16 just trains in fp32 (performance only)."),
      C("with amp.scale_loss(loss_G, optimizer_mapping) as scaled_loss:", "amp", "replace", True,
        "with contextlib.nullcontext(scaler.scale(loss_G)) as scaled_loss:",
        "apex loss scaling (amp no longer exists once the import is replaced); the following step() becomes scaler.step(...) + scaler.update()."),
      C("with amp.scale_loss(loss_D, optimizer_D) as scaled_loss:", "amp", "replace", True,
        "with contextlib.nullcontext(scaler.scale(loss_D)) as scaled_loss:",
        "Same for the discriminator."),
  ])

E("bop_pix2pix_model", "Face_Enhancement/models/pix2pix_model.py", "explicit_replacement",
  "BOP Face_Enhancement/models/pix2pix_model.py (SPADE face enhancement model)",
  [
      C("self.FloatTensor = torch.cuda.FloatTensor if self.use_gpu() else torch.FloatTensor", "torch_cuda_api",
        "replace", True,
        "self.FloatTensor = torch.npu.FloatTensor if self.use_gpu() else torch.FloatTensor",
        "Used to build GAN targets / feature-loss accumulators; torch.cuda.FloatTensor fails without CUDA."),
      C("self.ByteTensor = torch.cuda.ByteTensor if self.use_gpu() else torch.ByteTensor", "torch_cuda_api",
        "replace", True,
        "self.ByteTensor = torch.npu.ByteTensor if self.use_gpu() else torch.ByteTensor",
        "Legacy CUDA tensor type (edge maps)."),
      C("data['label'] = data['label'].cuda()", "tensor_to_device", "replace", True,
        "data['label'] = data['label'].npu()", "Test path (test_face.py)."),
      C("data['image'] = data['image'].cuda()", "tensor_to_device", "replace", True,
        "data['image'] = data['image'].npu()", "Test path."),
      C("data[\"label\"] = data[\"label\"].cuda()", "tensor_to_device", "replace", True,
        "data[\"label\"] = data[\"label\"].npu()", "Training path."),
      C("data[\"degraded_image\"] = data[\"degraded_image\"].cuda()", "tensor_to_device", "replace", True,
        "data[\"degraded_image\"] = data[\"degraded_image\"].npu()", "Training path."),
      C("data[\"image\"] = data[\"image\"].cuda()", "tensor_to_device", "replace", True,
        "data[\"image\"] = data[\"image\"].npu()", "Training path."),
  ])

E("bop_trainer", "Face_Enhancement/trainers/pix2pix_trainer.py", "explicit_replacement",
  "BOP Face_Enhancement/trainers/pix2pix_trainer.py (DataParallelWithCallback from Synchronized-BatchNorm-PyTorch)",
  [
      C("self.pix2pix_model = DataParallelWithCallback(self.pix2pix_model, device_ids=opt.gpu_ids)",
        "distributed_framework", "replace", True,
        "self.pix2pix_model = self.pix2pix_model.npu(opt.gpu_ids[0])  # DataParallel(+sync-BN callback) unsupported on NPU; use DDP + nn.SyncBatchNorm for multi-NPU",
        "DataParallelWithCallback subclasses nn.DataParallel (unsupported on Ascend) and its sync-BN relies on torch.cuda.comm."),
      C("map_location=lambda storage, loc: storage.cuda(opt.gpu_ids[0]),", "tensor_to_device", "replace", True,
        "map_location=f'npu:{opt.gpu_ids[0]}',",
        "Optimizer state mapped onto CUDA when resuming."),
  ])

E("bop_dockerfile", "Dockerfile", "explicit_replacement",
  "BOP Dockerfile (nvidia/cuda base, cu111 torch wheels, dlib built from source)",
  [
      C("FROM nvidia/cuda:11.1.1-cudnn8-runtime-ubuntu20.04", "device_type", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "Needs a CANN base image (toolkit + set_env exports) for torch_npu; the CUDA image has none."),
      C("ENV NVIDIA_VISIBLE_DEVICES all", "env_var", "replace", False,
        "ENV ASCEND_VISIBLE_DEVICES=0",
        "NVIDIA container-toolkit variable; NPUs are mounted by Ascend Docker Runtime (ASCEND_VISIBLE_DEVICES) or --device at docker run; unconfirmed that baking it into the image matters."),
      C("ENV NVIDIA_DRIVER_CAPABILITIES compute,utility", "env_var", "removal", False, None,
        "Meaningless without the NVIDIA container toolkit."),
      C("RUN pip3 install torch==1.9.1+cu111 torchvision==0.10.1+cu111", "device_type", "replace", True,
        "RUN pip3 install torch==2.1.0 torchvision==0.16.0",
        "cu111 wheels are x86-only CUDA builds and must match torch_npu's torch version."),
      C("cmake .. -DDLIB_USE_CUDA=1 -DUSE_AVX_INSTRUCTIONS=1", "custom_cuda_extension", "replace", False,
        "&& cmake .. -DDLIB_USE_CUDA=0 -DUSE_AVX_INSTRUCTIONS=1 \\",
        "dlib's face detector would be built against cuDNN; unconfirmed whether dlib's CMake just falls back when no CUDA toolkit is found."),
      C("=RUN pip3 install -r requirements.txt", "import_torch_npu", "npu_only_addition", True,
        "RUN pip3 install torch-npu==2.1.0.post10",
        "The NPU backend package."),
  ])

# ---------------------------------------------------------------------------------------------
# BigColor
# ---------------------------------------------------------------------------------------------

E("big_train", "train.py", "explicit_replacement",
  "BigColor train.py (encoder + BigGAN prior, torchrun DDP, torch.cuda.amp, optional apex FusedAdam)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "Training entry point."),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(local_rank)",
        "Raises without CUDA."),
      C("dist.init_process_group(backend='nccl', init_method='env://', rank=rank, world_size=world_size)",
        "dist_backend", "replace", True,
        "dist.init_process_group(backend='hccl', init_method='env://', rank=rank, world_size=world_size)",
        "NCCL backend unavailable on Ascend."),
      C("if not args.no_tf32 and torch.cuda.get_device_capability()[0] >= 8:", "device_capability_check",
        "replace", True,
        "if not args.no_tf32 and torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8:",
        "get_device_capability raises without CUDA (and returns None on NPU under transfer_to_npu); TF32 switches are CUDA-specific."),
      C("return FusedAdam(params, lr=lr, betas=betas, adam_w_mode=False)", "fused_optimizer", "replace", False,
        "return torch_npu.optim.NpuFusedAdam(params, lr=lr, betas=betas)",
        "Guarded by HAS_APEX: without apex it falls back to torch.optim.Adam; NpuFusedAdam is the fast path."),
      C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", False,
        "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
        "Disables itself with a warning without CUDA; training stays correct in fp32."),
      C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=args.amp):",
        "--amp silently has no effect on NPU; performance only."),
      C("with torch.cuda.amp.autocast(args.amp):", "amp", "replace", False,
        "with torch.npu.amp.autocast(args.amp):",
        "Same for the discriminator step."),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()",
        "Raises without CUDA."),
      C("torch.cuda.max_memory_reserved(dev)", "torch_cuda_api", "replace", True,
        "writer.add_scalar('mem/max_reserved_gb', torch.npu.max_memory_reserved(dev) / 2**30, num_iter)",
        "With dev an NPU device, torch.cuda.* rejects it ('Expected a cuda device')."),
      C("dev = torch.device(f'cuda:{local_rank}')", "device_type", "replace", True,
        "dev = torch.device(f'npu:{local_rank}')",
        "All models and batches are placed on this device."),
      C("torch.cuda.get_device_name(dev)", "torch_cuda_api", "replace", True,
        "print(f'world size {world_size}, device {torch.npu.get_device_name(dev)}')",
        "Raises without CUDA."),
  ])

E("big_colorize", "colorize_real.py", "explicit_replacement",
  "BigColor colorize_real.py (inference on real grayscale photos, --device cuda:0)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "Inference entry point."),
      C("parser.add_argument('--device', default='cuda:0')", "device_type", "replace", True,
        "parser.add_argument('--device', default='npu:0')",
        "Default device string is CUDA."),
      C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(args.seed)",
        "Lazy no-op without CUDA; set_seed's torch.manual_seed already seeds the NPU generator."),
      C("use_half = args.half and str(dev).startswith('cuda')", "device_type", "replace", False,
        "use_half = args.half and str(dev).startswith(('cuda', 'npu'))",
        "--half silently ignored on NPU; performance only."),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()",
        "Silent no-op without CUDA; end of script anyway."),
  ])

# ---------------------------------------------------------------------------------------------
# ColorFormer (basicsr-based)
# ---------------------------------------------------------------------------------------------

E("cfm_glh", "basicsr/archs/glh_transformer_arch.py", "device_branch_or_abstraction",
  "ColorFormer GLH transformer encoder (Swin-style window attention + global attention, optional xformers)",
  [
      C("@torch.cuda.amp.autocast(enabled=False)", "amp", "replace", True,
        "@torch.autocast(device_type='npu', enabled=False)",
        "Meant to keep the relative-bias gather in fp32 under autocast; a CUDA-autocast off-switch does not leave NPU autocast, so the fp32 guarantee is silently lost."),
      C("if self.use_xformers and x.is_cuda:", "attention_kernel", "add_branch", False,
        "elif x.device.type == 'npu': x = F.scaled_dot_product_attention(qkv[:, :, 0].transpose(1, 2), qkv[:, :, 1].transpose(1, 2), qkv[:, :, 2].transpose(1, 2), attn_mask=(bias if mask is None else bias + mask.repeat(B_ // mask.shape[0], 1, 1).unsqueeze(1)), scale=self.scale).transpose(1, 2).reshape(B_, N, C)",
        "xformers cannot run on NPU; the math fallback is correct but slow. Unconfirmed: NPU SDPA documents bool masks, this needs an additive float bias (else npu_fusion_attention with pse)."),
      C("with torch.backends.cuda.sdp_kernel(enable_flash=False, enable_math=True, enable_mem_efficient=True):",
        "attention_kernel", "replace", False,
        "with contextlib.nullcontext():  # sdp_kernel backend switches are CUDA-only",
        "torch.backends.cuda.sdp_kernel is marked unsupported on NPU; unconfirmed whether it errors or is ignored."),
  ])

E("cfm_slurm", "scripts/dist_train_slurm.sh", "explicit_replacement",
  "ColorFormer/basicsr Slurm launcher (sbatch, srun, --launcher slurm)",
  [
      C("#SBATCH --gres=gpu:8", "device_type", "replace", False,
        "#SBATCH --gres=npu:8",
        "Site-specific gres name; no Ascend Slurm integration is documented in the knowledge base (unconfirmed)."),
      C("module load cuda/11.7 cudnn/8.5", "env_var", "replace", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment must be sourced on every node for torch_npu/HCCL."),
      C("export NCCL_SOCKET_IFNAME=ib0", "env_var", "replace", False,
        "export HCCL_SOCKET_IFNAME=ib0",
        "HCCL picks its own host NIC; only needed if the default one cannot reach the root node."),
  ])
