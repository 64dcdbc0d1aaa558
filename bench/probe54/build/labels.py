"""Labels for probe54 (hand-written synthetic upstream files; see ../README.md).

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

# Shared wording.
DP = ("torch.nn.DataParallel is marked unsupported (✘) in Ascend's API list and by msFmkTransplt; "
      "one process per NPU with DDP (or a single device)")
UNCONF_PIN = ("bare Tensor.pin_memory() without a device: whether it pins for the NPU under torch_npu is "
              "unconfirmed in the knowledge; pin_memory('npu') / drop it")
FUSED_ADAM = "performance only: torch_npu.optim.NpuFusedAdam (tensor-fusion Adam, same semantics)"
CUDA_ONLY_PATH = ("reached only for CUDA tensors (the caller's x.device.type == 'cuda' guard sends NPU tensors to "
                  "the reference path), so nothing breaks on NPU")

# ---------------------------------------------------------------------------------------------------------------
# StyleGAN2-ADA / StyleGAN3 (NVlabs)
# ---------------------------------------------------------------------------------------------------------------

E("sg3_train", "train.py", "explicit_replacement",
  "NVlabs/stylegan3 train.py (click CLI, mp.spawn, file:// init with nccl/gloo, sync_device)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu",
      "entry script: torch.npu / hccl need torch_npu loaded in every spawned process"),
    C("backend='nccl'", "dist_backend", R, True,
      "torch.distributed.init_process_group(backend='hccl', init_method=init_method, rank=rank, world_size=c.num_gpus)",
      "NCCL does not exist on Ascend; HCCL (the gloo branch above is Windows-only and left alone)"),
    C("sync_device = torch.device('cuda', rank)", "device_type", R, True,
      "sync_device = torch.device('npu', rank) if c.num_gpus > 1 else None",
      "training_stats all-reduces its counters on this device; a CUDA device fails on an NPU host"),
    C("c.G_opt_kwargs = dnnlib.EasyDict(class_name='torch.optim.Adam'", "fused_optimizer", R, False,
      "c.G_opt_kwargs = dnnlib.EasyDict(class_name='torch_npu.optim.NpuFusedAdam', betas=[0,0.99], eps=1e-8)",
      FUSED_ADAM + "; the optimizer is named by a class-name string resolved by dnnlib"),
    C("c.D_opt_kwargs = dnnlib.EasyDict(class_name='torch.optim.Adam'", "fused_optimizer", R, False,
      "c.D_opt_kwargs = dnnlib.EasyDict(class_name='torch_npu.optim.NpuFusedAdam', betas=[0,0.99], eps=1e-8)",
      FUSED_ADAM),
]),

E("sg3_custom_ops", "torch_utils/custom_ops.py", "explicit_replacement",
  "NVlabs/stylegan3 torch_utils/custom_ops.py (md5-cached JIT build of the C++/CUDA plugins)", [
    C("name = torch.cuda.get_device_name().lower()", "torch_cuda_api", R, False,
      "name = torch.npu.get_device_name().lower()",
      "names the build cache after the GPU; only runs while building a plugin, which the ops never request for NPU "
      "tensors"),
    C("os.environ['TORCH_CUDA_ARCH_LIST'] = ''", "env_var", X, False, None,
      "nvcc arch list; meaningless without nvcc"),
    C("torch.utils.cpp_extension.load(name=module_name, build_directory=cached_build_dir,", "custom_cuda_extension",
      R, False,
      "torch_npu.utils.cpp_extension.NpuExtension(...)  # ahead-of-time build of Ascend C kernels",
      "cpp_extension.load is ✘ on A2/A3 and the sources are .cu; " + CUDA_ONLY_PATH),
    C("torch.utils.cpp_extension.load(name=module_name, verbose=verbose_build", "custom_cuda_extension", R, False,
      "torch_npu.utils.cpp_extension.NpuExtension(...)  # ahead-of-time build of Ascend C kernels",
      "second spelling of the same JIT nvcc build; " + CUDA_ONLY_PATH),
]),

E("sg3_filtered_lrelu", "torch_utils/ops/filtered_lrelu.py", "device_branch_or_abstraction",
  "NVlabs/stylegan3 torch_utils/ops/filtered_lrelu.py (plugin op with a reference fallback)", [
    C("_plugin = custom_ops.get_plugin(", "custom_cuda_extension", R, False,
      "_plugin = None  # no Ascend build of filtered_lrelu; the ref path (upfirdn2d + bias_act) is used",
      "JIT nvcc build of four .cu files; " + CUDA_ONLY_PATH),
    C("if torch.cuda.current_stream(x.device) != torch.cuda.default_stream(x.device):", "torch_cuda_api", R, False,
      "if torch.npu.current_stream(x.device) != torch.npu.default_stream(x.device):",
      "inside the CUDA-plugin forward; " + CUDA_ONLY_PATH),
    C("y, so, return_code = _plugin.filtered_lrelu(", "custom_cuda_extension", R, False,
      "y, so, return_code = torch.ops.stylegan.filtered_lrelu(  # only if an Ascend C kernel is written",
      "call into the compiled CUDA plugin; " + CUDA_ONLY_PATH),
    C("so = _plugin.filtered_lrelu_act_(", "custom_cuda_extension", R, False,
      "so = torch.ops.stylegan.filtered_lrelu_act_(  # only if an Ascend C kernel is written",
      "generic-fallback kernel of the same plugin; " + CUDA_ONLY_PATH),
]),

E("sg3_metric_utils", "metrics/metric_utils.py", "explicit_replacement",
  "NVlabs/stylegan3 metrics/metric_utils.py (MetricOptions, feature detector cache, FeatureStats)", [
    C("self.device         = device if device is not None else torch.device('cuda', rank)", "device_type", R, True,
      "self.device         = device if device is not None else torch.device('npu', rank)",
      "default metric device when calc_metrics.py does not pass one; CUDA device fails on an NPU host"),
    C("c = torch.from_numpy(np.stack(c)).pin_memory().to(opts.device)", "pin_memory", R, False,
      "c = torch.from_numpy(np.stack(c)).pin_memory('npu').to(opts.device)", UNCONF_PIN),
]),

E("sg3_viz_renderer", "viz/renderer.py", "explicit_replacement",
  "NVlabs/stylegan3 viz/renderer.py (interactive visualizer: CUDA events, pinned staging buffers)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu",
      "the renderer calls torch.npu.Event / current_stream after the port"),
    C("self._device        = torch.device('cuda')", "device_type", R, True,
      "self._device        = torch.device('npu')", "every network and tensor of the visualizer goes here"),
    C("self._start_event   = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "self._start_event   = torch.npu.Event(enable_timing=True)", "CUDA events need a CUDA build"),
    C("self._end_event     = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "self._end_event     = torch.npu.Event(enable_timing=True)", "CUDA events need a CUDA build"),
    C("self._start_event.record(torch.cuda.current_stream(self._device))", "torch_cuda_api", R, True,
      "self._start_event.record(torch.npu.current_stream(self._device))", "CUDA stream query"),
    C("self._end_event.record(torch.cuda.current_stream(self._device))", "torch_cuda_api", R, True,
      "self._end_event.record(torch.npu.current_stream(self._device))", "CUDA stream query"),
    C("buf = torch.empty(ref.shape, dtype=ref.dtype).pin_memory()", "pin_memory", R, False,
      "buf = torch.empty(ref.shape, dtype=ref.dtype).pin_memory('npu')", UNCONF_PIN),
]),

E("projgan_training_loop", "training/training_loop.py", "explicit_replacement",
  "autonomousvision/projected-gan training/training_loop.py (StyleGAN2-ADA loop without ADA; phase timing events)", [
    C("device = torch.device('cuda', rank)", "device_type", R, True, "device = torch.device('npu', rank)",
      "per-rank device of the whole loop"),
    C("phase.start_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "phase.start_event = torch.npu.Event(enable_timing=True)", "CUDA events need a CUDA build"),
    C("phase.end_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "phase.end_event = torch.npu.Event(enable_timing=True)", "CUDA events need a CUDA build"),
    C("phase.start_event.record(torch.cuda.current_stream(device))", "torch_cuda_api", R, True,
      "phase.start_event.record(torch.npu.current_stream(device))", "CUDA stream query"),
    C("phase.end_event.record(torch.cuda.current_stream(device))", "torch_cuda_api", R, True,
      "phase.end_event.record(torch.npu.current_stream(device))", "CUDA stream query"),
    C("all_gen_c = torch.from_numpy(np.stack(all_gen_c)).pin_memory().to(device)", "pin_memory", R, False,
      "all_gen_c = torch.from_numpy(np.stack(all_gen_c)).pin_memory('npu').to(device)", UNCONF_PIN),
    C("torch.cuda.max_memory_allocated(device)", "torch_cuda_api", R, True,
      "fields += [f\"gpumem {training_stats.report0('Resources/peak_gpu_mem_gb', torch.npu.max_memory_allocated(device) / 2**30):<6.2f}\"]",
      "memory statistics of the CUDA allocator; fails without CUDA"),
    C("torch.cuda.max_memory_reserved(device)", "torch_cuda_api", R, True,
      "fields += [f\"reserved {training_stats.report0('Resources/peak_gpu_mem_reserved_gb', torch.npu.max_memory_reserved(device) / 2**30):<6.2f}\"]",
      "memory statistics of the CUDA allocator; fails without CUDA"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True, "torch.npu.reset_peak_memory_stats()",
      "fails without CUDA"),
    C("not (phase.start_event.cuda_event == 0 and phase.end_event.cuda_event == 0)", "torch_cuda_api", R, False,
      "not (phase.start_event.npu_event == 0 and phase.end_event.npu_event == 0):",
      "reads the raw CUDA event handle to skip never-recorded events; the attribute name on torch.npu.Event is "
      "unconfirmed (npu_event?), or test with .query()"),
]),

# ---------------------------------------------------------------------------------------------------------------
# rosinality/stylegan2-pytorch
# ---------------------------------------------------------------------------------------------------------------

E("rosinality_train", "train.py", "explicit_replacement",
  "rosinality/stylegan2-pytorch train.py (torch.distributed.launch, --local_rank, nccl)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu",
      "entry script: torch.npu.set_device and hccl need torch_npu"),
    C("device = \"cuda\"", "device_type", R, True, "device = \"npu\"",
      "module-level device of the trainer; every model, noise and sample tensor uses it"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(args.local_rank)",
      "per-process device binding under torch.distributed.launch"),
    C("backend=\"nccl\"", "dist_backend", R, True,
      "torch.distributed.init_process_group(backend=\"hccl\", init_method=\"env://\")", "NCCL -> HCCL"),
    C("g_optim = optim.Adam(", "fused_optimizer", R, False, "g_optim = torch_npu.optim.NpuFusedAdam(", FUSED_ADAM),
    C("d_optim = optim.Adam(", "fused_optimizer", R, False, "d_optim = torch_npu.optim.NpuFusedAdam(", FUSED_ADAM),
]),

E("rosinality_fused_act", "op/fused_act.py", "kernel_rewrite",
  "rosinality/stylegan2-pytorch op/fused_act.py (fused bias + leaky ReLU, JIT-built at import time)", [
    C("from torch.utils.cpp_extension import load", "custom_cuda_extension", X, False, None,
      "the import itself is harmless; goes with the JIT build below"),
    C("fused = load(", "custom_cuda_extension", R, True,
      "fused = None  # no nvcc on Ascend: bias + leaky_relu are expressed with torch ops (or an Ascend C kernel)",
      "module-level cpp_extension.load of a .cu kernel runs on import: needs nvcc/CUDA and load() is ✘ on A2/A3, "
      "so `from op import FusedLeakyReLU` fails on an NPU host"),
    C("if input.device.type == \"cpu\":", "device_type", R, True, "if input.device.type != \"cuda\":",
      "only the CPU takes the native path; NPU tensors fall into the else branch and the CUDA extension"),
    C("return FusedLeakyReLUFunction.apply(", "custom_cuda_extension", R, True,
      "return F.leaky_relu(input + bias.view(1, bias.shape[0], *rest_dim), negative_slope) * scale",
      "call site of the compiled fused_bias_act kernel"),
]),

E("rosinality_projector", "projector.py", "explicit_replacement",
  "rosinality/stylegan2-pytorch projector.py (GAN inversion with LPIPS)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", "entry script"),
    C("device = \"cuda\"", "device_type", R, True, "device = \"npu\"", "module-level device string"),
    C("g_ema.load_state_dict(torch.load(args.ckpt)[\"g_ema\"], strict=False)", "tensor_to_device", R, False,
      "g_ema.load_state_dict(torch.load(args.ckpt, map_location=\"cpu\")[\"g_ema\"], strict=False)",
      "train.py saves GPU state dicts and this load has no map_location; stock torch refuses to restore CUDA "
      "storages without CUDA (unconfirmed in the knowledge for torch_npu)"),
    C("model=\"net-lin\", net=\"vgg\", use_gpu=device.startswith(\"cuda\")", "device_type", R, True,
      "model=\"net-lin\", net=\"vgg\", use_gpu=False\n    ).to(device)  # lpips places itself with .cuda()/gpu_ids",
      "lpips chooses its device from a use_gpu flag derived from the device string: with \"npu\" it stays on "
      "the CPU while the images are on the NPU"),
]),

# ---------------------------------------------------------------------------------------------------------------
# BigGAN-PyTorch (ajbrock)
# ---------------------------------------------------------------------------------------------------------------

E("biggan_train", "train.py", "explicit_replacement",
  "ajbrock/BigGAN-PyTorch train.py (nn.DataParallel over G_D, cross-replica BN callback)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", "entry script"),
    C("from sync_batchnorm import patch_replication_callback", "distributed_framework", X, False, None,
      "goes with the DataParallel replication callback below"),
    C("device = 'cuda'", "device_type", R, True, "device = 'npu'", "models, batches and z/y samplers use it"),
    C("GD = nn.DataParallel(GD)", "distributed_framework", R, True,
      "GD = nn.parallel.DistributedDataParallel(GD, device_ids=[local_rank])  # one process per NPU", DP),
    C("patch_replication_callback(GD)", "distributed_framework", X, True, None,
      "asserts an nn.DataParallel; cross-replica BN becomes nn.SyncBatchNorm under DDP"),
]),

E("biggan_utils", "utils.py", "explicit_replacement",
  "ajbrock/BigGAN-PyTorch utils.py (samplers, sample sheets, z/y Distribution, Adam16)", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed(seed)",
      "lazily queued and harmless without CUDA; torch.manual_seed above already seeds the NPU generator"),
    C("G_z =  nn.parallel.data_parallel(G, (z_, G.shared(y_)))", "distributed_framework", R, True,
      "G_z = G(z_, G.shared(y_))",
      "functional torch.nn.parallel.data_parallel is on msFmkTransplt's unsupported list (scatter/replicate "
      "through torch.cuda.comm); taken whenever --parallel is set, as in the launch scripts"),
    C("y = torch.arange(i * classes_per_sheet, (i + 1) * classes_per_sheet, device='cuda')", "device_type", R, True,
      "y = torch.arange(i * classes_per_sheet, (i + 1) * classes_per_sheet, device='npu')",
      "hard-coded device in the sample-sheet helper"),
    C("z_ = torch.randn(classes_per_sheet, G.dim_z, device='cuda')", "device_type", R, True,
      "z_ = torch.randn(classes_per_sheet, G.dim_z, device='npu')", "hard-coded device"),
    C("o = nn.parallel.data_parallel(G, (z_[:classes_per_sheet], G.shared(y)))", "distributed_framework", R, True,
      "o = G(z_[:classes_per_sheet], G.shared(y))", "functional data_parallel (see above)"),
    C("lerp = torch.linspace(0, 1.0, num_midpoints + 2, device='cuda').to(x0.dtype)", "device_type", R, True,
      "lerp = torch.linspace(0, 1.0, num_midpoints + 2, device=x0.device).to(x0.dtype)", "hard-coded device"),
    C("fix_z=False, fix_y=False, device='cuda'):", "device_type", R, True,
      "fix_z=False, fix_y=False, device='npu'):", "default device of interp_sheet"),
    C("out_ims = nn.parallel.data_parallel(G, (zs, ys)).data.cpu()", "distributed_framework", R, True,
      "out_ims = G(zs, ys).data.cpu()", "functional data_parallel (see above)"),
    C("def sample_1hot(batch_size, num_classes, device='cuda'):", "device_type", R, True,
      "def sample_1hot(batch_size, num_classes, device='npu'):",
      "interp_sheet calls it without a device, so the default is what runs"),
    C("def prepare_z_y(G_batch_size, dim_z, nclasses, device='cuda',", "device_type", R, False,
      "def prepare_z_y(G_batch_size, dim_z, nclasses, device='npu',",
      "default only; train.py and sample.py pass device explicitly"),
    C("state['fp32_p'] = p.data.float().cuda()", "tensor_to_device", R, True,
      "state['fp32_p'] = p.data.float().to(p.device)", "Adam16 master weights (--G_fp16 runs)"),
]),

E("biggan_inception_utils", "inception_utils.py", "explicit_replacement",
  "ajbrock/BigGAN-PyTorch inception_utils.py (torchvision Inception, Newton-Schulz FID on the GPU)", [
    C("I = torch.eye(dim,dim).view(1, dim, dim).repeat(batchSize,1,1).type(dtype)", "device_type", R, False,
      "I = torch.eye(dim, dim, device=A.device, dtype=A.dtype).view(1, dim, dim).repeat(batchSize, 1, 1)",
      "moves the identity with a legacy type string taken from A.type() ('torch.cuda.FloatTensor'); whether "
      "Tensor.type() accepts 'torch.npu.FloatTensor' is unconfirmed"),
    C("Z = torch.eye(dim,dim).view(1, dim, dim).repeat(batchSize,1,1).type(dtype)", "device_type", R, False,
      "Z = torch.eye(dim, dim, device=A.device, dtype=A.dtype).view(1, dim, dim).repeat(batchSize, 1, 1)",
      "same legacy type-string move (unconfirmed)"),
    C("inception_model = WrapInception(inception_model.eval()).cuda()", "tensor_to_device", R, True,
      "inception_model = WrapInception(inception_model.eval()).npu()", "the metric network"),
    C("inception_model = nn.DataParallel(inception_model)", "distributed_framework", R, True,
      "pass  # DataParallel unsupported on NPU: evaluate on one device per process", DP),
    C("torch.tensor(data_mu).float().cuda(), torch.tensor(data_sigma).float().cuda())", "tensor_to_device", R, True,
      "FID = torch_calculate_frechet_distance(mu, sigma, torch.tensor(data_mu).float().to(mu.device), torch.tensor(data_sigma).float().to(mu.device))",
      "reference moments moved with .cuda()"),
]),

E("biggan_layers", "layers.py", "explicit_replacement",
  "ajbrock/BigGAN-PyTorch layers.py (SN layers, self-attention, myBN, cross-replica ccbn)", [
    C("from sync_batchnorm import SynchronizedBatchNorm2d as SyncBN2d", "distributed_framework", R, False,
      "from torch.nn import SyncBatchNorm as SyncBN2d  # wrapped to take gain/bias",
      "vendored SyncBN only synchronises through DataParallel replication (✘ on NPU); only with --cross_replica"),
    C("=self.bn = SyncBN2d(output_size, eps=self.eps, momentum=self.momentum, affine=False)",
      "distributed_framework", R, False,
      "self.bn = GainBiasSyncBN(output_size, eps=self.eps, momentum=self.momentum)  # nn.SyncBatchNorm + gain/bias",
      "under DDP the vendored module silently normalises per device; nn.SyncBatchNorm is ✔ on NPU "
      "(--cross_replica only)"),
    C("affine=False)  # noqa: cross-replica path", "distributed_framework", R, False,
      "self.bn = GainBiasSyncBN(output_size, eps=self.eps, momentum=self.momentum)",
      "same, unconditional bn class"),
    C("var = var.type(x.type())", "device_type", R, False, "var = var.to(x.dtype)",
      "legacy type string ('torch.cuda.HalfTensor') round trip; NPU type strings unconfirmed (--mybn only)"),
    C("m = m.type(x.type())", "device_type", R, False, "m = m.to(x.dtype)", "same (unconfirmed)"),
]),

E("biggan_sync_batchnorm", "sync_batchnorm/batchnorm.py", "explicit_replacement",
  "vacancy/Synchronized-BatchNorm-PyTorch batchnorm.py as vendored by BigGAN-PyTorch and SPADE", [
    C("sum_, ssum = ReduceAddCoalesced.apply(target_gpus[0], 2, *to_reduce)", "unsupported_op_workaround", R, False,
      "sum_, ssum = to_reduce  # never reached: nn.SyncBatchNorm replaces this module under DDP",
      "torch.nn.parallel._functions.ReduceAddCoalesced runs torch.cuda.comm.reduce_add_coalesced; only reached "
      "inside a DataParallel replica, which is itself unsupported on NPU"),
    C("broadcasted = Broadcast.apply(target_gpus, mean, inv_std)", "unsupported_op_workaround", R, False,
      "broadcasted = (mean, inv_std)",
      "torch.cuda.comm broadcast (torch.cuda.comm.* ✘); same DataParallel-only path"),
    C("mod = DataParallelWithCallback(mod, device_ids=module.device_ids)", "distributed_framework", R, False,
      "mod = torch.nn.SyncBatchNorm.convert_sync_batchnorm(mod)",
      "only when handed an nn.DataParallel; " + DP),
]),

E("biggan_calc_inception_moments", "calculate_inception_moments.py", "explicit_replacement",
  "ajbrock/BigGAN-PyTorch calculate_inception_moments.py (dataset Inception moments for FID)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", "entry script"),
    C("device = 'cuda'", "device_type", R, True, "device = 'npu'", "batches go here"),
    C("pool_t = torch.from_numpy(pool).cuda()", "tensor_to_device", R, True,
      "pool_t = torch.from_numpy(pool).npu()", "--use_torch moment computation"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", R, True, "if not torch.npu.is_available():",
      "raises on every NPU host"),
]),

# ---------------------------------------------------------------------------------------------------------------
# CycleGAN / pix2pix (junyanz)
# ---------------------------------------------------------------------------------------------------------------

E("cyclegan_networks", "models/networks.py", "explicit_replacement",
  "junyanz/pytorch-CycleGAN-and-pix2pix models/networks.py (init_net with gpu_ids and DataParallel)", [
    C("assert(torch.cuda.is_available())", "torch_cuda_api", R, True, "assert(torch.npu.is_available())",
      "fails on every NPU host with the default --gpu_ids 0"),
    C("net.to(gpu_ids[0])", "tensor_to_device", R, True, "net.to(f'npu:{gpu_ids[0]}')",
      "an int device index means CUDA"),
    C("net = torch.nn.DataParallel(net, gpu_ids)  # multi-GPUs", "distributed_framework", R, True,
      "net = torch.nn.parallel.DistributedDataParallel(net, device_ids=[gpu_ids[0]])  # or no wrapper", DP),
]),

E("cyclegan_base_model", "models/base_model.py", "explicit_replacement",
  "junyanz/pytorch-CycleGAN-and-pix2pix models/base_model.py (device from gpu_ids, save/load)", [
    C("self.device = torch.device('cuda:{}'.format(self.gpu_ids[0]))", "device_type", R, True,
      "self.device = torch.device('npu:{}'.format(self.gpu_ids[0])) if self.gpu_ids else torch.device('cpu')",
      "device of every input tensor (set_input uses self.device)"),
    C("if len(self.gpu_ids) > 0 and torch.cuda.is_available():", "torch_cuda_api", R, True,
      "if len(self.gpu_ids) > 0 and torch.npu.is_available():",
      "False on NPU: the else branch saves with net.cpu() and never moves the net back, so training continues "
      "with a CPU model and NPU inputs"),
    C("net.cuda(self.gpu_ids[0])", "tensor_to_device", R, True, "net.npu(self.gpu_ids[0])",
      "moves the net back after saving"),
    C("if isinstance(net, torch.nn.DataParallel):", "distributed_framework", R, False,
      "if isinstance(net, (torch.nn.DataParallel, torch.nn.parallel.DistributedDataParallel)):",
      "only matters once init_net's DataParallel is replaced by DDP (otherwise loads into the wrapper)"),
]),

E("cyclegan_base_options", "options/base_options.py", "explicit_replacement",
  "junyanz/pytorch-CycleGAN-and-pix2pix options/base_options.py (--gpu_ids parsing, set_device)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu",
      "options are parsed before any model module is imported; torch.npu.set_device needs torch_npu"),
    C("torch.cuda.set_device(opt.gpu_ids[0])", "torch_cuda_api", R, True, "torch.npu.set_device(opt.gpu_ids[0])",
      "fails without CUDA"),
]),

# ---------------------------------------------------------------------------------------------------------------
# SPADE / GauGAN (NVlabs)
# ---------------------------------------------------------------------------------------------------------------

E("spade_pix2pix_model", "models/pix2pix_model.py", "explicit_replacement",
  "NVlabs/SPADE models/pix2pix_model.py (legacy torch.cuda.FloatTensor constructors, .cuda() inputs)", [
    C("self.FloatTensor = torch.cuda.FloatTensor if self.use_gpu() \\", "torch_cuda_api", R, True,
      "self.FloatTensor = torch.npu.FloatTensor if self.use_gpu() \\",
      "legacy CUDA tensor-type constructor used for one-hot maps and losses"),
    C("self.ByteTensor = torch.cuda.ByteTensor if self.use_gpu() \\", "torch_cuda_api", R, True,
      "self.ByteTensor = torch.npu.ByteTensor if self.use_gpu() \\", "legacy CUDA tensor type (edge maps)"),
    C("optimizer_G = torch.optim.Adam(G_params, lr=G_lr, betas=(beta1, beta2))", "fused_optimizer", R, False,
      "optimizer_G = torch_npu.optim.NpuFusedAdam(G_params, lr=G_lr, betas=(beta1, beta2))", FUSED_ADAM),
    C("optimizer_D = torch.optim.Adam(D_params, lr=D_lr, betas=(beta1, beta2))", "fused_optimizer", R, False,
      "optimizer_D = torch_npu.optim.NpuFusedAdam(D_params, lr=D_lr, betas=(beta1, beta2))", FUSED_ADAM),
    C("data['label'] = data['label'].cuda()", "tensor_to_device", R, True, "data['label'] = data['label'].npu()",
      "input moves"),
    C("data['instance'] = data['instance'].cuda()", "tensor_to_device", R, True,
      "data['instance'] = data['instance'].npu()", "input moves"),
    C("data['image'] = data['image'].cuda()", "tensor_to_device", R, True, "data['image'] = data['image'].npu()",
      "input moves"),
]),

E("spade_trainer", "trainers/pix2pix_trainer.py", "explicit_replacement",
  "NVlabs/SPADE trainers/pix2pix_trainer.py (DataParallelWithCallback, with an AMP option added)", [
    C("from models.networks.sync_batchnorm import DataParallelWithCallback", "distributed_framework", X, False, None,
      "goes with the wrapper below"),
    C("self.pix2pix_model = DataParallelWithCallback(self.pix2pix_model,", "distributed_framework", R, True,
      "self.pix2pix_model = torch.nn.parallel.DistributedDataParallel(self.pix2pix_model,",
      "DataParallel subclass (even a single gpu id goes through DataParallel scatter); " + DP),
    C("self.scaler_G = torch.cuda.amp.GradScaler(enabled=self.use_amp)", "amp", R, True,
      "self.scaler_G = torch.npu.amp.GradScaler(enabled=self.use_amp)",
      "the CUDA scaler disables itself without CUDA: --use_amp runs without loss scaling"),
    C("self.scaler_D = torch.cuda.amp.GradScaler(enabled=self.use_amp)", "amp", R, True,
      "self.scaler_D = torch.npu.amp.GradScaler(enabled=self.use_amp)", "same"),
    C("=with torch.cuda.amp.autocast(enabled=self.use_amp):", "amp", R, True,
      "with torch.npu.amp.autocast(enabled=self.use_amp):",
      "CUDA autocast does not cover NPU tensors: --use_amp silently runs in fp32"),
    C("with torch.cuda.amp.autocast(enabled=self.use_amp):  # same policy as the G step", "amp", R, True,
      "with torch.npu.amp.autocast(enabled=self.use_amp):  # same policy as the G step", "same"),
]),

E("spade_normalization", "models/networks/normalization.py", "explicit_replacement",
  "NVlabs/SPADE models/networks/normalization.py (SPADE with synchronized batchnorm)", [
    C("from models.networks.sync_batchnorm import SynchronizedBatchNorm2d", "distributed_framework", R, False,
      "from torch.nn import SyncBatchNorm as SynchronizedBatchNorm2d",
      "import of the vendored module; the uses below are what matter"),
    C("norm_layer = SynchronizedBatchNorm2d(get_out_channel(layer), affine=True)", "distributed_framework", R, False,
      "norm_layer = nn.SyncBatchNorm(get_out_channel(layer), affine=True)",
      "only for the non-default 'sync_batch' D/E norm"),
    C("self.param_free_norm = SynchronizedBatchNorm2d(norm_nc, affine=False)", "distributed_framework", R, True,
      "self.param_free_norm = nn.SyncBatchNorm(norm_nc, affine=False)",
      "default norm_G is spectralspadesyncbatch3x3; the vendored module only syncs through DataParallel "
      "replication (✘ on NPU), so under the DDP port it silently normalises per device; nn.SyncBatchNorm is ✔"),
]),

E("spade_util", "util/util.py", "explicit_replacement",
  "NVlabs/SPADE util/util.py (tensor2im, colour maps, save/load_network)", [
    C("if len(opt.gpu_ids) and torch.cuda.is_available():", "torch_cuda_api", R, True,
      "if len(opt.gpu_ids) and torch.npu.is_available():",
      "save_network moves the net to the CPU first; on NPU this check is False and the generator stays on the CPU "
      "for the rest of training"),
    C("=net.cuda()", "tensor_to_device", R, True, "net.npu()", "moves the net back after saving"),
]),

# ---------------------------------------------------------------------------------------------------------------
# Metrics: pytorch-fid, clean-fid, torch-fidelity
# ---------------------------------------------------------------------------------------------------------------

E("pytorch_fid_score", "src/pytorch_fid/fid_score.py", "device_branch_or_abstraction",
  "mseitzer/pytorch-fid fid_score.py (python -m pytorch_fid, --device)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu",
      "module entry point (python -m pytorch_fid); 'npu' devices need torch_npu loaded"),
    C("device = torch.device(\"cuda\" if (torch.cuda.is_available()) else \"cpu\")", "device_type", B, True,
      "device = torch.device(\"npu\" if torch.npu.is_available() else \"cuda\" if torch.cuda.is_available() else \"cpu\")",
      "without --device an NPU host silently computes FID on the CPU"),
]),

E("cleanfid_fid", "cleanfid/fid.py", "device_branch_or_abstraction",
  "GaParmar/clean-fid cleanfid/fid.py (device=torch.device(\"cuda\") defaults, DataParallel feature extractor)", [
    C("=batch_size=128, device=torch.device(\"cuda\"),", "device_type", R, False,
      "batch_size=128, device=torch.device(\"npu\"),", "internal default; callers pass device"),
    C("shuffle=False, seed=0, batch_size=128, device=torch.device(\"cuda\"),", "device_type", R, False,
      "shuffle=False, seed=0, batch_size=128, device=torch.device(\"npu\"),",
      "default of get_folder_features (callers here pass device)"),
    C("batch_size=128, device=torch.device(\"cuda\"), verbose=True,", "device_type", R, False,
      "batch_size=128, device=torch.device(\"npu\"), verbose=True,", "default of fid_folder"),
    C("=device=torch.device(\"cuda\"), verbose=True):", "device_type", R, False,
      "device=torch.device(\"npu\"), verbose=True):", "default of fid_model"),
    C("batch_size=8, device=torch.device(\"cuda\"), verbose=True,", "device_type", R, False,
      "batch_size=8, device=torch.device(\"npu\"), verbose=True,", "default of compare_folders"),
    C("num_gen=50_000, batch_size=128, device=torch.device(\"cuda\"),", "device_type", R, False,
      "num_gen=50_000, batch_size=128, device=torch.device(\"npu\"),", "default of get_model_features"),
    C("batch_size=32, device=torch.device(\"cuda\"), dataset_name=\"FFHQ\",", "device_type", R, True,
      "batch_size=32, device=torch.device(\"npu\"), dataset_name=\"FFHQ\",",
      "public entry point: fid.compute_fid(dir1, dir2) runs on this default"),
    C("custom_image_tranform=None, custom_fn_resize=None, use_dataparallel=True):", "distributed_framework", R, True,
      "custom_image_tranform=None, custom_fn_resize=None, use_dataparallel=False):",
      "default wraps the Inception feature extractor in nn.DataParallel; " + DP),
]),

E("fidelity_eval", "tools/eval_fidelity.py", "transfer_to_npu",
  "torch-fidelity evaluation script of a GAN repo (GenerativeModelBase wrapper, cuda=True, autocast sampling)", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch\nimport torch_npu\nfrom torch_npu.contrib import transfer_to_npu",
      "transfer_to_npu maps the torch.cuda / .cuda() / autocast calls of this script and of torch-fidelity"),
    C("G = nn.DataParallel(G)", "distributed_framework", R, True, "pass  # one NPU per evaluation process",
      "device_count() > 1 on an 8-NPU host; transfer_to_npu does not make DataParallel work: " + DP),
    C("use_bf16 = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8", "device_capability_check",
      R, True, "use_bf16 = torch.npu.is_available() and torch.npu.is_bf16_supported()",
      "get_device_capability() returns None on NPU (TORCH_NPU_DEVICE_CAPABILITY can configure it), so [0] raises"),
    C("cuda=True,", "device_type", R, False,
      "cuda=True,  # only with transfer_to_npu; otherwise cuda=False (CPU feature extraction)",
      "torch-fidelity places its feature extractor and batches with .cuda(); it works only through "
      "transfer_to_npu's .cuda() patches (unconfirmed for this library)"),
]),

E("stylegan2_ops_setup", "setup.py", "kernel_rewrite",
  "pip-packaged StyleGAN2 ops (fused_bias_act / upfirdn2d built ahead of time as CUDAExtension, BasicSR-style)", [
    C("if torch.cuda.is_available() or os.getenv('FORCE_CUDA', '0') == '1':", "torch_cuda_api", B, True,
      "if is_npu_available():  # build NpuExtension with the Ascend C kernels",
      "on an NPU host this takes the CppExtension branch without the kernel sources: the built module has "
      "unresolved kernel symbols"),
    C("extension = CUDAExtension", "custom_cuda_extension", R, False,
      "extension = NpuExtension  # from torch_npu.utils.cpp_extension import NpuExtension",
      "CUDA branch, not taken on NPU"),
    C("extra_compile_args['nvcc'] = [", "custom_cuda_extension", R, False,
      "extra_compile_args['cxx'] += ['-fstack-protector-all']",
      "nvcc flags (CUDA branch only)"),
    C("major, minor = torch.cuda.get_device_capability()", "device_capability_check", R, True,
      "return  # no arch list for Ascend builds",
      "called whenever STYLEGAN2_EXT=True; raises without CUDA"),
    C("os.environ['TORCH_CUDA_ARCH_LIST'] = f'{major}.{minor}'", "env_var", X, False, None,
      "nvcc arch list"),
]),

# ---------------------------------------------------------------------------------------------------------------
# Files around code
# ---------------------------------------------------------------------------------------------------------------

E("sg3_environment_yml", "environment.yml", "explicit_replacement",
  "NVlabs/stylegan3 environment.yml (pytorch + nvidia channels, cudatoolkit, ninja for the plugins)", [
    C("=- nvidia", "device_type", X, False, None,
      "channel of the CUDA packages removed below; harmless on its own"),
    C("=- pytorch=1.9.1", "device_type", R, True, "- pytorch=2.1.0  # CPU build; torch_npu pairs with torch 2.1.0",
      "torch 1.9.1 has no torch_npu release; the wheel must equal the torch version"),
    C("=- torchvision=0.10.1", "device_type", R, False, "- torchvision=0.16.0",
      "follows the torch bump"),
    C("=- cudatoolkit=11.1", "device_type", X, True, None, "CUDA runtime; pulls the CUDA build of pytorch"),
    C("=- cudatoolkit-dev=11.1", "custom_cuda_extension", X, True, None, "nvcc for the JIT plugins; no use on NPU"),
    C("=- cudnn=8.2", "device_type", X, True, None, "cuDNN"),
    C("=- ninja=1.10.2", "custom_cuda_extension", X, False, None, "only for the JIT plugin builds"),
    C("- gxx_linux-64=9.3.0", "custom_cuda_extension", X, False, None, "host compiler pinned for nvcc 11.1"),
    C("=- pip:", "import_torch_npu", A, True, "- pip:\n    - torch-npu==2.1.0.post12",
      "the torch_npu wheel itself (CANN installed on the host)"),
    C("- pynvml==11.0.0", "torch_cuda_api", X, False, None,
      "NVML has no NPU counterpart (torch.npu.utilization / npu-smi)"),
    C("=- nvidia-ml-py3", "torch_cuda_api", X, False, None, "NVML bindings"),
    C("CUDA_HOME: $CONDA_PREFIX", "env_var", X, False, None, "nvcc location for the plugin builds"),
    C("TORCH_CUDA_ARCH_LIST: \"7.0;8.0;8.6\"", "env_var", X, False, None, "nvcc arch list"),
    C("CUDA_VISIBLE_DEVICES: \"0,1,2,3,4,5,6,7\"", "env_var", R, True,
      "ASCEND_RT_VISIBLE_DEVICES: \"0,1,2,3,4,5,6,7\"",
      "device selection on Ascend is ASCEND_RT_VISIBLE_DEVICES (CUDA_VISIBLE_DEVICES not documented as honoured)"),
    C("NCCL_P2P_LEVEL: NVL", "env_var", X, False, None, "NCCL tuning; no effect on HCCL"),
]),

E("sg2ada_dockerfile", "Dockerfile", "explicit_replacement",
  "NVlabs/stylegan2-ada-pytorch / stylegan3 Dockerfile on the NGC PyTorch image, extended with plugin pre-build", [
    C("FROM nvcr.io/nvidia/pytorch:21.08-py3", "device_type", R, True,
      "FROM ascendai/pytorch:2.1.0  # CANN + torch + torch_npu base image",
      "NGC image = CUDA torch + NCCL; an Ascend base image (CANN toolkit, torch, torch_npu) is needed"),
    C("ENV TORCH_CUDA_ARCH_LIST=\"7.0 7.5 8.0 8.6+PTX\"", "env_var", X, False, None, "nvcc arch list"),
    C("ENV FORCE_CUDA=1", "env_var", X, False, None, "forces CUDA extension builds"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", R, True, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "the Ascend Docker Runtime mounts the NPUs named by ASCEND_VISIBLE_DEVICES; the NVIDIA variable is ignored"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics", "env_var", X, False, None,
      "NVIDIA container-toolkit setting"),
    C("=pynvml", "torch_cuda_api", X, False, None, "NVML bindings; no NPU counterpart"),
    C("bias_act._init(); upfirdn2d._init(); filtered_lrelu._init(); print(torch.cuda.get_device_name())",
      "custom_cuda_extension", X, False, None,
      "pre-builds the CUDA plugins; already guarded by `|| echo`, so it only wastes build time"),
]),

E("sg3_docker_compose", "docker-compose.yml", "explicit_replacement",
  "docker compose file for StyleGAN3 training / metrics services on the NVIDIA container runtime", [
    C("runtime: nvidia", "device_type", R, True, "runtime: ascend",
      "the nvidia runtime does not exist on an Ascend host (Ascend Docker Runtime, or --device /dev/davinciN mounts)"),
    C("- NVIDIA_VISIBLE_DEVICES=all", "env_var", R, True, "- ASCEND_VISIBLE_DEVICES=0-7",
      "the Ascend runtime mounts the NPUs named by ASCEND_VISIBLE_DEVICES"),
    C("- NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", X, False, None, "NVIDIA toolkit setting"),
    C("- CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", R, True, "- ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "process-level device selection"),
    C("- NCCL_IB_DISABLE=1", "env_var", X, False, None, "NCCL setting; no effect on HCCL"),
    C("- NCCL_SOCKET_IFNAME=eth0", "env_var", R, False, "- HCCL_SOCKET_IFNAME=eth0",
      "single node here; HCCL's NIC selection variable is HCCL_SOCKET_IFNAME"),
    C("=- driver: nvidia", "device_type", R, True,
      "# no device reservation: NPUs come from the ascend runtime (ASCEND_VISIBLE_DEVICES)",
      "compose cannot select the nvidia device driver on an Ascend host"),
    C("- NVIDIA_VISIBLE_DEVICES=0", "env_var", R, True, "- ASCEND_VISIBLE_DEVICES=0", "metrics service"),
    C("=- CUDA_VISIBLE_DEVICES=0", "env_var", R, True, "- ASCEND_RT_VISIBLE_DEVICES=0", "metrics service"),
    C("- driver: \"nvidia\"", "device_type", R, True,
      "# no device reservation: NPUs come from the ascend runtime (ASCEND_VISIBLE_DEVICES)", "metrics service"),
]),

E("biggan_launch_sh", "scripts/launch_BigGAN_bs256x8.sh", "explicit_replacement",
  "ajbrock/BigGAN-PyTorch scripts/launch_BigGAN_bs256x8.sh, extended with the HDF5 / moments / sampling steps", [
    C("NUM_GPUS=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)", "device_capability_check", R, False,
      "NUM_GPUS=$(npu-smi info -l | grep -c 'NPU ID')",
      "only feeds an echo; the pipeline's status is wc's, so set -e does not stop"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "device selection"),
    C("export NCCL_DEBUG=WARN", "env_var", X, False, None, "NCCL setting (nothing uses NCCL here anyway)"),
    C("export CUBLAS_WORKSPACE_CONFIG=:4096:8", "env_var", X, False, None, "cuBLAS setting"),
    C("nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv", "device_capability_check", R, True,
      "npu-smi info", "command not found under set -e aborts the script"),
    C("--parallel --batch_size 500", "distributed_framework", R, False, "--batch_size 500",
      "--parallel = nn.DataParallel in the Python code (labelled there); harmless once that is fixed"),
    C("--batch_size 256 --load_in_mem", "distributed_framework", R, False,
      "--dataset I128_hdf5 --shuffle --num_workers 8 --batch_size 256 --load_in_mem \\",
      "--parallel = nn.DataParallel / data_parallel (labelled in train.py and utils.py)"),
    C("CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES} python train.py \\", "env_var", R, True,
      "ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES} python train.py \\", "device selection"),
    C("CUDA_VISIBLE_DEVICES=0 python sample.py \\", "env_var", R, True,
      "ASCEND_RT_VISIBLE_DEVICES=0 python sample.py \\", "device selection"),
    C("=--dataset I128_hdf5 --parallel --shuffle --num_workers 8 --batch_size 256 \\", "distributed_framework", R,
      False, "--dataset I128_hdf5 --shuffle --num_workers 8 --batch_size 256 \\",
      "--parallel on one visible device still goes through data_parallel"),
    C("nvidia-smi --query-compute-apps=pid --format=csv,noheader | xargs -r kill -9 || true",
      "device_capability_check", R, False, "npu-smi info  # inspect leftover processes by hand",
      "guarded by || true"),
]),

E("spade_train_sh", "scripts/train_coco_8gpu.sh", "explicit_replacement",
  "NVlabs/SPADE-style COCO-Stuff 8-GPU training + pytorch-fid evaluation script", [
    C("export CUDA_VISIBLE_DEVICES=${GPUS}", "env_var", R, True, "export ASCEND_RT_VISIBLE_DEVICES=${GPUS}",
      "device selection"),
    C("export CUDA_DEVICE_ORDER=PCI_BUS_ID", "env_var", X, False, None, "CUDA-only"),
    C("export CUDA_LAUNCH_BLOCKING=${CUDA_LAUNCH_BLOCKING:-0}", "env_var", R, False,
      "export ASCEND_LAUNCH_BLOCKING=${ASCEND_LAUNCH_BLOCKING:-0}", "debug switch; default 0 either way"),
    C("if ! command -v nvidia-smi >/dev/null 2>&1; then", "device_capability_check", R, True,
      "if ! command -v npu-smi >/dev/null 2>&1; then", "exits 1 on every NPU host"),
    C("=nvidia-smi -L", "device_capability_check", R, True, "npu-smi info", "set -e: command not found aborts"),
    C("--gpu_ids \"${GPU_IDS}\" \\", "distributed_framework", R, False,
      "--gpu_ids \"${LOCAL_RANK}\" \\  # one device per torchrun process",
      "a multi-id --gpu_ids drives DataParallelWithCallback (labelled in the trainer)"),
    C("\"${DATAROOT}/val_img\" --device cuda:0 --batch-size 50 \\", "device_type", R, True,
      "\"${DATAROOT}/val_img\" --device npu:0 --batch-size 50 \\",
      "pytorch-fid device flag; cuda:0 fails on an NPU host"),
]),

E("projgan_requirements", "requirements.txt", "explicit_replacement",
  "autonomousvision/projected-gan / stylegan-xl style requirements.txt pinned to cu113 wheels", [
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "device_type", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu", "CUDA wheel index"),
    C("-f https://download.pytorch.org/whl/torch_stable.html", "device_type", X, False, None,
      "find-links page; harmless once the +cu pins are gone"),
    C("torch==1.10.1+cu113", "device_type", R, True, "torch==2.1.0\ntorch-npu==2.1.0.post12",
      "CUDA build; torch_npu needs the matching CPU/aarch64 torch (no torch_npu for 1.10)"),
    C("torchvision==0.11.2+cu113", "device_type", R, True, "torchvision==0.16.0", "CUDA build pin"),
    C("torchaudio==0.10.1+cu113", "device_type", R, True, "torchaudio==2.1.0", "CUDA build pin"),
    C("ninja==1.10.2.3", "custom_cuda_extension", X, False, None, "only for the JIT plugin builds"),
    C("apex @ git+https://github.com/NVIDIA/apex.git@22.03", "fused_optimizer", R, False,
      "# apex: Ascend/apex patch build if the fused optimizers are needed",
      "installs a Python-only NVIDIA apex (no kernels without --cuda_ext); Ascend ships its own apex patch"),
    C("nvidia-ml-py3==7.352.0", "torch_cuda_api", X, False, None, "NVML bindings"),
    C("gpustat==1.0.0", "torch_cuda_api", X, False, None, "NVML-based monitor"),
    C("nvidia-dali-cuda110==1.14.0", "custom_cuda_extension", X, True, None,
      "CUDA-only wheel from NVIDIA's index; not installable for NPU"),
    C("cupy-cuda113==10.4.0", "custom_cuda_extension", X, True, None, "cupy has no Ascend support"),
]),
