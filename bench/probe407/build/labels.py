"""Labels for probe407 (learned VO / deep visual SLAM: DROID-SLAM, DPVO, TartanVO, DeepV2D, lietorch).

One label per upstream line a careful porter edits for torch_npu (explicit port, no transfer_to_npu).
`required` = with every other labelled line already ported, would leaving this line unchanged fail,
compute something wrong, or silently do the wrong thing on an Ascend host?
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# shared notes
CKPT_NOTE = ("released checkpoint was written by torch.save from a CUDA model, so its storages are tagged "
             "cuda; torch.load without map_location raises on a host without CUDA")
EXT_NOTE = ("no nvcc on an Ascend host: the kernels are re-implemented in Ascend C and built with "
            "torch_npu.utils.cpp_extension.NpuExtension under the same module name, so the Python callers keep "
            "their imports")
SRC_NOTE = ".cu source cannot be compiled for Ascend; replaced by the Ascend C/OpPlugin port of the same kernel"
SHM_NOTE = ("buffer allocated on the CUDA device; moved to the NPU. Whether share_memory_() on an NPU tensor is a "
            "no-op like on CUDA (rather than an error) is unconfirmed in the knowledge base")

# ---------------------------------------------------------------- DROID-SLAM
E("droid_setup", "setup.py", "kernel_rewrite",
  "princeton-vl/DROID-SLAM setup.py (droid_backends + vendored lietorch CUDA extensions)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", True,
      "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
      "CUDAExtension needs CUDA_HOME/nvcc; NpuExtension adds torch_npu/ACL include and lib dirs"),
    C("CUDAExtension('droid_backends',", "custom_cuda_extension", "replace", True,
      "NpuExtension('droid_backends',", EXT_NOTE),
    C("'src/droid_kernels.cu',", "custom_cuda_extension", "replace", True,
      "'src/npu/droid_kernels_npu.cpp',", SRC_NOTE + " (dense BA: Hessian build, Schur complement, frame distance)"),
    C("'src/correlation_kernels.cu',", "custom_cuda_extension", "replace", True,
      "'src/npu/correlation_kernels_npu.cpp',", SRC_NOTE + " (corr_index forward/backward)"),
    C("'src/altcorr_kernel.cu',", "custom_cuda_extension", "replace", True,
      "'src/npu/altcorr_kernel_npu.cpp',", SRC_NOTE + " (memory-efficient alternate correlation)"),
    C("CUDAExtension('lietorch_backends',", "custom_cuda_extension", "replace", True,
      "NpuExtension('lietorch_backends',", EXT_NOTE),
    C("'thirdparty/lietorch/lietorch/src/lietorch_gpu.cu',", "custom_cuda_extension", "replace", True,
      "'thirdparty/lietorch/lietorch/src/lietorch_npu.cpp',",
      "the GPU dispatch of the Lie-group ops (exp/log/mul/act/adj); the CPU file stays"),
])

E("droid_droid", "droid_slam/droid.py", "explicit_replacement",
  "princeton-vl/DROID-SLAM droid_slam/droid.py (Droid front object: weights, frontend/backend, terminate)", [
    C("(k.replace(\"module.\", \"\"), v) for (k, v) in torch.load(weights).items()])", "device_type", "replace", True,
      "(k.replace(\"module.\", \"\"), v) for (k, v) in torch.load(weights, map_location=\"cpu\").items()])", CKPT_NOTE),
    C("self.net.to(\"cuda:0\").eval()", "tensor_to_device", "replace", True,
      "self.net.to(\"npu:0\").eval()", "network must live on the same device as the DepthVideo buffers"),
    C("torch.cuda.empty_cache()  # frontend correlation volumes are gone now", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # frontend correlation volumes are gone now",
      "torch.cuda.empty_cache is a no-op when CUDA was never initialised; only NPU cache release is lost (memory, not correctness)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()", "same as above, before the second global BA pass"),
])

E("droid_depth_video", "droid_slam/depth_video.py", "explicit_replacement",
  "princeton-vl/DROID-SLAM droid_slam/depth_video.py (shared keyframe buffers + droid_backends BA)", [
    C("stereo=False, device=\"cuda:0\"):", "device_type", "replace", False,
      "def __init__(self, image_size=[480, 640], buffer=1024, stereo=False, device=\"npu:0\"):",
      "the device parameter is never read (buffers hard-code the device), so the default is inert; changed for consistency"),
    C("self.tstamp = torch.zeros(buffer, device=\"cuda\"", "device_type", "replace", True,
      "self.tstamp = torch.zeros(buffer, device=\"npu\", dtype=torch.float).share_memory_()", SHM_NOTE),
    C("self.images = torch.zeros(buffer, 3, ht, wd, device=\"cuda\"", "device_type", "replace", True,
      "self.images = torch.zeros(buffer, 3, ht, wd, device=\"npu\", dtype=torch.uint8)", "keyframe image buffer"),
    C("self.dirty = torch.zeros(buffer, device=\"cuda\"", "device_type", "replace", True,
      "self.dirty = torch.zeros(buffer, device=\"npu\", dtype=torch.bool).share_memory_()", SHM_NOTE),
    C("self.red = torch.zeros(buffer, device=\"cuda\"", "device_type", "replace", True,
      "self.red = torch.zeros(buffer, device=\"npu\", dtype=torch.bool).share_memory_()", SHM_NOTE),
    C("self.poses = torch.zeros(buffer, 7, device=\"cuda\"", "device_type", "replace", True,
      "self.poses = torch.zeros(buffer, 7, device=\"npu\", dtype=torch.float).share_memory_()", SHM_NOTE),
    C("self.disps = torch.ones(buffer, ht//8, wd//8, device=\"cuda\"", "device_type", "replace", True,
      "self.disps = torch.ones(buffer, ht//8, wd//8, device=\"npu\", dtype=torch.float).share_memory_()", SHM_NOTE),
    C("self.disps_sens = torch.zeros(buffer, ht//8, wd//8, device=\"cuda\"", "device_type", "replace", True,
      "self.disps_sens = torch.zeros(buffer, ht//8, wd//8, device=\"npu\", dtype=torch.float).share_memory_()", SHM_NOTE),
    C("self.disps_up = torch.zeros(buffer, ht, wd, device=\"cuda\"", "device_type", "replace", True,
      "self.disps_up = torch.zeros(buffer, ht, wd, device=\"npu\", dtype=torch.float).share_memory_()", SHM_NOTE),
    C("self.intrinsics = torch.zeros(buffer, 4, device=\"cuda\"", "device_type", "replace", True,
      "self.intrinsics = torch.zeros(buffer, 4, device=\"npu\", dtype=torch.float).share_memory_()", SHM_NOTE),
    C("self.fmaps = torch.zeros(buffer, c, 128", "device_type", "replace", True,
      "self.fmaps = torch.zeros(buffer, c, 128, ht//8, wd//8, dtype=torch.half, device=\"npu\").share_memory_()",
      SHM_NOTE + "; fp16 feature maps are fine on NPU"),
    C("self.nets = torch.zeros(buffer, 128", "device_type", "replace", True,
      "self.nets = torch.zeros(buffer, 128, ht//8, wd//8, dtype=torch.half, device=\"npu\").share_memory_()", SHM_NOTE),
    C("self.inps = torch.zeros(buffer, 128", "device_type", "replace", True,
      "self.inps = torch.zeros(buffer, 128, ht//8, wd//8, dtype=torch.half, device=\"npu\").share_memory_()", SHM_NOTE),
    C("self.poses[:] = torch.as_tensor([0, 0, 0, 0, 0, 0, 1], dtype=torch.float, device=\"cuda\")", "device_type",
      "replace", True,
      "self.poses[:] = torch.as_tensor([0, 0, 0, 0, 0, 0, 1], dtype=torch.float, device=\"npu\")",
      "identity initialisation created on the CUDA device"),
    C("ii = ii.to(device=\"cuda\", dtype=torch.long).reshape(-1)", "tensor_to_device", "replace", True,
      "ii = ii.to(device=\"npu\", dtype=torch.long).reshape(-1)", "edge indices passed to droid_backends and pops"),
    C("jj = jj.to(device=\"cuda\", dtype=torch.long).reshape(-1)", "tensor_to_device", "replace", True,
      "jj = jj.to(device=\"npu\", dtype=torch.long).reshape(-1)", "edge indices passed to droid_backends and pops"),
])

E("droid_factor_graph", "droid_slam/factor_graph.py", "explicit_replacement",
  "princeton-vl/DROID-SLAM droid_slam/factor_graph.py (factor graph, update operator, autocast regions)", [
    C("def __init__(self, video, update_op, device=\"cuda:0\"", "device_type", "replace", True,
      "def __init__(self, video, update_op, device=\"npu:0\", corr_impl=\"volume\", max_factors=-1, upsample=False):",
      "frontend and backend construct FactorGraph without a device argument, so the default is the live value"),
    C("=@torch.cuda.amp.autocast(enabled=True)", "amp", "replace", False,
      "@torch.npu.amp.autocast(enabled=True)",
      "add_factors only builds the fp16 correlation volume (matmul of two half tensors works without autocast); perf only"),
    C("=with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=False):",
      "keeps reprojection in fp32 once NPU autocast is on; the region holds lietorch ops and elementwise math, "
      "whether any autocast-listed op is inside is unconfirmed"),
    C("=@torch.cuda.amp.autocast(True)", "amp", "replace", False,
      "@torch.npu.amp.autocast(True)", "rm_factors only indexes tensors; inert"),
    C("=@torch.cuda.amp.autocast()", "amp", "replace", False,
      "@torch.npu.amp.autocast()", "rm_keyframe only copies buffer slots; inert"),
    C("@torch.cuda.amp.autocast(enabled=True, dtype=torch.float16)", "amp", "replace", True,
      "@torch.npu.amp.autocast(enabled=True, dtype=torch.float16)",
      "update() feeds the fp16 hidden state / correlation features into the fp32-weight update convs; without an "
      "active autocast on the NPU the conv raises a Half/Float dtype mismatch (torch.cuda.amp.autocast disables itself "
      "when CUDA is unavailable)"),
    C("with torch.cuda.amp.autocast(enabled=False):  # geometry in fp32", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=False):  # geometry in fp32",
      "fp32 island for motion features; unconfirmed whether anything inside is autocast-listed"),
    C("=with torch.cuda.amp.autocast(False):", "amp", "replace", True,
      "with torch.npu.amp.autocast(False):",
      "fp32 island around target/weight update and the dense BA call; once the decorator is NPU autocast this must "
      "disable the NPU autocast, otherwise the BA inputs are built under fp16 autocast"),
])

E("droid_corr", "droid_slam/modules/corr.py", "explicit_replacement",
  "princeton-vl/DROID-SLAM droid_slam/modules/corr.py (CorrBlock / AltCorrBlock over droid_backends)", [])

E("droid_motion_filter", "droid_slam/motion_filter.py", "explicit_replacement",
  "princeton-vl/DROID-SLAM droid_slam/motion_filter.py (keyframe motion filter, feature extraction)", [
    C("def __init__(self, net, video, thresh=2.5, device=\"cuda:0\"):", "device_type", "replace", True,
      "def __init__(self, net, video, thresh=2.5, device=\"npu:0\"):",
      "Droid builds MotionFilter without a device, so this default decides where frames and MEAN/STDV go"),
    C("=@torch.cuda.amp.autocast(enabled=True)", "amp", "replace", False,
      "@torch.npu.amp.autocast(enabled=True)", "context encoder runs fine in fp32 (fp32 input); perf only"),
    C("=@torch.cuda.amp.autocast(True)", "amp", "replace", False,
      "@torch.npu.amp.autocast(True)", "feature encoder; perf only"),
    C("@torch.cuda.amp.autocast(enabled=True, cache_enabled=True)", "amp", "replace", False,
      "@torch.npu.amp.autocast(enabled=True, cache_enabled=True)",
      "track(): inputs are fp32 and the fp32 outputs are cast on assignment into the half buffers; perf only"),
])

E("droid_geom_ba", "droid_slam/geom/ba.py", "explicit_replacement",
  "princeton-vl/DROID-SLAM droid_slam/geom/ba.py (python BA used in training, torch_scatter)", [
    C("from torch_scatter import scatter_sum", "unsupported_op_workaround", "replace", True,
      "from .scatter import scatter_sum  # index_add_-based, device agnostic",
      "torch_scatter ships CPU/CUDA kernels only; a 10-line scatter_sum over Tensor.index_add_ (NPU kernel present) "
      "replaces it"),
])

E("droid_geom_chol", "droid_slam/geom/chol.py", "explicit_replacement",
  "princeton-vl/DROID-SLAM droid_slam/geom/chol.py (Cholesky solver, Schur complement)", [])

E("droid_projective_ops", "droid_slam/geom/projective_ops.py", "explicit_replacement",
  "princeton-vl/DROID-SLAM droid_slam/geom/projective_ops.py (pinhole projection, jacobians)", [])

E("droid_demo", "demo.py", "explicit_replacement",
  "princeton-vl/DROID-SLAM demo.py (image stream, Droid.track, reconstruction dump)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry point; the ported environment pins torch 2.1 (no backend autoload before torch_npu 2.5.1)"),
])

E("droid_train", "train.py", "explicit_replacement",
  "princeton-vl/DROID-SLAM train.py (mp.spawn DDP training on TartanAir)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry point; registers the npu device and hccl backend"),
    C("backend='nccl',", "dist_backend", "replace", True, "backend='hccl',", "NCCL is not available on Ascend"),
    C("torch.cuda.set_device(gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu)",
      "bind each spawned worker to its NPU"),
    C("model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "model to the current NPU"),
    C("model.load_state_dict(torch.load(args.ckpt))", "device_type", "replace", False,
      "model.load_state_dict(torch.load(args.ckpt, map_location='cpu'))",
      "only matters when resuming from a checkpoint written on a CUDA machine; NPU-written checkpoints load as is"),
    C("images, poses, disps, intrinsics = [x.to('cuda') for x in item]", "tensor_to_device", "replace", True,
      "images, poses, disps, intrinsics = [x.to('npu') for x in item]", "batch to the current NPU"),
])

E("droid_env", "environment.yaml", "explicit_replacement",
  "princeton-vl/DROID-SLAM environment.yaml (conda env with cudatoolkit and pytorch-scatter)", [
    C("=- pytorch-scatter", "unsupported_op_workaround", "removal", True, None,
      "no NPU build of torch_scatter; geom/ba.py now uses an index_add_ helper"),
    C("=- pytorch=1.10", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
      "torch_npu pairs only with specific torch releases (2.1.0 is the oldest line still in the active matrix)"),
    C("=- cudatoolkit=11.3", "custom_cuda_extension", "removal", False, None,
      "CUDA toolkit for the extension builds; inert on an Ascend host, and unconfirmed whether conda even resolves it "
      "on aarch64 servers"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post12",
      "torch_npu wheel matching torch 2.1.0 (CANN 8.1.RC1 line)"),
])

E("droid_eval_sh", "tools/validate_tartanair.sh", "explicit_replacement",
  "princeton-vl/DROID-SLAM tools/validate_tartanair.sh (evaluation launcher)", [
    C("export CUDA_VISIBLE_DEVICES=0", "env_var", "replace", False, "export ASCEND_RT_VISIBLE_DEVICES=0",
      "selects device 0, which is what the unrestricted process uses anyway; inert"),
    C("export OMP_NUM_THREADS=4", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN runtime libraries must be on the library path before torch_npu is imported"),
])

# ---------------------------------------------------------------- DPVO
E("dpvo_setup", "setup.py", "kernel_rewrite",
  "princeton-vl/DPVO setup.py (cuda_corr, cuda_ba, lietorch_backends CUDA extensions)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", True,
      "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
      "no nvcc on the Ascend host"),
    C("CUDAExtension('cuda_corr',", "custom_cuda_extension", "replace", True, "NpuExtension('cuda_corr',", EXT_NOTE),
    C("sources=['dpvo/altcorr/correlation.cpp', 'dpvo/altcorr/correlation_kernel.cu'],", "custom_cuda_extension",
      "replace", True, "sources=['dpvo/altcorr/correlation.cpp', 'dpvo/altcorr/correlation_kernel_npu.cpp'],",
      SRC_NOTE + " (patch correlation + patchify)"),
    C("CUDAExtension('cuda_ba',", "custom_cuda_extension", "replace", True, "NpuExtension('cuda_ba',", EXT_NOTE),
    C("sources=['dpvo/fastba/ba.cpp', 'dpvo/fastba/ba_cuda.cu', 'dpvo/fastba/block_e.cu'],", "custom_cuda_extension",
      "replace", True, "sources=['dpvo/fastba/ba.cpp', 'dpvo/fastba/ba_npu.cpp', 'dpvo/fastba/block_e_npu.cpp'],",
      SRC_NOTE + " (patch-graph BA, neighbors, reproject)"),
    C("CUDAExtension('lietorch_backends',", "custom_cuda_extension", "replace", True,
      "NpuExtension('lietorch_backends',", EXT_NOTE),
    C("'dpvo/lietorch/src/lietorch_gpu.cu',", "custom_cuda_extension", "replace", True,
      "'dpvo/lietorch/src/lietorch_npu.cpp',", SRC_NOTE),
])

E("dpvo_dpvo", "dpvo/dpvo.py", "explicit_replacement",
  "princeton-vl/DPVO dpvo/dpvo.py (DPVO tracker: patch graph buffers, update, keyframing)", [
    C("autocast = torch.cuda.amp.autocast", "amp", "replace", True, "autocast = torch.npu.amp.autocast",
      "with MIXED_PRECISION the imap/gmap/net buffers are fp16 and feed fp32-weight Linear layers in update(); "
      "the CUDA autocast disables itself on an NPU host and the update raises a dtype mismatch"),
    C("Id = SE3.Identity(1, device=\"cuda\")", "device_type", "replace", True, "Id = SE3.Identity(1, device=\"npu\")",
      "module-level identity pose, executed at import"),
    C("self.tstamps_ = torch.zeros(self.N, dtype=torch.long, device=\"cuda\")", "device_type", "replace", True,
      "self.tstamps_ = torch.zeros(self.N, dtype=torch.long, device=\"npu\")", "state buffer"),
    C("self.poses_ = torch.zeros(self.N, 7, dtype=torch.float, device=\"cuda\")", "device_type", "replace", True,
      "self.poses_ = torch.zeros(self.N, 7, dtype=torch.float, device=\"npu\")", "state buffer"),
    C("self.patches_ = torch.zeros(", "device_type", "replace", True,
      "self.patches_ = torch.zeros(self.N, self.M, 3, self.P, self.P, dtype=torch.float, device=\"npu\")", "state buffer"),
    C("self.intrinsics_ = torch.zeros(self.N, 4, dtype=torch.float, device=\"cuda\")", "device_type", "replace", True,
      "self.intrinsics_ = torch.zeros(self.N, 4, dtype=torch.float, device=\"npu\")", "state buffer"),
    C("self.points_ = torch.zeros(", "device_type", "replace", True,
      "self.points_ = torch.zeros(self.N * self.M, 3, dtype=torch.float, device=\"npu\")", "point cloud buffer"),
    C("self.colors_ = torch.zeros(", "device_type", "replace", True,
      "self.colors_ = torch.zeros(self.N, self.M, 3, dtype=torch.uint8, device=\"npu\")", "patch colours"),
    C("self.index_ = torch.zeros(", "device_type", "replace", True,
      "self.index_ = torch.zeros(self.N, self.M, dtype=torch.long, device=\"npu\")", "patch -> frame index"),
    C("self.index_map_ = torch.zeros(", "device_type", "replace", True,
      "self.index_map_ = torch.zeros(self.N, dtype=torch.long, device=\"npu\")", "frame -> first patch index"),
    C("self.kwargs = kwargs = {\"device\": \"cuda\", \"dtype\": torch.half}", "device_type", "replace", True,
      "self.kwargs = kwargs = {\"device\": \"npu\", \"dtype\": torch.half}", "kwargs for all network buffers (fp16 path)"),
    C("self.kwargs = kwargs = {\"device\": \"cuda\", \"dtype\": torch.float}", "device_type", "replace", True,
      "self.kwargs = kwargs = {\"device\": \"npu\", \"dtype\": torch.float}", "kwargs for all network buffers (fp32 path)"),
    C("self.ii = torch.as_tensor([], dtype=torch.long, device=\"cuda\")", "device_type", "replace", True,
      "self.ii = torch.as_tensor([], dtype=torch.long, device=\"npu\")", "edge list"),
    C("self.jj = torch.as_tensor([], dtype=torch.long, device=\"cuda\")", "device_type", "replace", True,
      "self.jj = torch.as_tensor([], dtype=torch.long, device=\"npu\")", "edge list"),
    C("self.kk = torch.as_tensor([], dtype=torch.long, device=\"cuda\")", "device_type", "replace", True,
      "self.kk = torch.as_tensor([], dtype=torch.long, device=\"npu\")", "edge list"),
    C("state_dict = torch.load(network)", "device_type", "replace", True,
      "state_dict = torch.load(network, map_location=\"cpu\")", CKPT_NOTE + " (dpvo.pth)"),
    C("self.network.cuda()", "tensor_to_device", "replace", True, "self.network.npu()", "network to the NPU"),
    C("intrinsics_ = torch.zeros(1, 4, dtype=torch.float32, device=\"cuda\")", "device_type", "replace", True,
      "intrinsics_ = torch.zeros(1, 4, dtype=torch.float32, device=\"npu\")",
      "viewer path only (--viz); dpviewer itself is a separate CUDA/OpenGL build whose NPU status is unknown"),
    C("kk = torch.arange(self.m-self.M, self.m, device=\"cuda\")", "device_type", "replace", True,
      "kk = torch.arange(self.m-self.M, self.m, device=\"npu\")", "motion probe during initialisation"),
    C("lmbda = torch.as_tensor([1e-4], device=\"cuda\")", "device_type", "replace", True,
      "lmbda = torch.as_tensor([1e-4], device=\"npu\")", "BA damping passed to the fastba kernel"),
    C("torch.arange(0, self.m, device=\"cuda\"),", "device_type", "replace", True,
      "torch.arange(0, self.m, device=\"npu\"),", "edge generation"),
    C("torch.arange(0, self.n, device=\"cuda\"), indexing='ij')", "device_type", "replace", True,
      "torch.arange(0, self.n, device=\"npu\"), indexing='ij')", "edge generation"),
    C("=torch.arange(t0, t1, device=\"cuda\"),", "device_type", "replace", True,
      "torch.arange(t0, t1, device=\"npu\"),", "forward edges"),
    C("torch.arange(self.n-1, self.n, device=\"cuda\"), indexing='ij')", "device_type", "replace", True,
      "torch.arange(self.n-1, self.n, device=\"npu\"), indexing='ij')", "forward edges"),
    C("return flatmeshgrid(torch.arange(t0, t1, device=\"cuda\"),", "device_type", "replace", True,
      "return flatmeshgrid(torch.arange(t0, t1, device=\"npu\"),", "backward edges"),
    C("torch.arange(max(self.n-r, 0), self.n, device=\"cuda\"), indexing='ij')", "device_type", "replace", True,
      "torch.arange(max(self.n-r, 0), self.n, device=\"npu\"), indexing='ij')", "backward edges"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "called once per frame; no-op without CUDA, so only NPU cache trimming is lost (memory/perf)"),
])

E("dpvo_altcorr", "dpvo/altcorr/correlation.py", "explicit_replacement",
  "princeton-vl/DPVO dpvo/altcorr/correlation.py (cuda_corr autograd wrappers)", [
    C("perm = torch.rand(len(ii), device=\"cuda\") < ctx.dropout", "device_type", "replace", True,
      "perm = torch.rand(len(ii), device=fmap1.device) < ctx.dropout",
      "training backward with correlation dropout (dropout < 1) allocates on CUDA"),
])

E("dpvo_fastba", "dpvo/fastba/ba.py", "explicit_replacement",
  "princeton-vl/DPVO dpvo/fastba/ba.py (cuda_ba entry points)", [])

E("dpvo_utils", "dpvo/utils.py", "explicit_replacement",
  "princeton-vl/DPVO dpvo/utils.py (Timer on CUDA events, coordinate grids)", [
    C("self.start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "self.start = torch.npu.Event(enable_timing=True)", "--timeit path; CUDA events cannot record on an NPU stream"),
    C("self.end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "self.end = torch.npu.Event(enable_timing=True)", "--timeit path"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without a CUDA driver; the NPU queue must be drained before reading elapsed_time"),
])

E("dpvo_net", "dpvo/net.py", "explicit_replacement",
  "princeton-vl/DPVO dpvo/net.py (VONet: patchifier, update operator, training unroll)", [
    C("=import torch_scatter", "unsupported_op_workaround", "removal", True, None,
      "unused here, but torch_scatter is dropped from the NPU environment (no NPU build) so the import would fail"),
    C("=from torch_scatter import scatter_sum", "unsupported_op_workaround", "removal", True, None,
      "same; SoftAgg in blocks.py gets an index_add_-based scatter helper"),
    C("autocast = torch.cuda.amp.autocast", "amp", "replace", False, "autocast = torch.npu.amp.autocast",
      "only used as @autocast(enabled=False) on forward(); training runs without an outer autocast, so inert"),
    C("x = torch.randint(1, w-1, size=[n, 3*patches_per_image], device=\"cuda\")", "device_type", "replace", True,
      "x = torch.randint(1, w-1, size=[n, 3*patches_per_image], device=\"npu\")", "gradient-biased patch sampling"),
    C("y = torch.randint(1, h-1, size=[n, 3*patches_per_image], device=\"cuda\")", "device_type", "replace", True,
      "y = torch.randint(1, h-1, size=[n, 3*patches_per_image], device=\"npu\")", "gradient-biased patch sampling"),
    C("x = torch.randint(1, w-1, size=[n, patches_per_image], device=\"cuda\")", "device_type", "replace", True,
      "x = torch.randint(1, w-1, size=[n, patches_per_image], device=\"npu\")", "random patch sampling"),
    C("y = torch.randint(1, h-1, size=[n, patches_per_image], device=\"cuda\")", "device_type", "replace", True,
      "y = torch.randint(1, h-1, size=[n, patches_per_image], device=\"npu\")", "random patch sampling"),
    C("disps = torch.ones(b, n, h, w, device=\"cuda\")", "device_type", "replace", True,
      "disps = torch.ones(b, n, h, w, device=\"npu\")", "inference path (no depth given)"),
    C("index = torch.arange(n, device=\"cuda\").view(n, 1)", "device_type", "replace", True,
      "index = torch.arange(n, device=\"npu\").view(n, 1)", "patch -> frame index"),
    C("kk, jj = flatmeshgrid(torch.where(ix < 8)[0], torch.arange(0, 8, device=\"cuda\"), indexing='ij')",
      "device_type", "replace", True,
      "kk, jj = flatmeshgrid(torch.where(ix < 8)[0], torch.arange(0, 8, device=\"npu\"), indexing='ij')",
      "initial training graph"),
    C("net = torch.zeros(b, len(kk), DIM, device=\"cuda\", dtype=torch.float)", "device_type", "replace", True,
      "net = torch.zeros(b, len(kk), DIM, device=\"npu\", dtype=torch.float)", "hidden state"),
    C("kk1, jj1 = flatmeshgrid(torch.where(ix < n)[0], torch.arange(n, n+1, device=\"cuda\"), indexing='ij')",
      "device_type", "replace", True,
      "kk1, jj1 = flatmeshgrid(torch.where(ix < n)[0], torch.arange(n, n+1, device=\"npu\"), indexing='ij')",
      "graph growth during unroll"),
    C("kk2, jj2 = flatmeshgrid(torch.where(ix == n)[0], torch.arange(0, n+1, device=\"cuda\"), indexing='ij')",
      "device_type", "replace", True,
      "kk2, jj2 = flatmeshgrid(torch.where(ix == n)[0], torch.arange(0, n+1, device=\"npu\"), indexing='ij')",
      "graph growth during unroll"),
    C("net1 = torch.zeros(b, len(kk1) + len(kk2), DIM, device=\"cuda\")", "device_type", "replace", True,
      "net1 = torch.zeros(b, len(kk1) + len(kk2), DIM, device=\"npu\")", "hidden state for new edges"),
])

E("dpvo_demo", "demo.py", "explicit_replacement",
  "princeton-vl/DPVO demo.py (reader process + DPVO loop, evo output)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry point; the ported environment keeps torch 2.3.1 (no backend autoload before torch_npu 2.5.1)"),
    C("cfg.merge_from_list(args.opts)", "compile_mode", "npu_only_addition", False,
      "torch.npu.set_compile_mode(jit_compile=False)",
      "the patch graph changes shape every frame; binary (non-JIT) kernels avoid per-shape recompilation. Perf only"),
    C("image = torch.from_numpy(image).permute(2, 0, 1).cuda()", "tensor_to_device", "replace", True,
      "image = torch.from_numpy(image).permute(2, 0, 1).npu()", "frame to NPU"),
    C("intrinsics = torch.from_numpy(intrinsics).cuda()", "tensor_to_device", "replace", True,
      "intrinsics = torch.from_numpy(intrinsics).npu()", "intrinsics to NPU"),
])

E("dpvo_train", "train.py", "explicit_replacement",
  "princeton-vl/DPVO train.py (single-process training loop)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
    C("train_loader = DataLoader(db, batch_size=1, shuffle=True, num_workers=4, pin_memory=True)", "pin_memory",
      "replace", False,
      "train_loader = DataLoader(db, batch_size=1, shuffle=True, num_workers=4, pin_memory=True, pin_memory_device='npu')",
      "unconfirmed: how torch 2.3's DataLoader pins for a PrivateUse1 device without pin_memory_device; perf only"),
    C("net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "network to NPU"),
    C("state_dict = torch.load(args.ckpt)", "device_type", "replace", False,
      "state_dict = torch.load(args.ckpt, map_location='cpu')",
      "only when fine-tuning from a CUDA-written checkpoint"),
    C("images, poses, disps, intrinsics = [x.cuda().float() for x in data_blob]", "tensor_to_device", "replace", True,
      "images, poses, disps, intrinsics = [x.npu().float() for x in data_blob]", "batch to NPU"),
    C("ii = ii.reshape(-1).cuda()", "tensor_to_device", "replace", True, "ii = ii.reshape(-1).npu()",
      "pose-loss edge indices"),
    C("jj = jj.reshape(-1).cuda()", "tensor_to_device", "replace", True, "jj = jj.reshape(-1).npu()",
      "pose-loss edge indices"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "before validation; memory only"),
    C("torch.cuda.empty_cache()  # validation allocates its own buffers", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # validation allocates its own buffers", "after validation; memory only"),
])

E("dpvo_config", "config/default.yaml", "explicit_replacement",
  "princeton-vl/DPVO config/default.yaml (yacs tracker settings)", [])

E("dpvo_env", "environment.yml", "explicit_replacement",
  "princeton-vl/DPVO environment.yml (conda env: pytorch-cuda 12.1, torch-scatter wheel)", [
    C("=- pytorch-cuda=12.1", "import_torch_npu", "replace", False, "- cpuonly",
      "pulls the CUDA build of torch; torch_npu is installed on top of the CPU build. Unconfirmed whether a CUDA "
      "build of the same version would still work with torch_npu"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.3.1.post6",
      "torch_npu wheel matching torch 2.3.1"),
    C("- torch-scatter -f https://data.pyg.org/whl/torch-2.3.0+cu121.html", "unsupported_op_workaround", "removal",
      True, None, "CUDA wheel of torch_scatter; replaced by an index_add_ helper in the package"),
])

# ---------------------------------------------------------------- TartanVO
E("tartanvo_main", "TartanVO.py", "explicit_replacement",
  "castacks/tartanvo TartanVO.py (model wrapper: load, test_batch)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the entry script imports torch only through this module; the NPU device is used here"),
    C("self.vonet.cuda()", "tensor_to_device", "replace", True, "self.vonet.npu()", "model to NPU"),
    C("preTrainDict = torch.load(modelname)", "device_type", "replace", True,
      "preTrainDict = torch.load(modelname, map_location='cpu')", CKPT_NOTE + " (tartanvo_1914.pkl)"),
    C("img0   = sample['img1'].cuda()", "tensor_to_device", "replace", True, "img0   = sample['img1'].npu()",
      "input frame"),
    C("img1   = sample['img2'].cuda()", "tensor_to_device", "replace", True, "img1   = sample['img2'].npu()",
      "input frame"),
    C("intrinsic = sample['intrinsic'].cuda()", "tensor_to_device", "replace", True,
      "intrinsic = sample['intrinsic'].npu()", "intrinsics layer input"),
])

E("tartanvo_vo", "vo_trajectory_from_folder.py", "explicit_replacement",
  "castacks/tartanvo vo_trajectory_from_folder.py (evaluation entry script)", [])

E("tartanvo_corr", "Network/PWC/correlation.py", "kernel_rewrite",
  "castacks/tartanvo Network/PWC/correlation.py (sniklaus-style cupy correlation layer)", [
    C("=import cupy", "unsupported_op_workaround", "removal", True, None,
      "cupy has no Ascend backend; the kernels below become dead code"),
    C("@cupy.memoize(for_each_device=True)", "unsupported_op_workaround", "removal", True, None,
      "module-level decorator is evaluated at import, so it must go with the import"),
    C("return _FunctionCorrelation.apply(tenFirst, tenSecond)", "unsupported_op_workaround", "replace", True,
      "return correlation_torch(tenFirst, tenSecond)",
      "pure-torch 9x9 cost volume (pad by 4, shifted elementwise product, mean over channels -> 81 channels); "
      "ModuleCorrelation and PWCNet go through this function"),
])

E("tartanvo_pwc", "Network/PWC/PWCNet.py", "explicit_replacement",
  "castacks/tartanvo Network/PWC/PWCNet.py (PWC-DC flow network with warp)", [
    C("if x.is_cuda:", "device_type", "replace", True, "if x.device.type != 'cpu':",
      "on NPU is_cuda is False, the grid would stay on the CPU and grid + flo mixes devices"),
    C("grid = grid.cuda()", "tensor_to_device", "replace", True, "grid = grid.to(x.device)", "sampling grid"),
    C("mask = torch.ones(x.size()).cuda()", "tensor_to_device", "replace", True,
      "mask = torch.ones(x.size(), device=x.device)", "validity mask for the warp"),
])

E("tartanvo_req", "requirements.txt", "explicit_replacement",
  "castacks/tartanvo install instructions (pip requirements incl. cupy)", [
    C("=torch>=1.6", "import_torch_npu", "replace", True, "torch==2.1.0",
      "torch_npu needs an exact torch release"),
    C("=torchvision", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "add the torch_npu wheel next to torch/torchvision"),
    C("=cupy-cuda101", "unsupported_op_workaround", "removal", True, None,
      "CUDA-only; the correlation layer is pure torch after the port"),
])

# ---------------------------------------------------------------- lietorch
E("lietorch_setup", "setup.py", "kernel_rewrite",
  "princeton-vl/lietorch setup.py (lietorch_backends + lietorch_extras CUDA extensions)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", True,
      "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
      "no nvcc on the Ascend host"),
    C("CUDAExtension('lietorch_backends',", "custom_cuda_extension", "replace", True,
      "NpuExtension('lietorch_backends',", EXT_NOTE),
    C("'lietorch/src/lietorch_gpu.cu',", "custom_cuda_extension", "replace", True,
      "'lietorch/src/lietorch_npu.cpp',", SRC_NOTE),
    C("CUDAExtension('lietorch_extras',", "custom_cuda_extension", "replace", True,
      "NpuExtension('lietorch_extras',", EXT_NOTE),
    C("'lietorch/extras/altcorr_kernel.cu',", "custom_cuda_extension", "replace", True,
      "'lietorch/extras/npu/altcorr_kernel_npu.cpp',", SRC_NOTE),
    C("'lietorch/extras/corr_index_kernel.cu',", "custom_cuda_extension", "replace", True,
      "'lietorch/extras/npu/corr_index_kernel_npu.cpp',", SRC_NOTE),
    C("'lietorch/extras/se3_builder.cu',", "custom_cuda_extension", "replace", True,
      "'lietorch/extras/npu/se3_builder_npu.cpp',", SRC_NOTE),
    C("'lietorch/extras/se3_inplace_builder.cu',", "custom_cuda_extension", "replace", True,
      "'lietorch/extras/npu/se3_inplace_builder_npu.cpp',", SRC_NOTE),
    C("'lietorch/extras/se3_solver.cu',", "custom_cuda_extension", "replace", True,
      "'lietorch/extras/npu/se3_solver_npu.cpp',", SRC_NOTE),
])

E("lietorch_group_ops", "lietorch/group_ops.py", "explicit_replacement",
  "princeton-vl/lietorch lietorch/group_ops.py (autograd wrappers over lietorch_backends)", [])

E("lietorch_groups", "lietorch/groups.py", "explicit_replacement",
  "princeton-vl/lietorch lietorch/groups.py (LieGroup / SO3 / SE3 / Sim3 classes)", [])

E("lietorch_run_tests", "lietorch/run_tests.py", "explicit_replacement",
  "princeton-vl/lietorch lietorch/run_tests.py (forward/backward checks on CPU and GPU)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "test entry point"),
    C("=test_exp_log(Group, device='cuda')", "device_type", "replace", True, "test_exp_log(Group, device='npu')",
      "device-side forward test"),
    C("=test_inv(Group, device='cuda')", "device_type", "replace", True, "test_inv(Group, device='npu')",
      "device-side forward test"),
    C("=test_adj(Group, device='cuda')", "device_type", "replace", True, "test_adj(Group, device='npu')",
      "device-side forward test"),
    C("=test_act(Group, device='cuda')", "device_type", "replace", True, "test_act(Group, device='npu')",
      "device-side forward test"),
    C("=test_exp_log_grad(Group, device='cuda')", "device_type", "replace", True,
      "test_exp_log_grad(Group, device='npu')", "device-side backward test"),
    C("=test_inv_log_grad(Group, device='cuda')", "device_type", "replace", True,
      "test_inv_log_grad(Group, device='npu')", "device-side backward test"),
    C("=test_adj_grad(Group, device='cuda')", "device_type", "replace", True, "test_adj_grad(Group, device='npu')",
      "device-side backward test"),
    C("=test_act_grad(Group, device='cuda')", "device_type", "replace", True, "test_act_grad(Group, device='npu')",
      "device-side backward test"),
    C("=test_matrix_grad(Group, device='cuda')", "device_type", "replace", True,
      "test_matrix_grad(Group, device='npu')", "device-side backward test"),
])

E("lietorch_pgo", "examples/pgo/main.py", "explicit_replacement",
  "princeton-vl/lietorch examples/pgo/main.py (pose-graph optimisation on g2o problems)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "example entry point"),
    C("L = torch.linalg.cholesky(H)", "unsupported_op_workaround", "replace", False,
      "L = torch.linalg.cholesky(H.cpu())",
      "fp64 dense solve: Ascend's API list marks linalg.cholesky fp32-only and the op lists show no NPU kernel for "
      "linalg_cholesky_ex (CPU fallback expected); the porter makes the host solve explicit. Unconfirmed whether the "
      "implicit fallback already handles it"),
    C("dx = torch.cholesky_solve(b, L)", "unsupported_op_workaround", "replace", False,
      "dx = torch.cholesky_solve(b.cpu(), L).to(H.device)", "pairs with the line above (no cholesky_solve NPU kernel)"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "otherwise the whole optimisation silently stays on the CPU"),
    C("Ps = SE3(Ps.data.cuda())", "tensor_to_device", "replace", True, "Ps = SE3(Ps.data.npu())", "poses to NPU"),
    C("Gij = SE3(Gij.data.cuda())", "tensor_to_device", "replace", True, "Gij = SE3(Gij.data.npu())",
      "measurements to NPU"),
    C("ii, jj = ii.cuda(), jj.cuda()", "tensor_to_device", "replace", True, "ii, jj = ii.npu(), jj.npu()",
      "edge indices to NPU"),
    C("infos = infos.cuda()", "tensor_to_device", "replace", True, "infos = infos.npu()", "information matrices"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without a CUDA driver; timing needs the NPU queue drained"),
    C("torch.cuda.synchronize()  # wait for the solve before reading the clock", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for the solve before reading the clock", "same"),
])

# ---------------------------------------------------------------- DeepV2D (PyTorch port)
E("deepv2d_train", "train.py", "explicit_replacement",
  "princeton-vl/DeepV2D (PyTorch version) train.py (torchrun/mp.spawn DDP, AMP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
    C("vals = torch.as_tensor([metrics[k] for k in keys], dtype=torch.float32, device='cuda')", "device_type",
      "replace", True,
      "vals = torch.as_tensor([metrics[k] for k in keys], dtype=torch.float32, device='npu')",
      "HCCL all_reduce needs the tensor on the NPU"),
    C("dist.init_process_group('nccl', rank=rank, world_size=world_size)", "dist_backend", "replace", True,
      "dist.init_process_group('hccl', rank=rank, world_size=world_size)", "NCCL -> HCCL"),
    C("device = torch.device(f'cuda:{local_rank}')", "device_type", "replace", True,
      "device = torch.device(f'npu:{local_rank}')", "per-rank device"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)",
      "bind the rank to its NPU"),
    C("checkpoint = torch.load(args.ckpt, map_location={'cuda:0': 'cuda:%d' % local_rank})", "device_type", "replace",
      True, "checkpoint = torch.load(args.ckpt, map_location='npu:%d' % local_rank)",
      "the remap target is a CUDA device; a plain device string also covers NPU-written checkpoints (npu:0 keys)"),
    C("num_workers=cfg.TRAIN.WORKERS, pin_memory=True, drop_last=True)", "pin_memory", "replace", False,
      "num_workers=cfg.TRAIN.WORKERS, pin_memory=True, pin_memory_device='npu', drop_last=True)",
      "unconfirmed whether pinning targets the NPU without pin_memory_device; perf only"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=cfg.TRAIN.MIXED_PRECISION)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=cfg.TRAIN.MIXED_PRECISION)",
      "with NPU autocast producing fp16 activations, the CUDA scaler disables itself on an NPU host and the fp16 "
      "gradients are no longer loss-scaled (underflow)"),
    C("with torch.cuda.amp.autocast(enabled=cfg.TRAIN.MIXED_PRECISION):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=cfg.TRAIN.MIXED_PRECISION):",
      "unported, CUDA autocast disables itself and the model trains in fp32: slower but correct"),
    C("metrics['mem_gb'] = torch.cuda.max_memory_allocated(device) / 1024**3", "torch_cuda_api", "replace", True,
      "metrics['mem_gb'] = torch.npu.max_memory_allocated(device) / 1024**3",
      "passing an npu device to torch.cuda.max_memory_allocated raises (expects a cuda device)"),
    C("ngpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "ngpus = torch.npu.device_count()",
      "returns 0 on an NPU host: mp.spawn starts no workers and nothing trains"),
])

E("deepv2d_launch", "scripts/train_nyu.sh", "explicit_replacement",
  "princeton-vl/DeepV2D (PyTorch version) training launcher (torchrun, GPUs 4-7)", [
    C("=set -e", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment for torch_npu"),
    C("export CUDA_VISIBLE_DEVICES=4,5,6,7", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=4,5,6,7",
      "ignored by the Ascend runtime: ranks 0-3 would land on NPUs 0-3 instead of the reserved 4-7"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "inert under HCCL; log-level mapping (2 = warning) unconfirmed, knowledge only documents 1 = INFO"),
])
