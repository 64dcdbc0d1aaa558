# Labels for probe196: trajectory prediction / motion forecasting (MTR, QCNet/HiVT, Wayformer, MotionLM, nuPlan).
# Format: see bench/probe_build.py.  One label per upstream line a careful porter edits for torch_npu.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ----------------------------------------------------------------------------------------------------------------
# MTR (Motion Transformer, Waymo Open Motion) -- OpenPCDet-style tools/, mtr/ops CUDA extensions
# ----------------------------------------------------------------------------------------------------------------

E("mtr_setup", "setup.py", "kernel_rewrite",
  "MTR setup.py building mtr.ops.knn / mtr.ops.attention with CUDAExtension", [
      C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", True,
        "from torch_npu.utils.cpp_extension import BuildExtension, NpuExtension",
        "CUDAExtension needs nvcc/CUDA_HOME; no nvcc on an Ascend host. NpuExtension links torch_npu/ACL."),
      C("cuda_ext = CUDAExtension(", "custom_cuda_extension", "replace", True,
        "cuda_ext = NpuExtension(",
        "build the ops against torch_npu instead of CUDA"),
      C("'nvcc': ['-O2', '-gencode=arch=compute_70,code=sm_70', '-gencode=arch=compute_80,code=sm_80'],",
        "custom_cuda_extension", "removal", False, None,
        "nvcc flags / sm_70/sm_80 gencodes are meaningless without a .cu toolchain; ignored once CUDAExtension is gone"),
      C("'src/knn_gpu.cu',", "custom_cuda_extension", "replace", True,
        "'src/knn_npu.cpp',  # Ascend C kernel / torch-op rewrite",
        ".cu kernel cannot be compiled on NPU; must be rewritten (Ascend C or torch ops)"),
      C("'src/attention_weight_computation_kernel_v2.cu',", "custom_cuda_extension", "replace", True,
        "'src/attention_weight_computation_npu_v2.cpp',",
        ".cu kernel cannot be compiled on NPU"),
      C("'src/attention_value_computation_kernel_v2.cu',", "custom_cuda_extension", "replace", True,
        "'src/attention_value_computation_npu_v2.cpp',",
        ".cu kernel cannot be compiled on NPU"),
      C("'src/attention_weight_computation_kernel.cu',", "custom_cuda_extension", "removal", True, None,
        "v1 .cu kernel (unused by the v2 path) still breaks the build; drop it or rewrite it"),
      C("'src/attention_value_computation_kernel.cu',", "custom_cuda_extension", "removal", True, None,
        "v1 .cu kernel still breaks the build; drop it or rewrite it"),
  ])

E("mtr_common_utils", "mtr/utils/common_utils.py", "explicit_replacement",
  "MTR mtr/utils/common_utils.py (OpenPCDet lineage: init_dist_pytorch / init_dist_slurm)", [
      C("batch_offsets = torch.zeros(bs + 1).int().cuda()", "tensor_to_device", "replace", True,
        "batch_offsets = torch.zeros(bs + 1, device=batch_idxs.device).int()",
        ".cuda() fails without CUDA; offsets must live on the NPU next to batch_idxs"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(seed)",
        "torch.cuda.manual_seed_all is a lazy no-op without CUDA; torch.manual_seed above already seeds the "
        "PrivateUse1 device in torch>=2.1 (unconfirmed in knowledge), so only explicit for clarity"),
      C("def init_dist_slurm(tcp_port, local_rank, backend='nccl'):", "dist_backend", "replace", True,
        "def init_dist_slurm(tcp_port, local_rank, backend='hccl'):",
        "NCCL is not available on Ascend; HCCL is the collective backend"),
      C("num_gpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "num_gpus_per_node = torch.npu.device_count()",
        "torch.cuda.device_count() is 0 on an NPU host -> modulo by zero below"),
      C("torch.cuda.set_device(proc_id % num_gpus_per_node)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(proc_id % num_gpus_per_node)",
        "binds the process to a CUDA device; fails without CUDA"),
      C("def init_dist_pytorch(tcp_port, local_rank, backend='nccl'):", "dist_backend", "replace", True,
        "def init_dist_pytorch(tcp_port, local_rank, backend='hccl'):",
        "NCCL default backend -> HCCL"),
      C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "num_gpus = torch.npu.device_count()",
        "0 on an NPU host -> ZeroDivisionError in local_rank % num_gpus"),
      C("torch.cuda.set_device(local_rank % num_gpus)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(local_rank % num_gpus)",
        "device binding must target the NPU"),
      C("gpu_per_machine = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "gpu_per_machine = torch.npu.device_count()",
        "returns 0 on an NPU host; callers divide by it"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if not torch.npu.is_available():",
        "only feeds the memory number in the training log (would silently log 0)"),
      C("return torch.cuda.max_memory_allocated() / 1024.0 / 1024.0", "torch_cuda_api", "replace", False,
        "return torch.npu.max_memory_allocated() / 1024.0 / 1024.0",
        "log-only statistic; torch.cuda version returns 0 when CUDA is not initialised"),
  ])

E("mtr_train", "tools/train.py", "explicit_replacement",
  "MTR tools/train.py (--launcher pytorch, init_dist_%s, SyncBN, DDP)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "entry script: register the NPU backend before any torch.npu use (needed on torch_npu < 2.5.1)"),
      C("args.tcp_port, args.local_rank, backend='nccl'", "dist_backend", "replace", True,
        "args.tcp_port, args.local_rank, backend='hccl'",
        "explicit nccl backend at the call site overrides the helper default"),
      C("gpu_list = os.environ['CUDA_VISIBLE_DEVICES'] if 'CUDA_VISIBLE_DEVICES' in os.environ.keys() else 'ALL'",
        "env_var", "replace", False,
        "gpu_list = os.environ['ASCEND_RT_VISIBLE_DEVICES'] if 'ASCEND_RT_VISIBLE_DEVICES' in os.environ.keys() else 'ALL'",
        "only logged; on NPU the visible-device variable is ASCEND_RT_VISIBLE_DEVICES"),
      C("=model.cuda()", "tensor_to_device", "replace", True,
        "model.npu()",
        "moves the model to CUDA; fails on an NPU host"),
      C("model = nn.parallel.DistributedDataParallel(model, device_ids=[cfg.LOCAL_RANK % torch.cuda.device_count()])",
        "torch_cuda_api", "replace", True,
        "model = nn.parallel.DistributedDataParallel(model, device_ids=[cfg.LOCAL_RANK % torch.npu.device_count()])",
        "torch.cuda.device_count() is 0 on NPU -> ZeroDivisionError"),
  ])

E("mtr_train_utils", "tools/train_utils/train_utils.py", "explicit_replacement",
  "MTR tools/train_utils/train_utils.py (train_one_epoch / train_model)", [
      C("mem_mb = torch.cuda.max_memory_allocated() / 1024 ** 2", "torch_cuda_api", "replace", False,
        "mem_mb = torch.npu.max_memory_allocated() / 1024 ** 2",
        "log-only; torch.cuda version silently reports 0 MB on NPU"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()",
        "no-op without CUDA; NPU caching allocator is not released (memory head-room only)"),
      C("torch.cuda.empty_cache()  # free training activations before running evaluation", "torch_cuda_api",
        "replace", False,
        "torch.npu.empty_cache()  # free training activations before running evaluation",
        "no-op without CUDA; memory head-room only"),
  ])

E("mtr_eval_utils", "tools/eval_utils/eval_utils.py", "explicit_replacement",
  "MTR tools/eval_utils/eval_utils.py (eval_one_epoch + a latency benchmark helper)", [
      C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "num_gpus = torch.npu.device_count()",
        "0 on NPU -> ZeroDivisionError in cfg.LOCAL_RANK % num_gpus"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()",
        "torch.cuda.synchronize() initialises CUDA and raises on a host without CUDA"),
      C("torch.cuda.synchronize()  # wait for the decoder / NMS kernels before stopping the clock", "torch_cuda_api",
        "replace", True,
        "torch.npu.synchronize()  # wait for the decoder / NMS kernels before stopping the clock",
        "raises without CUDA; NPU launches are async so timing also needs the NPU sync"),
      C("f'p90 {np.percentile(timings, 90):.1f} ms, peak mem {torch.cuda.max_memory_allocated() / 2 ** 20:.0f} MB')",
        "torch_cuda_api", "replace", False,
        "f'p90 {np.percentile(timings, 90):.1f} ms, peak mem {torch.npu.max_memory_allocated() / 2 ** 20:.0f} MB')",
        "log-only number (0 on NPU otherwise)"),
  ])

E("mtr_knn_utils", "mtr/ops/knn/knn_utils.py", "kernel_rewrite",
  "MTR mtr/ops/knn/knn_utils.py (autograd.Function wrappers over the knn_cuda extension)", [
      C("from . import knn_cuda", "custom_cuda_extension", "replace", True,
        "from . import knn_npu  # Ascend C rewrite (or a cdist+topk torch implementation)",
        "the nvcc-built knn_cuda module does not exist on an NPU build"),
      C("assert xyz.is_contiguous() and xyz.is_cuda", "device_type", "replace", True,
        "assert xyz.is_contiguous() and xyz.is_npu",
        "is_cuda is False for NPU tensors -> AssertionError"),
      C("assert query_xyz.is_contiguous() and query_xyz.is_cuda", "device_type", "replace", True,
        "assert query_xyz.is_contiguous() and query_xyz.is_npu",
        "is_cuda is False for NPU tensors"),
      C("assert batch_idxs.is_contiguous() and batch_idxs.is_cuda", "device_type", "replace", True,
        "assert batch_idxs.is_contiguous() and batch_idxs.is_npu",
        "is_cuda is False for NPU tensors"),
      C("assert query_batch_offsets.is_contiguous() and query_batch_offsets.is_cuda", "device_type", "replace", True,
        "assert query_batch_offsets.is_contiguous() and query_batch_offsets.is_npu",
        "is_cuda is False for NPU tensors"),
      C("idx = torch.cuda.IntTensor(n, k).zero_()", "torch_cuda_api", "replace", True,
        "idx = torch.zeros((n, k), dtype=torch.int32, device=xyz.device)",
        "legacy CUDA tensor type constructor; fails without CUDA"),
      C("knn_cuda.knn_batch(xyz, query_xyz, batch_idxs, query_batch_offsets, idx, n, m, k)", "custom_cuda_extension",
        "replace", True,
        "knn_npu.knn_batch(xyz, query_xyz, batch_idxs, query_batch_offsets, idx, n, m, k)",
        "call into the CUDA kernel"),
      C("assert xyz.is_cuda and query_xyz.is_cuda, 'knn_batch_mlogk only supports CUDA tensors'", "device_type",
        "replace", True,
        "assert xyz.is_npu and query_xyz.is_npu, 'knn_batch_mlogk only supports NPU tensors'",
        "is_cuda is False for NPU tensors"),
      C("assert batch_idxs.is_cuda and query_batch_offsets.is_cuda", "device_type", "replace", True,
        "assert batch_idxs.is_npu and query_batch_offsets.is_npu",
        "is_cuda is False for NPU tensors"),
      C("knn_cuda.knn_batch_mlogk(xyz, query_xyz, batch_idxs, query_batch_offsets, idx, n, m, k)",
        "custom_cuda_extension", "replace", True,
        "knn_npu.knn_batch_mlogk(xyz, query_xyz, batch_idxs, query_batch_offsets, idx, n, m, k)",
        "call into the CUDA kernel used by the MTR encoder's local attention"),
  ])

E("mtr_attention_utils", "mtr/ops/attention/attention_utils_v2.py", "kernel_rewrite",
  "MTR mtr/ops/attention/attention_utils_v2.py (sparse local attention via attention_cuda)", [
      C("from . import attention_cuda", "custom_cuda_extension", "replace", True,
        "from . import attention_npu  # Ascend C rewrite of the v2 kernels",
        "the nvcc-built attention_cuda module does not exist on an NPU build"),
      C("output = torch.cuda.FloatTensor(total_query_num, local_size, nhead).zero_()", "torch_cuda_api", "replace",
        True,
        "output = query_features.new_zeros((total_query_num, local_size, nhead))",
        "legacy CUDA tensor constructor; fails without CUDA"),
      C("attention_cuda.attention_weight_computation_wrapper_v2(", "custom_cuda_extension", "replace", True,
        "attention_npu.attention_weight_computation_wrapper_v2(",
        "CUDA kernel call"),
      C("grad_query_features = Variable(torch.cuda.FloatTensor(", "torch_cuda_api", "replace", True,
        "grad_query_features = Variable(query_features.new_zeros(",
        "legacy CUDA tensor constructor in backward"),
      C("grad_key_features = Variable(torch.cuda.FloatTensor(", "torch_cuda_api", "replace", True,
        "grad_key_features = Variable(key_features.new_zeros(",
        "legacy CUDA tensor constructor in backward"),
      C("attention_cuda.attention_weight_computation_grad_wrapper_v2(", "custom_cuda_extension", "replace", True,
        "attention_npu.attention_weight_computation_grad_wrapper_v2(",
        "CUDA kernel call (backward)"),
      C("attention_cuda.attention_value_computation_wrapper_v2(", "custom_cuda_extension", "replace", True,
        "attention_npu.attention_value_computation_wrapper_v2(",
        "CUDA kernel call"),
      C("attention_cuda.attention_value_computation_grad_wrapper_v2(", "custom_cuda_extension", "replace", True,
        "attention_npu.attention_value_computation_grad_wrapper_v2(",
        "CUDA kernel call (backward)"),
  ])

E("mtr_encoder", "mtr/models/context_encoder/mtr_encoder.py", "explicit_replacement",
  "MTR mtr/models/context_encoder/mtr_encoder.py (polyline encoders + local attention via knn)", [
      C("obj_trajs, obj_trajs_mask = input_dict['obj_trajs'].cuda(), input_dict['obj_trajs_mask'].cuda()",
        "tensor_to_device", "replace", True,
        "obj_trajs, obj_trajs_mask = input_dict['obj_trajs'].npu(), input_dict['obj_trajs_mask'].npu()",
        "batch tensors are moved to CUDA inside the model"),
      C("map_polylines, map_polylines_mask = input_dict['map_polylines'].cuda(), input_dict['map_polylines_mask'].cuda()",
        "tensor_to_device", "replace", True,
        "map_polylines, map_polylines_mask = input_dict['map_polylines'].npu(), input_dict['map_polylines_mask'].npu()",
        ".cuda() fails on NPU"),
      C("obj_trajs_last_pos = input_dict['obj_trajs_last_pos'].cuda()", "tensor_to_device", "replace", True,
        "obj_trajs_last_pos = input_dict['obj_trajs_last_pos'].npu()",
        ".cuda() fails on NPU"),
      C("map_polylines_center = input_dict['map_polylines_center'].cuda()", "tensor_to_device", "replace", True,
        "map_polylines_center = input_dict['map_polylines_center'].npu()",
        ".cuda() fails on NPU"),
  ])

E("mtr_decoder", "mtr/models/motion_decoder/mtr_decoder.py", "explicit_replacement",
  "MTR mtr/models/motion_decoder/mtr_decoder.py (intention queries, dynamic map collection, GMM loss)", [
      C("cur_intention_points = torch.from_numpy(cur_intention_points).float().view(-1, 2).cuda()",
        "tensor_to_device", "replace", True,
        "cur_intention_points = torch.from_numpy(cur_intention_points).float().view(-1, 2).npu()",
        "intention points are created on CUDA at model construction"),
      C("center_gt_trajs = self.forward_ret_dict['center_gt_trajs'].cuda()", "tensor_to_device", "replace", True,
        "center_gt_trajs = self.forward_ret_dict['center_gt_trajs'].npu()",
        ".cuda() fails on NPU"),
      C("center_gt_trajs_mask = self.forward_ret_dict['center_gt_trajs_mask'].cuda()", "tensor_to_device", "replace",
        True,
        "center_gt_trajs_mask = self.forward_ret_dict['center_gt_trajs_mask'].npu()",
        ".cuda() fails on NPU"),
      C("obj_trajs_future_state = self.forward_ret_dict['obj_trajs_future_state'].cuda()", "tensor_to_device",
        "replace", True,
        "obj_trajs_future_state = self.forward_ret_dict['obj_trajs_future_state'].npu()",
        ".cuda() fails on NPU"),
      C("obj_trajs_future_mask = self.forward_ret_dict['obj_trajs_future_mask'].cuda()", "tensor_to_device",
        "replace", True,
        "obj_trajs_future_mask = self.forward_ret_dict['obj_trajs_future_mask'].npu()",
        ".cuda() fails on NPU"),
      C("temp_gt_idx = torch.zeros(num_center_objects * num_objects).cuda().long()", "tensor_to_device", "replace",
        True,
        "temp_gt_idx = torch.zeros(num_center_objects * num_objects, device=pred_dense_trajs.device).long()",
        ".cuda() fails on NPU"),
  ])

E("mtr_dataset_init", "mtr/datasets/__init__.py", "explicit_replacement",
  "MTR mtr/datasets/__init__.py build_dataloader", [
      C("dataset, batch_size=batch_size, pin_memory=True, num_workers=workers,", "pin_memory", "replace", False,
        "dataset, batch_size=batch_size, pin_memory=True, pin_memory_device='npu', num_workers=workers,",
        "performance only: without an accelerator name older DataLoaders pin for CUDA only and silently skip "
        "pinning on an NPU host (unconfirmed in knowledge)"),
  ])

E("mtr_dist_train_sh", "tools/scripts/dist_train.sh", "explicit_replacement",
  "MTR tools/scripts/dist_train.sh (torch.distributed.launch --launcher pytorch)", [
      C("=set -x", "import_torch_npu", "npu_only_addition", True,
        SET_ENV,
        "CANN environment (libascendcl/libhccl on LD_LIBRARY_PATH) must be sourced before python starts"),
  ])

E("mtr_waymo_eval", "mtr/datasets/waymo/waymo_eval.py", "explicit_replacement",
  "MTR mtr/datasets/waymo/waymo_eval.py (TF Waymo motion metrics; deliberately no labels)", [
  ])

E("mtr_requirements", "requirements.txt", "explicit_replacement",
  "MTR-style requirements.txt pinned to cu113 wheels", [
      C("--extra-index-url https://download.pytorch.org/whl/cu113", "torch_cuda_api", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheel index; torch_npu needs the plain CPU torch build (x86) or PyPI torch (aarch64)"),
      C("torch==1.12.1+cu113", "torch_cuda_api", "replace", True,
        "torch==2.1.0",
        "CUDA build, and no torch_npu release exists for torch 1.12; torch must equal the torch_npu version"),
      C("# torch must match the CUDA toolkit used to build mtr/ops (knn_cuda, attention_cuda)", "import_torch_npu",
        "npu_only_addition", True,
        "torch-npu==2.1.0.post12",
        "the Ascend adapter itself"),
  ])

E("mtr_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "Dockerfile for MTR training on nvidia/cuda base image", [
      C("FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04", "torch_cuda_api", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "CUDA base image has no CANN toolkit / driver user-space libs for the NPU"),
      C('ENV TORCH_CUDA_ARCH_LIST="7.0;8.0;8.6+PTX"', "env_var", "removal", False, None,
        "CUDA arch list is ignored without nvcc"),
      C("ENV FORCE_CUDA=1", "env_var", "removal", False, None,
        "only forces the CUDA build path of extensions"),
      C("ENV CUDA_HOME=/usr/local/cuda", "env_var", "replace", False,
        "ENV ASCEND_TOOLKIT_HOME=/usr/local/Ascend/ascend-toolkit/latest",
        "CUDA_HOME is meaningless on the Ascend image (CANN images already export the toolkit env)"),
      C("ENV NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None,
        "NCCL tuning knob; HCCL ignores it (silent no-op)"),
      C("ENV NCCL_DEBUG=WARN", "env_var", "replace", False,
        "ENV ASCEND_GLOBAL_LOG_LEVEL=2",
        "NCCL log level has no effect on HCCL; CANN logging is set via ASCEND_GLOBAL_LOG_LEVEL"),
  ])

# ----------------------------------------------------------------------------------------------------------------
# QCNet / HiVT (PyTorch Geometric + Lightning)
# ----------------------------------------------------------------------------------------------------------------

E("qcnet_train", "train_qcnet.py", "explicit_replacement",
  "QCNet train_qcnet.py (Lightning Trainer + DDPStrategy)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "entry script: load the Ascend backend (and register the custom Lightning NPU accelerator after it)"),
      C("parser.add_argument('--accelerator', type=str, default='auto')", "device_type", "replace", True,
        "parser.add_argument('--accelerator', type=str, default='npu')",
        "Lightning 'auto' does not know Ascend NPUs and silently trains on CPU; Lightning has no built-in NPU "
        "accelerator (PR #19308 closed), so 'npu' must be registered by the port"),
      C("strategy=DDPStrategy(find_unused_parameters=False, gradient_as_bucket_view=True),", "dist_backend",
        "replace", True,
        "strategy=DDPStrategy(find_unused_parameters=False, gradient_as_bucket_view=True, process_group_backend='hccl'),",
        "Lightning picks nccl only for cuda devices and gloo otherwise; gloo has no npu backend "
        "('No backend type associated with device type npu')"),
  ])

E("qcnet_predictor", "predictors/qcnet.py", "explicit_replacement",
  "QCNet predictors/qcnet.py LightningModule (plus a peak-memory logging hook)", [
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if torch.npu.is_available():",
        "memory logging hook only; skipped silently on NPU"),
      C("peak_gb = torch.cuda.max_memory_reserved(self.device) / 1024 ** 3", "torch_cuda_api", "replace", False,
        "peak_gb = torch.npu.max_memory_reserved(self.device) / 1024 ** 3",
        "log-only"),
      C("torch.cuda.reset_peak_memory_stats(self.device)", "torch_cuda_api", "replace", False,
        "torch.npu.reset_peak_memory_stats(self.device)",
        "log-only"),
  ])

E("qcnet_map_encoder", "modules/qcnet_map_encoder.py", "explicit_replacement",
  "QCNet modules/qcnet_map_encoder.py (torch_cluster.radius_graph over map polygons)", [
      C("from torch_cluster import radius_graph", "unsupported_op_workaround", "replace", False,
        "from utils.graph_ops import radius_graph  # cdist-based, runs on NPU",
        "import itself works with a CPU build of torch_cluster; changes together with the call site"),
      C("edge_index_pl2pl_radius = radius_graph(x=pos_pl[:, :2], r=self.pl2pl_radius,", "unsupported_op_workaround",
        "replace", True,
        "edge_index_pl2pl_radius = radius_graph(x=pos_pl[:, :2], r=self.pl2pl_radius,  # torch-only impl",
        "torch_cluster ships only CPU/CUDA kernels; called with NPU tensors it fails (CPU kernel asserts CPU "
        "input). Needs a torch-op implementation or a CPU round trip"),
  ])

E("qcnet_agent_encoder", "modules/qcnet_agent_encoder.py", "explicit_replacement",
  "QCNet modules/qcnet_agent_encoder.py (torch_cluster radius / radius_graph per time step)", [
      C("=from torch_cluster import radius", "unsupported_op_workaround", "replace", False,
        "from utils.graph_ops import radius",
        "changes together with the call site"),
      C("from torch_cluster import radius_graph", "unsupported_op_workaround", "replace", False,
        "from utils.graph_ops import radius_graph",
        "changes together with the call site"),
      C("edge_index_pl2a = radius(x=pos_s[:, :2], y=pos_pl[:, :2], r=self.pl2a_radius, batch_x=batch_s, batch_y=batch_pl,",
        "unsupported_op_workaround", "replace", True,
        "edge_index_pl2a = radius(x=pos_s[:, :2], y=pos_pl[:, :2], r=self.pl2a_radius, batch_x=batch_s, batch_y=batch_pl,  # torch-only impl",
        "torch_cluster radius has no NPU kernel"),
      C("edge_index_a2a = radius_graph(x=pos_s[:, :2], r=self.a2a_radius, batch=batch_s, loop=False,",
        "unsupported_op_workaround", "replace", True,
        "edge_index_a2a = radius_graph(x=pos_s[:, :2], r=self.a2a_radius, batch=batch_s, loop=False,  # torch-only impl",
        "torch_cluster radius_graph has no NPU kernel"),
  ])

E("hivt_datamodule", "datamodules/argoverse_v1_datamodule.py", "explicit_replacement",
  "HiVT datamodules/argoverse_v1_datamodule.py (LightningDataModule, pinned PyG loaders)", [
      C("num_workers=self.num_workers, pin_memory=self.pin_memory,", "pin_memory", "replace", False,
        "num_workers=self.num_workers, pin_memory=self.pin_memory, pin_memory_device='npu',",
        "performance only; pinning targets CUDA unless the device is named (unconfirmed)"),
      C("pin_memory=self.pin_memory, persistent_workers=self.persistent_workers)", "pin_memory", "replace", False,
        "pin_memory=self.pin_memory, pin_memory_device='npu', persistent_workers=self.persistent_workers)",
        "performance only (unconfirmed)"),
  ])

E("hivt_local_encoder", "models/local_encoder.py", "explicit_replacement",
  "HiVT models/local_encoder.py (PyG MessagePassing encoders; deliberately no labels)", [
  ])

E("qcnet_env", "environment.yml", "explicit_replacement",
  "QCNet-style conda environment.yml (pytorch-cuda, pyg channel, cu118 wheel links)", [
      C("=- nvidia", "torch_cuda_api", "removal", False, None,
        "channel only needed for the CUDA runtime packages"),
      C("=- pytorch=2.0.0", "torch_cuda_api", "replace", True,
        "- pytorch=2.1.0",
        "no torch_npu release pairs with torch 2.0.0 in the supported matrix; torch must equal torch_npu's version"),
      C("=- pytorch-cuda=11.8", "torch_cuda_api", "removal", True, None,
        "selects the CUDA build of pytorch; must go for the CPU/NPU build"),
      C("=- cudatoolkit-dev=11.8", "torch_cuda_api", "removal", True, None,
        "CUDA toolkit package; unavailable / useless on an Ascend host"),
      C("=- pytorch-cluster=1.6.1", "unsupported_op_workaround", "removal", False, None,
        "radius / radius_graph are rewritten with torch ops for NPU, so the CUDA-built cluster package can go"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True,
        "      - torch-npu==2.1.0.post12",
        "the Ascend adapter itself"),
      C("- --find-links https://data.pyg.org/whl/torch-2.0.0+cu118.html", "custom_cuda_extension", "replace", True,
        "      - --find-links https://data.pyg.org/whl/torch-2.1.0+cpu.html",
        "cu118 wheel index for compiled PyG extensions"),
      C("- pyg-lib==0.2.0+pt20cu118", "custom_cuda_extension", "replace", True,
        "      - pyg-lib==0.3.1+pt21cpu",
        "CUDA-compiled pyg-lib wheel needs libcudart; use the CPU build"),
  ])

# ----------------------------------------------------------------------------------------------------------------
# Wayformer / MotionLM re-implementations
# ----------------------------------------------------------------------------------------------------------------

E("wayformer_model", "wayformer/models/wayformer.py", "device_branch_or_abstraction",
  "Wayformer re-implementation (latent-query encoder, flash-attn fast path, SDPA fallback)", [
      C("from flash_attn import flash_attn_func", "attention_kernel", "replace", False,
        "from torch_npu import npu_fusion_attention",
        "flash-attn cannot be installed on NPU; the guarded import falls back to SDPA (which has an NPU FA "
        "kernel), so this is a performance port"),
      C("return self.use_flash_attn and mask is None and q.is_cuda and q.dtype in (torch.float16, torch.bfloat16)",
        "attention_kernel", "replace", False,
        "return self.use_flash_attn and mask is None and q.is_npu and q.dtype in (torch.float16, torch.bfloat16)",
        "gate of the fused-attention branch; False on NPU -> SDPA path (correct, slower)"),
      C("out = flash_attn_func(q, k, v, dropout_p=dropout_p, softmax_scale=self.scale, causal=False)",
        "attention_kernel", "add_branch", False,
        "out = npu_fusion_attention(q, k, v, self.num_heads, 'BSND', keep_prob=1.0 - dropout_p, scale=self.scale)[0]",
        "NPU fused attention for the (B, S, N, D) layout"),
      C("with torch.backends.cuda.sdp_kernel(enable_flash=False, enable_math=True, enable_mem_efficient=True):",
        "attention_kernel", "removal", False, None,
        "CUDA SDPA backend selector: listed unsupported by msFmkTransplt / Ascend's 2.7.1 list; has no effect on "
        "the NPU SDPA kernel"),
      C("self.mode_mixer = nn.TransformerEncoderLayer(cfg.d_model, cfg.num_heads, cfg.d_model * 2,",
        "unsupported_op_workaround", "replace", False,
        "self.mode_mixer = TransformerBlock(cfg.d_model, cfg.num_heads, 2, cfg.dropout, cfg.use_flash_attn, cross=False)",
        "Ascend's 2.7.1 support list marks nn.TransformerEncoderLayer as unsupported (likely its fused eval fast "
        "path); training path decomposes into supported ops - unconfirmed"),
  ])

E("wayformer_train", "wayformer/train.py", "explicit_replacement",
  "Wayformer torchrun DDP training script (bf16 autocast, GradScaler, apex FusedAdam, torch.compile)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "entry script"),
      C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", False,
        "from torch_npu.optim import NpuFusedAdamW",
        "guarded import: without apex the script silently uses torch AdamW (performance only)"),
      C("return FusedAdam(groups, lr=cfg[\"lr\"], betas=(0.9, 0.999), adam_w_mode=True)", "fused_optimizer",
        "replace", False,
        "return NpuFusedAdamW(groups, lr=cfg[\"lr\"], betas=(0.9, 0.999))",
        "apex CUDA FusedAdam kernels are not available on NPU; NPU fused optimizer is the perf equivalent"),
      C("os.environ.setdefault(\"NCCL_ASYNC_ERROR_HANDLING\", \"1\")", "env_var", "replace", False,
        "os.environ.setdefault(\"HCCL_ASYNC_ERROR_HANDLING\", \"1\")",
        "NCCL variable is ignored by HCCL (HCCL_ASYNC_ERROR_HANDLING defaults to 1 anyway)"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(local_rank)",
        "device binding must target the NPU"),
      C("dist.init_process_group(backend=\"nccl\", init_method=\"env://\")", "dist_backend", "replace", True,
        "dist.init_process_group(backend=\"hccl\", init_method=\"env://\")",
        "NCCL -> HCCL"),
      C("device = torch.device(\"cuda\", local_rank)", "device_type", "replace", True,
        "device = torch.device(\"npu\", local_rank)",
        "CUDA device object"),
      C("device = torch.device(\"cuda:0\" if torch.cuda.is_available() else \"cpu\")", "device_type", "replace", True,
        "device = torch.device(\"npu:0\" if torch.npu.is_available() else \"cpu\")",
        "silently falls back to CPU on an NPU host"),
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed(seed)",
        "lazy no-op without CUDA; torch.manual_seed above already seeds the NPU generator (unconfirmed)"),
      C("major, _ = torch.cuda.get_device_capability()", "device_capability_check", "replace", True,
        "if not torch.npu.is_bf16_supported():",
        "compute capability is a CUDA concept; torch.cuda raises without CUDA and the NPU version returns None "
        "(unpacking fails)"),
      C("ctx = torch.autocast(device_type=\"cuda\", dtype=amp_dtype) if amp_dtype else nullcontext()", "amp",
        "replace", True,
        "ctx = torch.autocast(device_type=\"npu\", dtype=amp_dtype) if amp_dtype else nullcontext()",
        "cuda autocast is disabled with a warning on an NPU host -> eval silently runs fp32"),
      C("model = Wayformer(model_cfg).cuda()", "tensor_to_device", "replace", True,
        "model = Wayformer(model_cfg).to(device)",
        ".cuda() fails on NPU"),
      C("model = torch.compile(model, mode=\"max-autotune\")", "compile_mode", "replace", False,
        "model = torch.compile(model, backend=\"npugraphs\")",
        "max-autotune relies on Triton GPU autotuning; NPU graph mode uses its own backends (optional flag, "
        "unconfirmed whether inductor max-autotune works on the installed torch_npu)"),
      C("pin_memory=True, drop_last=True, collate_fn=womd_collate, persistent_workers=True)", "pin_memory",
        "replace", False,
        "pin_memory=True, pin_memory_device=\"npu\", drop_last=True, collate_fn=womd_collate, persistent_workers=True)",
        "performance only (unconfirmed)"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=(amp_dtype == torch.float16))", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler(enabled=(amp_dtype == torch.float16))",
        "torch.cuda.amp.GradScaler disables itself without CUDA -> fp16 runs without loss scaling"),
      C("ckpt = torch.load(args.resume, map_location=f\"cuda:{local_rank}\")", "tensor_to_device", "replace", True,
        "ckpt = torch.load(args.resume, map_location=f\"npu:{local_rank}\")",
        "deserialising onto a CUDA device fails without CUDA"),
      C("with torch.autocast(device_type=\"cuda\", dtype=amp_dtype, enabled=amp_dtype is not None):", "amp",
        "replace", True,
        "with torch.autocast(device_type=\"npu\", dtype=amp_dtype, enabled=amp_dtype is not None):",
        "cuda autocast silently disabled on NPU -> training runs fp32 instead of bf16"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()",
        "raises without CUDA"),
      C("mem_gb = torch.cuda.max_memory_allocated(device) / 1e9", "torch_cuda_api", "replace", False,
        "mem_gb = torch.npu.max_memory_allocated(device) / 1e9",
        "log-only (0 on NPU)"),
  ])

E("wayformer_triton_ln", "wayformer/ops/fused_layernorm.py", "kernel_rewrite",
  "Triton fused LayerNorm (+residual) used by the Wayformer latent encoder", [
      C("if not HAS_TRITON or not x.is_cuda:", "device_type", "replace", False,
        "if not HAS_TRITON or not x.is_npu:",
        "on NPU the gate is False and nn.LayerNorm runs (correct); enabling the kernel needs triton-ascend"),
      C("major, _ = torch.cuda.get_device_capability(x.device)", "device_capability_check", "removal", False, None,
        "reached only once the Triton path is enabled on NPU; NPU capability is None (unpacking fails) - drop "
        "the check"),
      C("@triton.autotune(", "triton_kernel_tuning", "replace", False,
        "@triton.autotune(  # triton-ascend: tune BLOCK sizes / multibuffer, num_warps is a GPU notion",
        "num_warps configs are GPU warp tuning; Ascend Triton schedules on AI cores"),
      C("mean = torch.empty(M, dtype=torch.float32, device=\"cuda\")", "device_type", "replace", False,
        "mean = torch.empty(M, dtype=torch.float32, device=x2d.device)",
        "hard-coded CUDA device inside the optional Triton path"),
      C("rstd = torch.empty(M, dtype=torch.float32, device=\"cuda\")", "device_type", "replace", False,
        "rstd = torch.empty(M, dtype=torch.float32, device=x2d.device)",
        "hard-coded CUDA device inside the optional Triton path"),
      C("num_warps=min(max(ctx.BLOCK_N // 256, 1), 16),", "triton_kernel_tuning", "removal", False, None,
        "warp-count launch tuning has no Ascend meaning"),
  ])

E("wayformer_config", "configs/wayformer_waymo.yaml", "explicit_replacement",
  "Wayformer YAML experiment config (runtime device/backend, NCCL knobs, inference map_location)", [
      C("device: cuda", "device_type", "replace", True,
        "device: npu",
        "device string consumed by the runtime"),
      C("dist_backend: nccl", "dist_backend", "replace", True,
        "dist_backend: hccl",
        "NCCL -> HCCL"),
      C("NCCL_IB_DISABLE: 0", "env_var", "removal", False, None,
        "NCCL-only knob exported by the launcher; no effect on HCCL"),
      C("NCCL_SOCKET_IFNAME: ib0", "env_var", "replace", False,
        "HCCL_SOCKET_IFNAME: ib0",
        "HCCL picks its host NIC from HCCL_SOCKET_IFNAME/HCCL_IF_IP; without it the default order may or may "
        "not be right"),
      C("map_location: cuda:0", "tensor_to_device", "replace", True,
        "map_location: npu:0",
        "checkpoint map_location on a CUDA device fails on NPU"),
  ])

E("motionlm_model", "motionlm/model.py", "explicit_replacement",
  "MotionLM re-implementation (causal joint-token decoder, KV cache, NVTX ranges)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "module references torch_npu.npu.mstx after the port"),
      C("torch.cuda.nvtx.range_push(\"motionlm_decoder\")", "torch_cuda_api", "replace", True,
        "rng = torch_npu.npu.mstx.range_start(\"motionlm_decoder\")",
        "torch.cuda.nvtx is not redirected by torch_npu and raises without a CUDA build; mstx is the NPU "
        "equivalent"),
      C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True,
        "torch_npu.npu.mstx.range_end(rng)",
        "NVTX call fails on NPU"),
      C("with torch.cuda.nvtx.range(f\"decode_step_{t}\"):", "torch_cuda_api", "replace", True,
        "with npu_mstx_range(f\"decode_step_{t}\"):  # helper wrapping torch_npu.npu.mstx.range_start/range_end",
        "NVTX range context fails on NPU; mstx has range_start/range_end but no documented context manager"),
  ])

E("motionlm_rollout", "motionlm/rollout.py", "device_branch_or_abstraction",
  "MotionLM rollout / submission script (device helper, CUDA-event timing, NVML utilisation)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "entry script"),
      C("=import pynvml", "torch_cuda_api", "removal", False, None,
        "NVML has no NPU counterpart; guarded, so it silently reports n/a (torch.npu.utilization() can replace it)"),
      C("return torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")", "device_type", "add_branch", True,
        "return torch.device(\"npu\" if torch.npu.is_available() else (\"cuda\" if torch.cuda.is_available() else \"cpu\"))",
        "'auto' silently selects CPU on an NPU host"),
      C("log.info(f\"running on {device} ({torch.cuda.get_device_name(device) if device.type == 'cuda' else 'cpu'})\")",
        "torch_cuda_api", "replace", False,
        "log.info(f\"running on {device} ({torch.npu.get_device_name(device) if device.type == 'npu' else 'cpu'})\")",
        "log-only"),
      C("collate_fn=collate_scenes, pin_memory=device.type == \"cuda\")", "pin_memory", "replace", False,
        "collate_fn=collate_scenes, pin_memory=device.type != \"cpu\", pin_memory_device=device.type)",
        "pinning silently disabled for npu devices (performance only)"),
      C("gen = torch.Generator(device=\"cuda\")", "device_type", "replace", True,
        "gen = torch.Generator(device=device)",
        "CUDA generator cannot be created on NPU, and multinomial needs a generator on the sampling device"),
      C("start_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "start_evt = torch.npu.Event(enable_timing=True)",
        "CUDA event class is a dummy without CUDA and raises on construction"),
      C("end_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "end_evt = torch.npu.Event(enable_timing=True)",
        "CUDA event class raises without CUDA"),
      C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize(device)",
        "raises without CUDA / with an npu device argument"),
      C("f\"gpu util {gpu_util()}, peak mem {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB\")", "torch_cuda_api",
        "replace", False,
        "f\"npu util {gpu_util()}, peak mem {torch.npu.max_memory_allocated() / 2**30:.2f} GiB\")",
        "log-only"),
  ])

E("motion_pyproject", "pyproject.toml", "explicit_replacement",
  "pyproject.toml for the Wayformer/MotionLM package (cuda extras, uv cu121 index)", [
      C("\"torch==2.3.1\",", "import_torch_npu", "npu_only_addition", True,
        "    \"torch-npu==2.3.1.post6\",",
        "the Ascend adapter; torch 2.3.1 has a matching torch_npu release"),
      C("\"flash-attn>=2.5.8\",", "attention_kernel", "removal", False, None,
        "flash-attn cannot be built on NPU; only in the optional 'cuda' extra"),
      C("\"triton==2.3.1\",", "triton_kernel_tuning", "replace", False,
        "    \"triton-ascend==3.2.0\",",
        "optional extra; Triton kernels need triton-ascend on NPU"),
      C("\"nvidia-ml-py>=12.535\",", "torch_cuda_api", "removal", False, None,
        "NVML binding, optional extra"),
      C("\"apex @ git+https://github.com/NVIDIA/apex.git@23.08\",", "fused_optimizer", "replace", False,
        "    \"apex @ git+https://gitee.com/ascend/apex.git\",",
        "optional extra; NVIDIA apex CUDA kernels don't build on NPU (Ascend apex patch or torch_npu.optim)"),
      C("url = \"https://download.pytorch.org/whl/cu121\"", "torch_cuda_api", "replace", True,
        "url = \"https://download.pytorch.org/whl/cpu\"",
        "torch is pinned explicitly to the CUDA wheel index; torch_npu needs the CPU build"),
  ])

# ----------------------------------------------------------------------------------------------------------------
# nuPlan planning baselines (Hydra + Lightning)
# ----------------------------------------------------------------------------------------------------------------

E("nuplan_lightning_yaml", "nuplan/planning/script/config/training/lightning/default_lightning.yaml",
  "explicit_replacement",
  "nuPlan Hydra config training/lightning/default_lightning.yaml", [
      C("accelerator: gpu  # distribution method", "device_type", "replace", True,
        "accelerator: npu  # custom Lightning NPU accelerator",
        "GPUAccelerator requires CUDA"),
      C("gpus: -1  # number of GPUs to utilize (-1 means all available GPUs)", "device_type", "replace", True,
        "devices: -1  # number of NPUs to utilize (-1 means all available)",
        "Lightning's gpus argument means CUDA devices; with none present it raises"),
      C("strategy: ddp  # overridden to ddp_find_unused_parameters_false in run_training.sh", "dist_backend",
        "replace", True,
        "strategy: ddp_hccl  # DDPStrategy(process_group_backend='hccl') registered by the port",
        "Lightning's DDP defaults to gloo for non-cuda devices, which cannot handle npu tensors"),
      C("precision: 16  # floating point precision (16 = native amp on GPU)", "amp", "replace", False,
        "precision: 16  # needs an NPU-aware mixed-precision plugin",
        "Lightning's native AMP plugin keys autocast on the accelerator type; behaviour with a custom NPU "
        "accelerator unconfirmed"),
  ])

E("nuplan_utils_config", "nuplan/planning/script/builders/utils/utils_config.py", "explicit_replacement",
  "nuPlan script/builders/utils/utils_config.py (update_config_for_training, get_num_gpus_used)", [
      C("if cfg.gpu and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if cfg.gpu and torch.npu.is_available():",
        "False on an NPU host -> silently rewrites the trainer config to CPU fp32"),
      C("cfg.lightning.trainer.params.gpus = -1", "device_type", "replace", True,
        "cfg.lightning.trainer.params.devices = -1",
        "gpus=-1 requests CUDA devices"),
      C("trainer_num_gpus = cfg.lightning.trainer.params.gpus", "device_type", "replace", False,
        "trainer_num_gpus = cfg.lightning.trainer.params.devices",
        "follows the gpus -> devices rename in the Lightning config"),
      C("cuda_num_gpus = torch.cuda.device_count() * int(os.getenv('NUM_NODES', 1))", "torch_cuda_api", "replace",
        True,
        "cuda_num_gpus = torch.npu.device_count() * int(os.getenv('NUM_NODES', 1))",
        "0 on an NPU host -> ZeroDivisionError when scaling steps_per_epoch"),
  ])

E("nuplan_model_loader", "nuplan/planning/simulation/planner/ml_planner/model_loader.py", "explicit_replacement",
  "nuPlan ml_planner/model_loader.py (closed-loop simulation inference)", [
      C("self.device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')", "device_type",
        "replace", True,
        "self.device = torch.device('npu') if torch.npu.is_available() else torch.device('cpu')",
        "silently runs the planner on CPU on an NPU host"),
      C("self._model = torch.jit.load(path, map_location='cuda' if torch.cuda.is_available() else 'cpu')",
        "tensor_to_device", "replace", True,
        "self._model = torch.jit.load(path, map_location=self.device)",
        "loads the TorchScript model to CPU while features go to the NPU -> device mismatch"),
  ])

E("nuplan_train_sh", "scripts/train_urban_driver.sh", "explicit_replacement",
  "nuPlan run_training.py launcher script with Hydra overrides", [
      C("=set -euo pipefail", "import_torch_npu", "npu_only_addition", True,
        SET_ENV,
        "CANN environment must be sourced before python starts"),
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
        "ignored on NPU: the job would grab all NPUs including the ones reserved for simulation"),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False,
        "export ASCEND_GLOBAL_LOG_LEVEL=2",
        "NCCL log level has no effect on HCCL"),
      C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None,
        "NCCL-only workaround; no HCCL equivalent needed"),
      C("export NCCL_SOCKET_IFNAME=eno1", "env_var", "replace", False,
        "export HCCL_SOCKET_IFNAME=eno1",
        "NIC selection for HCCL; default order may or may not pick eno1"),
      C("lightning.trainer.params.accelerator=gpu \\", "device_type", "replace", True,
        "lightning.trainer.params.accelerator=npu \\",
        "GPUAccelerator requires CUDA"),
      C("lightning.trainer.params.gpus=4 \\", "device_type", "replace", True,
        "lightning.trainer.params.devices=4 \\",
        "gpus means CUDA devices"),
      C("lightning.trainer.params.strategy=ddp_find_unused_parameters_false \\", "dist_backend", "replace", True,
        "lightning.trainer.params.strategy=ddp_hccl_find_unused_parameters_false \\",
        "Lightning DDP would pick gloo for npu devices"),
  ])
