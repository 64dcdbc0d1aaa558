# Labels for probe149: DETR-family detectors (DETR, Deformable-DETR, DINO, RT-DETR), CUDA -> Ascend NPU.
ENTRIES = []
def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}
def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})

IMPORT_NPU = "import torch_npu"
IMPORT_NOTE = ("entry script must load torch_npu so the 'npu' device and hccl backend exist "
               "(autoload only from torch_npu 2.5.1; these repos pin older torch)")

# ---------------------------------------------------------------- DETR
E("detr_main", "main.py", "explicit_replacement", "facebookresearch/detr main.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C("parser.add_argument('--device', default='cuda',", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu',",
      "default device string feeds torch.device(args.device); 'cuda' fails on an NPU host"),
])

E("detr_misc", "util/misc.py", "explicit_replacement", "facebookresearch/detr util/misc.py", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "tensor_to_device", "replace", True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
      "hard-coded cuda tensor for the all_reduce of meter totals"),
    C("tensor = torch.ByteTensor(storage).to(\"cuda\")", "tensor_to_device", "replace", True,
      "tensor = torch.ByteTensor(storage).to(\"npu\")", "pickled byte tensor moved to cuda for all_gather over the device backend"),
    C("local_size = torch.tensor([tensor.numel()], device=\"cuda\")", "tensor_to_device", "replace", True,
      "local_size = torch.tensor([tensor.numel()], device=\"npu\")", "size tensor created on cuda"),
    C("size_list = [torch.tensor([0], device=\"cuda\") for _ in range(world_size)]", "tensor_to_device", "replace", True,
      "size_list = [torch.tensor([0], device=\"npu\") for _ in range(world_size)]", "receive buffers created on cuda"),
    C("tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device=\"cuda\"))", "tensor_to_device", "replace", True,
      "tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device=\"npu\"))", "receive buffers created on cuda"),
    C("padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device=\"cuda\")", "tensor_to_device", "replace", True,
      "padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device=\"npu\")", "padding created on cuda"),
    C("if torch.cuda.is_available():  # add a peak-memory column", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():  # add a peak-memory column to the log line",
      "False on NPU, so the max-mem column silently disappears; logging only"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():", "same guard around the print; logging only"),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB))", "peak-memory readout; only reached once the guard is ported"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()", "SLURM path: cuda device_count is 0 on an NPU host -> ZeroDivisionError"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu)", "binds the rank to its device"),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True,
      "args.dist_backend = 'hccl'", "NCCL does not exist on Ascend; HCCL is the collective backend"),
])

E("detr_engine", "engine.py", "explicit_replacement", "facebookresearch/detr engine.py", [])

E("detr_submitit", "run_with_submitit.py", "explicit_replacement", "facebookresearch/detr run_with_submitit.py", [
    C("gpus_per_node=num_gpus_per_node,", "distributed_framework", "replace", False,
      "slurm_additional_parameters={'gres': f'npu:{num_gpus_per_node}'},",
      "submitit requests --gpus-per-node; on an Ascend SLURM cluster the GRES name is site-specific (often npu) - unconfirmed"),
    C("kwargs['slurm_constraint'] = 'volta32gb'", "device_type", "removal", False, None,
      "V100-32GB node constraint has no meaning on an Ascend partition; job would not schedule - cluster-specific, unconfirmed"),
])

E("detr_model", "models/detr.py", "explicit_replacement", "facebookresearch/detr models/detr.py", [])

E("detr_tests", "test_all.py", "explicit_replacement", "facebookresearch/detr test_all.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "test module needs torch_npu loaded for the device tests"),
    C("@unittest.skipIf(not torch.cuda.is_available(), \"needs a GPU\")", "torch_cuda_api", "replace", True,
      "@unittest.skipIf(not torch.npu.is_available(), \"needs an NPU\")",
      "guard is False on NPU so the device test silently never runs"),
    C("model = detr_resnet50(pretrained=False).eval().cuda()", "tensor_to_device", "replace", True,
      "model = detr_resnet50(pretrained=False).eval().npu()", "module moved to cuda"),
    C("x = x.to('cuda')", "tensor_to_device", "replace", True, "x = x.to('npu')", "NestedTensor moved to cuda"),
    C("self.assertEqual(out[\"pred_logits\"].device.type, \"cuda\")", "device_type", "replace", True,
      "self.assertEqual(out[\"pred_logits\"].device.type, \"npu\")", "assertion on the device type string would fail"),
    C("needs a GPU for the cuda inputs", "torch_cuda_api", "replace", True,
      "@unittest.skipIf(not torch.npu.is_available(), \"needs an NPU for the device inputs\")",
      "guard is False on NPU so the test silently never runs"),
    C("logits = torch.rand(2, n_queries, n_classes + 1).cuda()", "tensor_to_device", "replace", True,
      "logits = torch.rand(2, n_queries, n_classes + 1).npu()", ".cuda() call"),
    C("boxes = torch.rand(2, n_queries, 4).cuda()", "tensor_to_device", "replace", True,
      "boxes = torch.rand(2, n_queries, 4).npu()", ".cuda() call"),
    C("targets = [{'labels': torch.randint(high=n_classes, size=(n_targets,)).cuda(),", "tensor_to_device", "replace", True,
      "targets = [{'labels': torch.randint(high=n_classes, size=(n_targets,)).npu(),", ".cuda() call"),
    C("'boxes': torch.rand(n_targets, 4).cuda()} for _ in range(2)]", "tensor_to_device", "replace", True,
      "'boxes': torch.rand(n_targets, 4).npu()} for _ in range(2)]", ".cuda() call"),
])

E("detr_docker", "Dockerfile", "explicit_replacement", "facebookresearch/detr Dockerfile", [
    C("FROM pytorch/pytorch:1.5-cuda10.1-cudnn7-runtime", "device_type", "replace", True,
      "FROM ascendai/pytorch:2.1.0-ubuntu22.04",
      "CUDA base image ships a CUDA torch build and no CANN/torch_npu; image name is a placeholder (pick the Ascend/CANN image for your driver)"),
    C("ENV NVIDIA_VISIBLE_DEVICES all", "env_var", "removal", False, None,
      "nvidia-container-runtime variable; ignored on Ascend (devices are passed with --device /dev/davinciN)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES compute,utility", "env_var", "removal", False, None,
      "nvidia-container-runtime variable; ignored on Ascend"),
])

# ---------------------------------------------------------------- Deformable-DETR
E("ddetr_main", "main.py", "explicit_replacement", "fundamentalvision/Deformable-DETR main.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C("parser.add_argument('--device', default='cuda',", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu',", "default device string; 'cuda' fails on an NPU host"),
    C("collate_fn=utils.collate_fn, num_workers=args.num_workers, pin_memory=True)", "pin_memory", "replace", False,
      "collate_fn=utils.collate_fn, num_workers=args.num_workers, pin_memory=True, pin_memory_device='npu')",
      "pin_memory=True pins for the current accelerator; whether torch_npu's DataLoader needs pin_memory_device='npu' depends on version - unconfirmed, perf only"),
])

E("ddetr_misc", "util/misc.py", "explicit_replacement", "fundamentalvision/Deformable-DETR util/misc.py", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "tensor_to_device", "replace", True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')", "hard-coded cuda tensor for the meter all_reduce"),
    C("tensor = torch.ByteTensor(storage).to(\"cuda\")", "tensor_to_device", "replace", True,
      "tensor = torch.ByteTensor(storage).to(\"npu\")", "pickled byte tensor moved to cuda"),
    C("local_size = torch.tensor([tensor.numel()], device=\"cuda\")", "tensor_to_device", "replace", True,
      "local_size = torch.tensor([tensor.numel()], device=\"npu\")", "size tensor on cuda"),
    C("size_list = [torch.tensor([0], device=\"cuda\") for _ in range(world_size)]", "tensor_to_device", "replace", True,
      "size_list = [torch.tensor([0], device=\"npu\") for _ in range(world_size)]", "receive buffers on cuda"),
    C("tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device=\"cuda\"))", "tensor_to_device", "replace", True,
      "tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device=\"npu\"))", "receive buffers on cuda"),
    C("padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device=\"cuda\")", "tensor_to_device", "replace", True,
      "padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device=\"npu\")", "padding on cuda"),
    C("os.environ['LOCAL_SIZE'] = str(torch.cuda.device_count())", "torch_cuda_api", "replace", True,
      "os.environ['LOCAL_SIZE'] = str(torch.npu.device_count())",
      "LOCAL_SIZE becomes 0 on NPU; NodeDistributedSampler (cache_mode) divides by it"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_gpus = torch.npu.device_count()", "0 on NPU -> proc_id % num_gpus raises ZeroDivisionError under SLURM"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)", "binds rank to device"),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True, "args.dist_backend = 'hccl'", "HCCL replaces NCCL on Ascend"),
])

E("ddetr_engine", "engine.py", "explicit_replacement", "fundamentalvision/Deformable-DETR engine.py", [])

E("ddetr_prefetch", "datasets/data_prefetcher.py", "explicit_replacement", "fundamentalvision/Deformable-DETR datasets/data_prefetcher.py", [
    C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True,
      "self.stream = torch.npu.Stream()", "side stream for H2D prefetch; a CUDA stream cannot be created on an NPU host"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True,
      "with torch.npu.stream(self.stream):", "stream context"),
    C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().wait_stream(self.stream)", "stream sync before consuming the prefetched batch"),
    C("samples.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
      "samples.record_stream(torch.npu.current_stream())", "record_stream against the compute stream"),
    C("v.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
      "v.record_stream(torch.npu.current_stream())", "record_stream against the compute stream"),
])

E("ddetr_msda_func", "models/ops/functions/ms_deform_attn_func.py", "kernel_rewrite",
  "fundamentalvision/Deformable-DETR models/ops/functions/ms_deform_attn_func.py", [
    C("import MultiScaleDeformableAttention as MSDA", "custom_cuda_extension", "replace", True,
      "try:\n    import MultiScaleDeformableAttention as MSDA\nexcept ImportError:\n    MSDA = None",
      "nvcc-built extension is not available on Ascend; the bare import fails at module load"),
    C("output = MSDA.ms_deform_attn_forward(", "custom_cuda_extension", "replace", True,
      "output = ms_deform_attn_core_pytorch(value, value_spatial_shapes, sampling_locations, attention_weights)",
      "CUDA kernel call; no MSDA op in torch_npu's op lists, so fall back to the grid_sample reference (grid_sampler_2d has an NPU kernel)"),
    C("MSDA.ms_deform_attn_backward(", "custom_cuda_extension", "replace", True,
      "_msda_pytorch_backward(value, value_spatial_shapes, sampling_locations, attention_weights, grad_output)",
      "CUDA backward kernel; recompute grads through autograd of the reference path (helper name illustrative)"),
])

E("ddetr_msda_mod", "models/ops/modules/ms_deform_attn.py", "kernel_rewrite",
  "fundamentalvision/Deformable-DETR models/ops/modules/ms_deform_attn.py", [])

E("ddetr_setup", "models/ops/setup.py", "kernel_rewrite", "fundamentalvision/Deformable-DETR models/ops/setup.py", [
    C("if (torch.cuda.is_available() and CUDA_HOME is not None) or os.environ.get(\"FORCE_CUDA\", \"0\") == \"1\":",
      "custom_cuda_extension", "add_branch", True,
      "if os.environ.get(\"MSDA_SKIP_BUILD\", \"0\") == \"1\" or not (torch.cuda.is_available() and CUDA_HOME is not None):",
      "on an Ascend host there is no nvcc/CUDA_HOME; add a branch that skips the CUDA build and relies on the PyTorch path"),
    C("raise NotImplementedError('Cuda is not availabel')", "custom_cuda_extension", "replace", True,
      "return []", "build aborts outright without CUDA; return no extensions instead"),
])

E("ddetr_make", "models/ops/make.sh", "kernel_rewrite", "fundamentalvision/Deformable-DETR models/ops/make.sh", [
    C("export TORCH_CUDA_ARCH_LIST=", "env_var", "removal", False, None, "CUDA arch list is meaningless without nvcc"),
    C("python setup.py build install", "custom_cuda_extension", "replace", True,
      "echo \"Ascend NPU: MultiScaleDeformableAttention uses the PyTorch path, nothing to build\"",
      "CUDA extension build fails on an NPU host"),
])

E("ddetr_opstest", "models/ops/test.py", "explicit_replacement", "fundamentalvision/Deformable-DETR models/ops/test.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "standalone test script"),
    C("shapes = torch.as_tensor([(6, 4), (3, 2)], dtype=torch.long).cuda()", "tensor_to_device", "replace", True,
      "shapes = torch.as_tensor([(6, 4), (3, 2)], dtype=torch.long).npu()", ".cuda() call"),
    C("=value = torch.rand(N, S, M, D).cuda() * 0.01", "tensor_to_device", "replace", True,
      "value = torch.rand(N, S, M, D).npu() * 0.01", ".cuda() call"),
    C("=sampling_locations = torch.rand(N, Lq, M, L, P, 2).cuda()", "tensor_to_device", "replace", True,
      "sampling_locations = torch.rand(N, Lq, M, L, P, 2).npu()", ".cuda() call"),
    C("=attention_weights = torch.rand(N, Lq, M, L, P).cuda() + 1e-5", "tensor_to_device", "replace", True,
      "attention_weights = torch.rand(N, Lq, M, L, P).npu() + 1e-5", ".cuda() call"),
    C("value = torch.rand(N, S, M, D).cuda() * 0.01  # fp32 inputs", "tensor_to_device", "replace", True,
      "value = torch.rand(N, S, M, D).npu() * 0.01  # fp32 inputs", ".cuda() call"),
    C("sampling_locations = torch.rand(N, Lq, M, L, P, 2).cuda()  # fp32 inputs", "tensor_to_device", "replace", True,
      "sampling_locations = torch.rand(N, Lq, M, L, P, 2).npu()  # fp32 inputs", ".cuda() call"),
    C("attention_weights = torch.rand(N, Lq, M, L, P).cuda() + 1e-5  # fp32 inputs", "tensor_to_device", "replace", True,
      "attention_weights = torch.rand(N, Lq, M, L, P).npu() + 1e-5  # fp32 inputs", ".cuda() call"),
    C("value = torch.rand(N, S, M, channels).cuda() * 0.01", "tensor_to_device", "replace", True,
      "value = torch.rand(N, S, M, channels).npu() * 0.01", ".cuda() call"),
    C("sampling_locations = torch.rand(N, Lq, M, L, P, 2).cuda()  # grad check", "tensor_to_device", "replace", True,
      "sampling_locations = torch.rand(N, Lq, M, L, P, 2).npu()  # grad check", ".cuda() call"),
    C("attention_weights = torch.rand(N, Lq, M, L, P).cuda() + 1e-5  # grad check", "tensor_to_device", "replace", True,
      "attention_weights = torch.rand(N, Lq, M, L, P).npu() + 1e-5  # grad check", ".cuda() call"),
])

E("ddetr_launchsh", "tools/run_dist_launch.sh", "explicit_replacement", "fundamentalvision/Deformable-DETR tools/run_dist_launch.sh", [
    C("=set -x", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN runtime environment must be sourced before python starts"),
    C("export CUDA_VISIBLE_DEVICES=", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-$(seq -s, 0 $((GPUS_PER_NODE-1)))}",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime, so the device mask silently does nothing"),
    C("export NCCL_DEBUG=", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=${ASCEND_GLOBAL_LOG_LEVEL:-3}",
      "NCCL debug knob is a no-op under HCCL; nearest equivalent is CANN log level"),
    C("export NCCL_IB_DISABLE=", "env_var", "removal", False, None, "NCCL-only knob; silently ignored under HCCL"),
])

E("ddetr_slurmsh", "tools/run_dist_slurm.sh", "explicit_replacement", "fundamentalvision/Deformable-DETR tools/run_dist_slurm.sh", [
    C("=set -x", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN runtime environment must be sourced on each node"),
    C("export NCCL_SOCKET_IFNAME=", "env_var", "replace", False,
      "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-ib0}",
      "NIC selection for the rendezvous; NCCL variable ignored by HCCL (HCCL_SOCKET_IFNAME is the documented equivalent)"),
    C("--gres=gpu:${GPUS_PER_NODE}", "distributed_framework", "replace", False,
      "--gres=npu:${GPUS_PER_NODE} \\",
      "GPU GRES request; the Ascend GRES name is cluster configuration - unconfirmed"),
])

E("ddetr_launchpy", "tools/launch.py", "explicit_replacement", "fundamentalvision/Deformable-DETR tools/launch.py", [
    C("if args.nproc_per_node > torch.cuda.device_count():", "torch_cuda_api", "replace", False,
      "if args.nproc_per_node > torch.npu.device_count():", "warning-only check; cuda count is 0 on NPU so it always fires"),
    C("\"*****************************************\".format(args.nproc_per_node, torch.cuda.device_count()))", "torch_cuda_api", "replace", False,
      "\"*****************************************\".format(args.nproc_per_node, torch.npu.device_count()))", "message text only"),
])

# ---------------------------------------------------------------- DINO
E("dino_main", "main.py", "explicit_replacement", "IDEA-Research/DINO main.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C("parser.add_argument('--device', default='cuda',", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu',", "default device string; 'cuda' fails on an NPU host"),
])

E("dino_engine", "engine.py", "explicit_replacement", "IDEA-Research/DINO engine.py", [
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
      "cuda GradScaler disables itself without CUDA, so --amp silently trains without loss scaling"),
    C("=with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=args.amp):",
      "cuda autocast is disabled (warning) on an NPU host: --amp silently runs fp32"),
    C("with torch.cuda.amp.autocast(enabled=args.amp):  # evaluate", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=args.amp):  # evaluate under the same precision as training",
      "same for evaluation"),
])

E("dino_scripts", "scripts/DINO_train_dist.sh", "explicit_replacement", "IDEA-Research/DINO scripts/DINO_train_dist.sh", [
    C("coco_path=$1", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced before launching"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "ignored by the Ascend runtime"),
])

E("dino_evalsh", "scripts/DINO_eval.sh", "explicit_replacement", "IDEA-Research/DINO scripts/DINO_eval.sh", [
    C("coco_path=$1", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced before running"),
    C("CUDA_VISIBLE_DEVICES=0 python main.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=0 python main.py \\",
      "single-device eval relies on the mask; without it the process still picks device 0, but the intended masking is silently ignored"),
])

E("dino_env", "environment.yml", "explicit_replacement", "IDEA-Research/DINO conda environment (forks)", [
    C("  - nvidia", "device_type", "removal", False, None, "NVIDIA conda channel serves CUDA runtime packages only"),
    C("pytorch=1.9.0", "device_type", "replace", True, "  - pytorch=2.1.0",
      "torch_npu has no build for torch 1.9; the pytorch channel build is the CUDA variant. Must move to a torch version with a torch_npu wheel"),
    C("cudatoolkit=11.1", "device_type", "removal", False, None, "CUDA runtime package is dead weight on an Ascend host"),
    C("      - pycocotools", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.1.0.post12",
      "torch_npu wheel pinned to the torch version (CANN installed separately)"),
])

E("dino_utils", "util/utils.py", "explicit_replacement", "IDEA-Research/DINO util/utils.py", [
    C("self.sync = sync and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "self.sync = sync and torch.npu.is_available()",
      "without sync the FPS benchmark times asynchronous NPU launches and reports wrong numbers"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "device sync for timing"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if not torch.npu.is_available():",
      "memory string reports 'cpu' on NPU; logging only"),
    C("mem = torch.cuda.max_memory_reserved() / (1024 ** 3)", "torch_cuda_api", "replace", False,
      "mem = torch.npu.max_memory_reserved() / (1024 ** 3)", "peak-memory readout; logging only"),
])

# ---------------------------------------------------------------- RT-DETR
E("rtdetr_dist", "src/misc/dist.py", "explicit_replacement", "lyuwenyu/RT-DETR rtdetr_pytorch src/misc/dist.py", [
    C("tdist.init_process_group(init_method='env://', )", "dist_backend", "replace", False,
      "tdist.init_process_group(backend='hccl', init_method='env://', )",
      "no backend given: default backend selection may pick hccl via torch_npu's registration - unconfirmed, explicit hccl is safer"),
    C("device = torch.device(f'cuda:{rank}')", "device_type", "replace", True,
      "device = torch.device(f'npu:{rank}')", "cuda device object; also uses global rank as local index (upstream quirk, kept)"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)",
      "failure here is swallowed by the bare except -> silently 'Not init distributed mode'"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "sync_time guard is False on NPU so timings are taken without a device sync; timing only"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", False, "torch.npu.synchronize()", "device sync for timing"),
    C("device_cap = torch.cuda.get_device_capability()", "device_capability_check", "replace", False,
      "device_cap = None  # NPU: get_device_capability returns None; no SM-based speedup table",
      "only gates a warning about torch.compile speedups; guard above is already False on NPU"),
])

E("rtdetr_solver", "src/solver/solver.py", "explicit_replacement", "lyuwenyu/RT-DETR rtdetr_pytorch src/solver/solver.py", [])

E("rtdetr_engine", "src/solver/det_engine.py", "explicit_replacement", "lyuwenyu/RT-DETR rtdetr_pytorch src/solver/det_engine.py", [])

E("rtdetr_amp", "src/optim/amp.py", "explicit_replacement", "lyuwenyu/RT-DETR rtdetr_pytorch src/optim/amp.py", [
    C("import torch.cuda.amp as amp", "amp", "replace", True, "import torch_npu.npu.amp as amp",
      "the registered GradScaler is the CUDA one; enabled without CUDA it disables itself, so use_amp silently loses loss scaling"),
])

E("rtdetr_config", "src/core/config.py", "explicit_replacement", "lyuwenyu/RT-DETR rtdetr_pytorch src/core/config.py", [
    C("from torch.cuda.amp.grad_scaler import GradScaler", "amp", "replace", True,
      "from torch_npu.npu.amp import GradScaler", "CUDA GradScaler type used for the default scaler"),
    C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "add_branch", True,
      "device = 'npu' if torch.npu.is_available() else ('cuda' if torch.cuda.is_available() else 'cpu')",
      "default device silently falls back to CPU on an NPU host"),
    C("if self._scaler is None and self.use_amp and torch.cuda.is_available():", "amp", "replace", True,
      "if self._scaler is None and self.use_amp and torch.npu.is_available():",
      "guard is False on NPU: --amp silently runs without a scaler"),
])

E("rtdetr_req", "requirements.txt", "explicit_replacement", "lyuwenyu/RT-DETR rtdetr_pytorch requirements.txt", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "device_type", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; x86 Ascend hosts take the CPU torch build (aarch64 uses plain PyPI)"),
    C("torch==2.0.1", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "torch_npu pin; 2.0.1 has only an rc torch_npu, so in practice torch is bumped to 2.1.0 alongside"),
    C("onnxruntime-gpu==1.15.1", "device_type", "replace", False, "onnxruntime==1.15.1",
      "CUDA build of onnxruntime, used only by the ONNX export check; no aarch64 wheel - unconfirmed for this version"),
])

E("rtdetr_train", "tools/train.py", "explicit_replacement", "lyuwenyu/RT-DETR rtdetr_pytorch tools/train.py", [
    C("=import argparse", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script never imports torch directly; torch_npu must be loaded before src.* builds models on 'npu'"),
])
