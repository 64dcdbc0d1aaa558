# Labels for probe487 (WiFi CSI and mmWave radar human sensing). See README.md for the policy.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu"

# ----------------------------------------------------------------------------- SenseFi
E("sensefi_run", "run.py", "explicit_replacement",
  "xyanchen/WiFi-CSI-Sensing-Benchmark run.py (SenseFi train/test entry)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "Entry script; requirements pin torch 1.11, which predates torch_npu device-backend autoload (2.5.1+)."),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "Unchanged, torch.cuda.is_available() is False on an Ascend host and the whole benchmark silently trains on CPU."),
])
E("sensefi_util", "util.py", "explicit_replacement",
  "xyanchen/WiFi-CSI-Sensing-Benchmark util.py (dataset/model factory)", [])
E("sensefi_ut_har_model", "UT_HAR_model.py", "explicit_replacement",
  "xyanchen/WiFi-CSI-Sensing-Benchmark UT_HAR_model.py (MLP/LeNet/ResNet/RNN/GRU/LSTM/ViT on UT-HAR)", [])
E("sensefi_ntu_fi_model", "NTU_Fi_model.py", "explicit_replacement",
  "xyanchen/WiFi-CSI-Sensing-Benchmark NTU_Fi_model.py", [])
E("sensefi_widar_model", "widar_model.py", "explicit_replacement",
  "xyanchen/WiFi-CSI-Sensing-Benchmark widar_model.py (Widar3.0 BVP models)", [])
E("sensefi_dataset", "dataset.py", "explicit_replacement",
  "xyanchen/WiFi-CSI-Sensing-Benchmark dataset.py (UT-HAR / NTU-Fi / Widar loaders)", [])
E("sensefi_self_supervised", "self_supervised.py", "explicit_replacement",
  "xyanchen/WiFi-CSI-Sensing-Benchmark self_supervised.py (AutoFi-style SSL on NTU-Fi)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "Standalone entry script on torch 1.11 (no autoload); torch.npu.* below needs torch_npu imported."),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "Without CUDA this is a lazily queued no-op, so NPU generators are not seeded (dropout/randn_like on NPU). "
      "Reproducibility only; whether torch.manual_seed already seeds the NPU generator on this torch version is unconfirmed."),
    C("=x = x.cuda(non_blocking=True)", "tensor_to_device", "replace", True, "x = x.npu(non_blocking=True)",
      "Tensor.cuda() raises without CUDA."),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "torch.cuda.synchronize() initialises CUDA and raises on an NPU-only host."),
    C("x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "x, y = x.npu(non_blocking=True), y.npu(non_blocking=True)", "Tensor.cuda() raises without CUDA."),
    C("x, y = x.cuda(), y.cuda()", "tensor_to_device", "replace", True, "x, y = x.npu(), y.npu()",
      "Tensor.cuda() raises without CUDA."),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "Raises without CUDA; the NPU must be selected so the later .npu() calls land on --gpu."),
    C("print('Use GPU: {} ({})'.format(args.gpu, torch.cuda.get_device_name(args.gpu)))", "torch_cuda_api", "replace", True,
      "print('Use NPU: {} ({})'.format(args.gpu, torch.npu.get_device_name(args.gpu)))",
      "Unguarded get_device_name initialises CUDA and raises, even though it only feeds a log line."),
    C("encoder = CSI_AutoFi_Encoder().cuda()", "tensor_to_device", "replace", True,
      "encoder = CSI_AutoFi_Encoder().npu()", "Module.cuda() raises without CUDA."),
    C("clf = Classifier(encoder.out_dim, num_classes).cuda()", "tensor_to_device", "replace", True,
      "clf = Classifier(encoder.out_dim, num_classes).npu()", "Module.cuda() raises without CUDA."),
    C("print('peak GPU memory: %.1f MB' % (torch.cuda.max_memory_allocated() / 2 ** 20))", "torch_cuda_api", "replace", False,
      "print('peak NPU memory: %.1f MB' % (torch.npu.max_memory_allocated() / 2 ** 20))",
      "Without CUDA initialised the CUDA allocator stats are empty and this prints 0; log line only."),
])
E("sensefi_requirements", "requirements.txt", "explicit_replacement",
  "xyanchen/WiFi-CSI-Sensing-Benchmark requirements (pinned CUDA torch wheels)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "device_type", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu docs install CPU torch on x86 (plain PyPI on aarch64); a +cu113 wheel does not exist for aarch64 "
      "and is not the documented pairing. Whether the CUDA wheel merely wastes space or breaks torch_npu on x86 is unconfirmed."),
    C("torch==1.11.0+cu113", "import_torch_npu", "npu_only_addition", True, "torch-npu==1.11.0.post14",
      "The Ascend adapter must be installed next to torch; 1.11.0.post14 is the last torch_npu wheel for torch 1.11 (CANN 8.0.RC2)."),
])

# ----------------------------------------------------------------------------- Person-in-WiFi 3D (opera / mmdet 2.x)
E("piw3d_train", "tools/train.py", "explicit_replacement",
  "aiotgroup/Person-in-WiFi-3D-repo tools/train.py (mmdet-2.x style trainer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "Entry script on torch 1.11 (Dockerfile); no backend autoload."),
    C("seed = init_random_seed(args.seed, device='cuda')", "device_type", "replace", True,
      "seed = init_random_seed(args.seed, device='npu')",
      "In distributed runs the seed is broadcast as a tensor created on this device; 'cuda' raises on an NPU host "
      "(and HCCL can only broadcast NPU tensors)."),
])
E("piw3d_apis_train", "opera/apis/train.py", "explicit_replacement",
  "aiotgroup/Person-in-WiFi-3D-repo opera/apis/train.py (copy of mmdet.apis.train)", [
    C("from mmcv.parallel import MMDataParallel, MMDistributedDataParallel", "distributed_framework", "npu_only_addition", True,
      "from mmcv.device.npu import NPUDataParallel, NPUDistributedDataParallel",
      "Needed by the two wrapper replacements below. The mmcv>=1.7 module path is from memory, not in /work/shared/knowledge."),
    C("def init_random_seed(seed=None, device='cuda'):", "device_type", "replace", False,
      "def init_random_seed(seed=None, device='npu'):",
      "Default only; the single caller (tools/train.py) passes device= explicitly, so with it ported this is hygiene."),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "Lazy no-op without CUDA; NPU generators possibly unseeded. Reproducibility only, unconfirmed whether torch.manual_seed covers NPU here."),
    C("model = MMDistributedDataParallel(", "distributed_framework", "replace", True, "model = NPUDistributedDataParallel(",
      "mmcv's MMDistributedDataParallel scatters inputs with CUDA streams / torch.cuda.comm.scatter (marked unsupported in Ascend's "
      "2.7.1 API list); the NPU subclass scatters to NPU. Wrapper name from mmcv>=1.7, not in the knowledge base."),
    C("=model.cuda(),", "tensor_to_device", "replace", True, "model.npu(),", "Module.cuda() raises without CUDA."),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
      "device_ids=[torch.npu.current_device()],", "torch.cuda.current_device() raises without CUDA."),
    C("model = MMDataParallel(", "distributed_framework", "replace", True, "model = NPUDataParallel(",
      "On a host without CUDA DataParallel empties device_ids and MMDataParallel scatters inputs to CPU while the module sits on "
      "the NPU. NPU wrapper from mmcv>=1.7 (unconfirmed in knowledge)."),
    C("model.cuda(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "tensor_to_device", "replace", True,
      "model.npu(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "Module.cuda(i) raises without CUDA."),
])
E("piw3d_test", "tools/test.py", "explicit_replacement",
  "aiotgroup/Person-in-WiFi-3D-repo tools/test.py (mmdet-2.x style tester)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "Entry script on torch 1.11; no autoload."),
    C("from mmcv.parallel import MMDataParallel, MMDistributedDataParallel", "distributed_framework", "npu_only_addition", True,
      "from mmcv.device.npu import NPUDataParallel, NPUDistributedDataParallel",
      "Needed by the two wrapper replacements below (mmcv>=1.7 path from memory)."),
    C("model = MMDataParallel(model, device_ids=cfg.gpu_ids)", "distributed_framework", "replace", True,
      "model = NPUDataParallel(model.npu(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)",
      "Left alone, DataParallel sees no CUDA, drops device_ids and MMDataParallel runs the whole test on CPU without any error."),
    C("model = MMDistributedDataParallel(", "distributed_framework", "replace", True, "model = NPUDistributedDataParallel(",
      "Same CUDA-stream scatter problem as in opera/apis/train.py."),
    C("=model.cuda(),", "tensor_to_device", "replace", True, "model.npu(),", "Module.cuda() raises without CUDA."),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
      "device_ids=[torch.npu.current_device()],", "torch.cuda.current_device() raises without CUDA."),
])
E("piw3d_dist_train", "tools/dist_train.sh", "explicit_replacement",
  "aiotgroup/Person-in-WiFi-3D-repo tools/dist_train.sh (torch.distributed.launch launcher)", [
    C("CONFIG=$1", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment (library paths for libascendcl / HCCL) must be loaded before python starts, unless the image does it."),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}",
      "This is the user's knob for picking cards; CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime, so any override silently "
      "lands the job on NPUs 0..GPUS-1."),
    C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None,
      "NCCL-only tuning knob, inert under HCCL; removing it is cleanup."),
])
E("piw3d_config", "configs/wifi/petr_wifi.py", "explicit_replacement",
  "aiotgroup/Person-in-WiFi-3D-repo configs (PETR-style WiFi pose config)", [
    C("dist_params = dict(backend='nccl')", "dist_backend", "replace", True, "dist_params = dict(backend='hccl')",
      "Passed to init_dist -> init_process_group; NCCL does not exist on Ascend."),
])
E("piw3d_dataset", "opera/datasets/wifi_pose.py", "explicit_replacement",
  "aiotgroup/Person-in-WiFi-3D-repo opera/datasets (WiFi CSI pose dataset + MPJPE/PCK eval)", [])
E("piw3d_transformer", "opera/models/utils/transformer.py", "explicit_replacement",
  "hikvision-research/opera opera/models/utils/transformer.py (PETR deformable pose attention)", [])
E("piw3d_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "aiotgroup/Person-in-WiFi-3D-repo / open-mmlab docker/Dockerfile", [
    C('ENV TORCH_CUDA_ARCH_LIST="6.0 6.1 7.0 7.5 8.0 8.6+PTX"', "env_var", "removal", False, None,
      "nvcc arch list; inert once nothing is compiled for CUDA."),
    C('ENV TORCH_NVCC_FLAGS="-Xfatbin -compress-all"', "env_var", "removal", False, None, "nvcc-only flags; inert."),
    C("RUN pip install --no-cache-dir --upgrade pip wheel setuptools", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install --no-cache-dir torch-npu==1.11.0.post14",
      "The image needs the Ascend adapter matching torch 1.11 (CANN 8.0.RC2 per the compatibility table)."),
    C("RUN pip install --no-cache-dir mmcv-full==1.6.0 -f https://download.openmmlab.com/mmcv/dist/cu113/torch1.11.0/index.html",
      "custom_cuda_extension", "replace", True,
      "RUN MMCV_WITH_OPS=1 FORCE_NPU=1 pip install --no-cache-dir mmcv-full==1.7.2",
      "The cu113 prebuilt mmcv-full wheel carries CUDA kernels (mmcv._ext) linked against libcudart; it cannot serve an NPU image "
      "and the NPU wrappers used in opera/apis need mmcv>=1.7. The FORCE_NPU build flag is from memory (unconfirmed)."),
    C('ENV FORCE_CUDA="1"', "env_var", "removal", False, None,
      "Only matters if setup.py builds CUDA ops; opera's own setup.py builds none here, so inert (unconfirmed)."),
])

# ----------------------------------------------------------------------------- mmMesh (mmWave -> SMPL mesh, PointNet++ CUDA ops)
E("mmmesh_train", "train.py", "explicit_replacement",
  "HavocFiXer/mmMesh train script (mmWave point clouds -> SMPL, MobiSys'21)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "Entry script; the pointnet2 extension targets torch 1.x-era builds with no autoload."),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = '0'", "env_var", "replace", False,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = '0'",
      "Hard-codes card 0, which is also what the code uses by default; only matters on a shared host."),
    C("device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu:0' if torch.npu.is_available() else 'cpu')",
      "Module-level device global; unchanged it silently selects CPU (and then the .cuda() calls elsewhere crash)."),
    C("return {k: v.cuda(non_blocking=True) for k, v in batch.items()}", "tensor_to_device", "replace", True,
      "return {k: v.npu(non_blocking=True) for k, v in batch.items()}", "Tensor.cuda() raises without CUDA."),
    C("print('device:', device, torch.cuda.get_device_name(0) if torch.cuda.is_available() else '')", "torch_cuda_api", "replace", False,
      "print('device:', device, torch.npu.get_device_name(0) if torch.npu.is_available() else '')",
      "Guarded by is_available(), so it just prints an empty name; cosmetic."),
    C("ckpt = torch.load(args.resume, map_location='cuda:0')", "tensor_to_device", "replace", True,
      "ckpt = torch.load(args.resume, map_location='npu:0')", "map_location='cuda:0' raises when CUDA is unavailable."),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start = torch.npu.Event(enable_timing=True)", "CUDA events cannot be recorded without CUDA (record() initialises CUDA)."),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)", "Same as the start event."),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "Raises without CUDA."),
    C("epoch, start.elapsed_time(end) / 1000.0, torch.cuda.max_memory_allocated() / 1024 ** 2))", "torch_cuda_api", "replace", False,
      "epoch, start.elapsed_time(end) / 1000.0, torch.npu.max_memory_allocated() / 1024 ** 2))",
      "CUDA allocator stats are empty without CUDA, prints 0 MB; log only."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "No-op without CUDA; releasing the NPU cache is a memory-headroom nicety."),
])
E("mmmesh_network", "network.py", "explicit_replacement",
  "HavocFiXer/mmMesh network.py (anchor PointNet + LSTM + SMPL head)", [
    C("h = torch.zeros(layers, batch_size, hidden).cuda()", "tensor_to_device", "replace", True,
      "h = torch.zeros(layers, batch_size, hidden).npu()", "Tensor.cuda() raises without CUDA."),
    C("c = torch.zeros(layers, batch_size, hidden).cuda()", "tensor_to_device", "replace", True,
      "c = torch.zeros(layers, batch_size, hidden).npu()", "Tensor.cuda() raises without CUDA."),
])
E("mmmesh_smpl", "smpl_utils.py", "explicit_replacement",
  "HavocFiXer/mmMesh SMPL layer (smpl_utils_extend.py)", [])
E("mmmesh_pn2_utils", "pointnet2/pointnet2_utils.py", "kernel_rewrite",
  "sshaoshuai/Pointnet2.PyTorch pointnet2_utils.py as vendored by mmMesh / P4Transformer", [
    C("import pointnet2_cuda as pointnet2", "custom_cuda_extension", "replace", True, "import pointnet2_npu as pointnet2",
      "The CUDA extension cannot be built or loaded on Ascend; the FPS / gather / ball-query / three-NN kernels are re-written "
      "(Ascend C behind NpuExtension) keeping the same *_wrapper entry points."),
    C("output = torch.cuda.IntTensor(B, npoint)", "tensor_to_device", "replace", True,
      "output = torch.empty(B, npoint, dtype=torch.int32, device=xyz.device)",
      "Legacy torch.cuda.IntTensor constructor raises without CUDA."),
    C("temp = torch.cuda.FloatTensor(B, N).fill_(1e10)", "tensor_to_device", "replace", True,
      "temp = torch.full((B, N), 1e10, dtype=torch.float32, device=xyz.device)", "torch.cuda.FloatTensor raises without CUDA."),
    C("output = torch.cuda.FloatTensor(B, C, npoint)", "tensor_to_device", "replace", True,
      "output = torch.empty(B, C, npoint, dtype=features.dtype, device=features.device)", "torch.cuda.FloatTensor raises without CUDA."),
    C("=grad_features = Variable(torch.cuda.FloatTensor(B, C, N).zero_())", "tensor_to_device", "replace", True,
      "grad_features = Variable(torch.zeros(B, C, N, dtype=grad_out.dtype, device=grad_out.device))",
      "Gather backward buffer; torch.cuda.FloatTensor raises without CUDA."),
    C("dist2 = torch.cuda.FloatTensor(B, N, 3)", "tensor_to_device", "replace", True,
      "dist2 = torch.empty(B, N, 3, dtype=torch.float32, device=unknown.device)", "torch.cuda.FloatTensor raises without CUDA."),
    C("idx = torch.cuda.IntTensor(B, N, 3)", "tensor_to_device", "replace", True,
      "idx = torch.empty(B, N, 3, dtype=torch.int32, device=unknown.device)", "torch.cuda.IntTensor raises without CUDA."),
    C("output = torch.cuda.FloatTensor(B, c, n)", "tensor_to_device", "replace", True,
      "output = torch.empty(B, c, n, dtype=features.dtype, device=features.device)", "torch.cuda.FloatTensor raises without CUDA."),
    C("grad_features = Variable(torch.cuda.FloatTensor(B, c, m).zero_())", "tensor_to_device", "replace", True,
      "grad_features = Variable(torch.zeros(B, c, m, dtype=grad_out.dtype, device=grad_out.device))",
      "torch.cuda.FloatTensor raises without CUDA."),
    C("output = torch.cuda.FloatTensor(B, C, nfeatures, nsample)", "tensor_to_device", "replace", True,
      "output = torch.empty(B, C, nfeatures, nsample, dtype=features.dtype, device=features.device)",
      "torch.cuda.FloatTensor raises without CUDA."),
    C("grad_features = Variable(torch.cuda.FloatTensor(B, C, N).zero_())  # (B, C, N)", "tensor_to_device", "replace", True,
      "grad_features = Variable(torch.zeros(B, C, N, dtype=grad_out.dtype, device=grad_out.device))  # (B, C, N)",
      "Grouping backward buffer; torch.cuda.FloatTensor raises without CUDA."),
    C("idx = torch.cuda.IntTensor(B, npoint, nsample).zero_()", "tensor_to_device", "replace", True,
      "idx = torch.zeros(B, npoint, nsample, dtype=torch.int32, device=xyz.device)", "torch.cuda.IntTensor raises without CUDA."),
])
E("mmmesh_pn2_setup", "pointnet2/setup.py", "kernel_rewrite",
  "sshaoshuai/Pointnet2.PyTorch setup.py (CUDAExtension build of pointnet2_cuda)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", True,
      "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
      "CUDAExtension needs nvcc/CUDA_HOME; torch_npu.utils.cpp_extension.NpuExtension adds the torch_npu/ACL include and lib dirs."),
    C("CUDAExtension('pointnet2_cuda', [", "custom_cuda_extension", "replace", True, "NpuExtension('pointnet2_npu', [",
      "Build target switches to the NPU extension imported by pointnet2_utils."),
    C("'src/ball_query_gpu.cu',", "custom_cuda_extension", "replace", True, "'src/ball_query_npu.cpp',",
      ".cu kernel has to be rewritten (Ascend C) — no nvcc path on Ascend."),
    C("'src/group_points_gpu.cu',", "custom_cuda_extension", "replace", True, "'src/group_points_npu.cpp',",
      ".cu kernel has to be rewritten (Ascend C)."),
    C("'src/interpolate_gpu.cu',", "custom_cuda_extension", "replace", True, "'src/interpolate_npu.cpp',",
      ".cu kernel has to be rewritten (Ascend C)."),
    C("'src/sampling_gpu.cu',", "custom_cuda_extension", "replace", True, "'src/sampling_npu.cpp',",
      ".cu kernel has to be rewritten (Ascend C)."),
    C("extra_compile_args={'cxx': ['-g'], 'nvcc': ['-O2']})", "custom_cuda_extension", "replace", False,
      "extra_compile_args={'cxx': ['-g', '-O2']})",
      "The nvcc key is ignored for a C++-only extension; dropping it is cleanup."),
])

# ----------------------------------------------------------------------------- MiliPoint (mmWave point-cloud HAR, Lightning + PyG)
E("milipoint_cli", "mm.py", "explicit_replacement",
  "yizzfz/MiliPoint mm.py (train/test CLI, PyTorch Lightning)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "Entry script; requirements pin torch 2.0.1 (no autoload before 2.5.1)."),
    C("p.add_argument('-a', '--accelerator', default='gpu', help='lightning accelerator: cpu, gpu')", "device_type", "replace", True,
      "p.add_argument('-a', '--accelerator', default='npu', help='lightning accelerator: cpu, npu')",
      "With 'gpu' the fallback below silently switches to CPU. Lightning 2.0 has no built-in 'npu' accelerator: an NPU "
      "accelerator has to be registered (plugin); unconfirmed which one, the change itself is certain."),
    C("if args.accelerator == 'gpu' and not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if args.accelerator == 'npu' and not torch.npu.is_available():",
      "With the default ported this 'gpu' guard is simply never true; updating it keeps the CPU fallback working."),
    C("=if args.accelerator == 'gpu':", "device_type", "replace", False, "if args.accelerator == 'npu':",
      "Branch only sets matmul precision and logs the device name."),
    C("logger.info('Using %d x %s', args.num_devices, torch.cuda.get_device_name(0))", "torch_cuda_api", "replace", True,
      "logger.info('Using %d x %s', args.num_devices, torch.npu.get_device_name(0))",
      "Complete-port counterfactual: once the branch above tests 'npu' this line runs and torch.cuda.get_device_name raises."),
])
E("milipoint_session_train", "mmrnet/session/train.py", "explicit_replacement",
  "yizzfz/MiliPoint mmrnet/session/train.py (Lightning Trainer + DDPStrategy)", [
    C("return DDPStrategy(process_group_backend='nccl', find_unused_parameters=False,", "dist_backend", "replace", True,
      "return DDPStrategy(process_group_backend='hccl', find_unused_parameters=False,",
      "Explicit NCCL process group; must be HCCL on Ascend."),
    C("return DDPStrategy(start_method='spawn', process_group_backend='nccl')", "dist_backend", "replace", True,
      "return DDPStrategy(start_method='spawn', process_group_backend='hccl')", "Same for the spawn variant."),
    C("if trainer.is_global_zero and torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if trainer.is_global_zero and torch.npu.is_available():", "Guards a log line only."),
    C("peak = torch.cuda.max_memory_allocated() / 2 ** 20", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated() / 2 ** 20", "Would log 0 MiB (CUDA stats empty); log only."),
])
E("milipoint_dgcnn", "mmrnet/models/dgcnn.py", "explicit_replacement",
  "yizzfz/MiliPoint mmrnet/models/dgcnn.py (WangYueFt/dgcnn get_graph_feature)", [
    C("device = torch.device('cuda')", "device_type", "replace", True, "device = x.device",
      "Classic DGCNN hard-codes CUDA for idx_base; raises without CUDA. Device-agnostic x.device is the natural port."),
])
E("milipoint_pointnet", "mmrnet/models/pointnet.py", "explicit_replacement",
  "yizzfz/MiliPoint mmrnet/models/pointnet.py (PointNet++ on torch_geometric / torch_cluster)", [
    C("idx = fps(pos, batch, ratio=self.ratio)", "unsupported_op_workaround", "replace", True,
      "idx = fps(pos.cpu(), batch.cpu(), ratio=self.ratio).to(pos.device)",
      "torch_cluster ships CPU and CUDA kernels only; its CPU path rejects NPU tensors. Run FPS on the host (from memory of "
      "torch_cluster, not in the knowledge base; the knowledge base only says CUDA extensions have no Ascend build)."),
    C("row, col = radius(pos, pos[idx], self.r, batch, batch[idx],", "unsupported_op_workaround", "replace", True,
      "row, col = radius(pos.cpu(), pos[idx].cpu(), self.r, batch.cpu(), batch[idx].cpu(),",
      "Same torch_cluster limitation for radius search."),
    C("edge_index = torch.stack([col, row], dim=0)", "tensor_to_device", "replace", True,
      "edge_index = torch.stack([col, row], dim=0).to(pos.device)",
      "With radius on the host, the edge index must go back to the NPU before message passing."),
])
E("milipoint_dataset", "mmrnet/dataset/mmrnet_data.py", "explicit_replacement",
  "yizzfz/MiliPoint mmrnet/dataset/mmrnet_data.py (stacked, zero-padded radar clouds)", [
    C("num_workers=num_workers, pin_memory=True, drop_last=True,", "pin_memory", "replace", False,
      "num_workers=num_workers, pin_memory=True, pin_memory_device='npu', drop_last=True,",
      "torch 2.0's DataLoader only pins when CUDA is available unless pin_memory_device is given; performance only (unconfirmed for NPU)."),
])
E("milipoint_requirements", "requirements.txt", "explicit_replacement",
  "yizzfz/MiliPoint requirements (torch 2.0 + PyG CUDA wheels)", [
    C("=torch==2.0.1", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.0.1.post1",
      "Ascend adapter for torch 2.0.1 (CANN 7.0.0)."),
    C("--find-links https://data.pyg.org/whl/torch-2.0.0+cu117.html", "custom_cuda_extension", "replace", True,
      "--find-links https://data.pyg.org/whl/torch-2.0.0+cpu.html",
      "The cu117 torch-scatter/torch-cluster wheels link CUDA libraries that are absent on the NPU host; the CPU builds are needed "
      "for the host-side fps/radius workaround."),
    C("torch-scatter==2.1.1", "custom_cuda_extension", "removal", False, None,
      "When torch_scatter is installed PyG routes max-aggregation through it and its kernels reject NPU tensors; without it PyG uses "
      "torch.scatter_reduce (no NPU kernel in the op lists -> CPU fallback). Version-dependent routing, unconfirmed."),
])

# ----------------------------------------------------------------------------- HuPR (RF-Pose-style mmWave pose)
E("hupr_main", "main.py", "explicit_replacement",
  "robert80203/HuPR-A-Benchmark-for-Human-Pose-Estimation-Using-Millimeter-Wave-Radar main.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "Entry script."),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "Reproducibility only; lazy no-op without CUDA."),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpuIDs", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpuIDs",
      "User-selected cards (--gpuIDs 2,3 etc.) are silently ignored otherwise; set before torch_npu initialises the device."),
])
E("hupr_runner", "tools/runner.py", "explicit_replacement",
  "robert80203/HuPR tools/runner.py (train/eval loop with AMP)", [
    C("self.device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
      "self.device = 'npu' if torch.npu.is_available() else 'cpu'", "Silently trains on CPU otherwise."),
    C("pin_memory=True, drop_last=True)", "pin_memory", "replace", False,
      "pin_memory=True, pin_memory_device='npu', drop_last=True)",
      "Pinning is skipped when CUDA is unavailable unless pin_memory_device is given; performance only (unconfirmed)."),
    C("self.model = nn.DataParallel(self.model, device_ids=list(range(self.numGPU)))", "distributed_framework", "replace", True,
      "self.model = self.model  # nn.DataParallel is unsupported on Ascend; multi-NPU training needs DDP",
      "torch.nn.DataParallel is marked unsupported (✘) in Ascend's 2.7.1 API list; scripts/train.sh uses two cards so this branch runs."),
    C("self.scaler = torch.cuda.amp.GradScaler(enabled=self.useAmp)", "amp", "replace", True,
      "self.scaler = torch.npu.amp.GradScaler(enabled=self.useAmp)",
      "torch.cuda.amp.GradScaler disables itself (warning) when CUDA is absent, so fp16 training runs without loss scaling."),
    C("torch.cuda.synchronize()  # wait for the kernels before reading the clock", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for the kernels before reading the clock", "Raises without CUDA."),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "Raises without CUDA."),
    C("with torch.cuda.amp.autocast(enabled=self.useAmp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=self.useAmp):",
      "CUDA autocast disables itself without CUDA: the config asks for AMP and the run silently goes fp32."),
    C("mem = torch.cuda.max_memory_allocated() / (1024 ** 3)", "torch_cuda_api", "replace", False,
      "mem = torch.npu.max_memory_allocated() / (1024 ** 3)", "Logs 0 GB otherwise; log only."),
    C("checkpoint = torch.load(loadPath)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(loadPath, map_location=self.device)",
      "Checkpoints (incl. optimizer and GradScaler state) were written by GPU runs and hold CUDA tensors; "
      "loading them without map_location raises on a host without CUDA."),
])
E("hupr_preprocess", "preprocessing/process_iwr1843.py", "explicit_replacement",
  "robert80203/HuPR preprocessing/process_iwr1843.py (range/Doppler/angle FFT of IWR1843 ADC data)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "Standalone preprocessing entry script."),
    C("self.device = torch.device('cuda' if args.gpu else 'cpu')", "device_type", "replace", True,
      "self.device = torch.device('npu' if args.gpu else 'cpu')", "--gpu would raise on the first .to(self.device)."),
    C("return torch.fft.fftshift(x, dim=dim)", "unsupported_op_workaround", "replace", False,
      "return torch.roll(x, shifts=x.shape[dim] // 2, dims=dim)",
      "Conflicting evidence: Ascend's 2.7.1 API list marks torch.fft.fftshift ✘ (also in the msFmkTransplt unsupported list), "
      "while fft_fftshift appears in the torch 2.1 native NPU op list. roll has an NPU kernel and is exact for this use."),
    C("if self.device.type == 'cuda':", "device_type", "replace", False, "if self.device.type == 'npu':",
      "Guards empty_cache only."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "Memory headroom between sequences; no-op without CUDA."),
])
E("hupr_config", "config/mscsa_prgcn.yaml", "explicit_replacement",
  "robert80203/HuPR config/mscsa_prgcn.yaml", [])
E("hupr_script", "scripts/train.sh", "explicit_replacement",
  "robert80203/HuPR run script", [
    C("export OMP_NUM_THREADS=8", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "Load the CANN environment before python imports torch_npu."),
    C("nvidia-smi --query-gpu=index,name,utilization.gpu,memory.used --format=csv", "torch_cuda_api", "replace", True,
      "npu-smi info",
      "Under `set -e` a missing nvidia-smi makes the script exit 127 after the run; npu-smi is the Ascend equivalent (different output format)."),
])

# ----------------------------------------------------------------------------- MM-Fi toolbox
E("mmfi_lib", "mmfi_lib/mmfi.py", "explicit_replacement",
  "ybzhao/MM-Fi mmfi_lib/mmfi.py (multi-modal dataset incl. WiFi CSI and mmWave)", [])
E("mmfi_example", "example.py", "explicit_replacement",
  "ybzhao/MM-Fi example.py (extended with a WiFi-CSI pose baseline)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "Entry script."),
    C("device = torch.device(config.get('device', 'cuda'))", "device_type", "replace", False,
      "device = torch.device(config.get('device', 'npu'))",
      "The shipped config.yaml always sets device (labelled there); the default only matters for configs without the key."),
])
E("mmfi_config", "config.yaml", "explicit_replacement",
  "ybzhao/MM-Fi config.yaml (plus baseline training keys)", [
    C("device: cuda:0", "device_type", "replace", True, "device: npu:0",
      "Read by example.py into torch.device(); 'cuda:0' fails at the first .to(device)."),
])
