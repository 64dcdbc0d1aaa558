# Labels for probe287: scene text detection / end-to-end text spotting (CUDA -> Ascend NPU).
# One entry per upstream file; one C(...) per line a careful porter would edit.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu"
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# --------------------------------------------------------------------------------------------
# DB (MhLiao/DB): train.py / trainer.py / structure/model.py / DCN extension / eval.py / Dockerfile
# --------------------------------------------------------------------------------------------
E("db_train", "train.py", "explicit_replacement", "MhLiao/DB train.py (--num_gpus, -d/--distributed, local_rank, nccl)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "entry script: register the npu device/backend before anything touches it (mandatory before torch_npu 2.5.1 autoload)"),
    C("torch.cuda.set_device(args['local_rank'])", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args['local_rank'])",
      "torch.cuda.set_device raises on a host without CUDA"),
    C("torch.distributed.init_process_group(backend='nccl'", "dist_backend", "replace", True,
      "torch.distributed.init_process_group(backend='hccl', init_method='env://')",
      "NCCL is not available on Ascend; HCCL is the collective backend"),
])

E("db_trainer", "trainer.py", "device_branch_or_abstraction", "MhLiao/DB trainer.py (init_device, verbose cuda syncs)", [
    C("if torch.cuda.is_available():", "device_type", "replace", True,
      "if torch.npu.is_available():",
      "torch.cuda.is_available() is False on an NPU host, so training silently falls back to CPU"),
    C("self.device = torch.device('cuda')", "device_type", "replace", True,
      "self.device = torch.device('npu')",
      "'cuda' device string"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "only under --verbose, but then torch.cuda.synchronize() raises (no CUDA driver)"),
    C("make report_time measure the real step", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # make report_time measure the real step",
      "same as above, second sync after the train step"),
    C("loss = torch.tensor(0.).cuda()", "tensor_to_device", "replace", True,
      "loss = torch.tensor(0.).to(self.device)",
      ".cuda() on the loss accumulator fails on an NPU host"),
    C("peak = torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated() / (1024 ** 2)",
      "log only: on an NPU host the CUDA allocator was never initialised and this returns 0"),
])

E("db_model", "structure/model.py", "explicit_replacement", "MhLiao/DB structure/model.py (parallelize, SegDetectorModel)", [
    C("return nn.DataParallel(model)", "distributed_framework", "replace", True,
      "return model  # nn.DataParallel is not supported on NPU; multi-card runs use -d (DDP + HCCL)",
      "torch.nn.DataParallel is marked unsupported (✘) in Ascend's API list; the non-distributed path goes through it"),
])

E("db_dcn_setup", "assets/ops/dcn/setup.py", "kernel_rewrite", "MhLiao/DB assets/ops/dcn/setup.py (deform_conv_cuda, deform_pool_cuda)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "removal", False, None,
      "import alone is harmless on an NPU host; goes away with the nvcc build"),
    C("CUDAExtension('deform_conv_cuda', [", "custom_cuda_extension", "removal", True, None,
      "nvcc/.cu build cannot run on an Ascend host; DCN is served by torch_npu.npu_deformable_conv2d instead"),
    C("CUDAExtension('deform_pool_cuda', [", "custom_cuda_extension", "removal", True, None,
      "same: deformable PS-RoI pooling kernel is CUDA-only and unused by DB"),
])

E("db_dcn_func", "assets/ops/dcn/deform_conv.py", "kernel_rewrite", "MhLiao/DB / mmdet v1 DCN autograd functions + modules", [
    C("from . import deform_conv_cuda", "custom_cuda_extension", "replace", True,
      "import torch_npu",
      "the nvcc-built module does not exist on NPU; forward goes to torch_npu.npu_deformable_conv2d"),
    C("=if not input.is_cuda:", "device_type", "replace", True,
      "if not input.is_npu:",
      "raises NotImplementedError for every NPU tensor"),
    C("deform_conv_cuda.deform_conv_forward_cuda(", "custom_cuda_extension", "replace", True,
      "output, _ = torch_npu.npu_deformable_conv2d(input, weight, offset_yx_with_unit_mask, None, kernel_size=[weight.size(2), weight.size(3)], stride=[1, 1, ctx.stride[0], ctx.stride[1]], padding=[ctx.padding[0], ctx.padding[0], ctx.padding[1], ctx.padding[1]], dilation=[1, 1, ctx.dilation[0], ctx.dilation[1]], groups=ctx.groups, deformable_groups=ctx.deformable_groups, modulated=False)",
      "CUDA kernel call site; npu_deformable_conv2d is in torch_npu's custom op list (offset layout differs: all y then x then mask)"),
    C("=if not grad_output.is_cuda:", "device_type", "removal", True, None,
      "hand-written backward goes away: npu_deformable_conv2d carries its own backward (npu_deformable_conv2dbk)"),
    C("deform_conv_cuda.deform_conv_backward_input_cuda(", "custom_cuda_extension", "removal", True, None,
      "CUDA backward kernel call; replaced by autograd of the NPU op"),
    C("deform_conv_cuda.deform_conv_backward_parameters_cuda(", "custom_cuda_extension", "removal", True, None,
      "CUDA backward kernel call; replaced by autograd of the NPU op"),
    C("if not (input.is_cuda and offset.is_cuda and mask.is_cuda):", "device_type", "replace", True,
      "if not (input.is_npu and offset.is_npu and mask.is_npu):",
      "raises NotImplementedError for NPU tensors"),
    C("deform_conv_cuda.modulated_deform_conv_cuda_forward(", "custom_cuda_extension", "replace", True,
      "output, _ = torch_npu.npu_deformable_conv2d(input, weight, torch.cat([offset_y, offset_x, mask], dim=1), bias, kernel_size=[weight.shape[2], weight.shape[3]], stride=[1, 1, ctx.stride, ctx.stride], padding=[ctx.padding] * 4, dilation=[1, 1, ctx.dilation, ctx.dilation], groups=ctx.groups, deformable_groups=ctx.deformable_groups, modulated=True)",
      "DCNv2 forward kernel; torch_npu.contrib.module.ModulatedDeformConv wraps the same op"),
    C("if not (grad_output.is_cuda and ctx.saved_tensors[0].is_cuda):", "device_type", "removal", True, None,
      "modulated backward is dropped with the autograd Function"),
    C("deform_conv_cuda.modulated_deform_conv_cuda_backward(", "custom_cuda_extension", "removal", True, None,
      "CUDA backward kernel call; replaced by autograd of the NPU op"),
])

E("db_eval", "eval.py", "explicit_replacement", "MhLiao/DB eval.py (init_torch_tensor, --speed FPS timing)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "entry script"),
    C("if torch.cuda.is_available():", "device_type", "replace", True,
      "if torch.npu.is_available():",
      "otherwise evaluation silently runs on CPU"),
    C("self.device = torch.device('cuda')", "device_type", "replace", True,
      "self.device = torch.device('npu')",
      "'cuda' device string"),
    C("torch.set_default_tensor_type('torch.cuda.FloatTensor')", "torch_cuda_api", "replace", True,
      "torch.set_default_tensor_type('torch.npu.FloatTensor')",
      "CUDA tensor type is unavailable on an NPU host"),
    C("torch.cuda.synchronize(self.device)", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize(self.device)",
      "--speed path: raises without CUDA (and would be handed an npu device)"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "--speed path end-of-loop sync"),
])

E("db_docker", "Dockerfile", "explicit_replacement", "DB-style Dockerfile (nvidia/cuda base, conda cudatoolkit, DCN build)", [
    C("FROM nvidia/cuda:10.0-cudnn7-devel-ubuntu18.04", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "CUDA base image carries no CANN toolkit/driver libraries (image tag illustrative)"),
    C("RUN conda install -y pytorch==1.2.0", "import_torch_npu", "replace", True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12",
      "torch 1.2 + cudatoolkit has no torch_npu counterpart; torch_npu wheel must equal the torch version"),
    C("ENV TORCH_CUDA_ARCH_LIST=", "custom_cuda_extension", "removal", False, None,
      "nvcc arch list; ignored once nothing is built with nvcc"),
    C("ENV CUDA_HOME=/usr/local/cuda", "custom_cuda_extension", "removal", False, None,
      "points at a non-existent CUDA install; harmless"),
    C("RUN cd assets/ops/dcn && python setup.py build_ext --inplace", "custom_cuda_extension", "removal", True, None,
      "CUDAExtension build fails without nvcc; DCN is replaced by torch_npu.npu_deformable_conv2d"),
    C("ENV CUDA_VISIBLE_DEVICES=0", "env_var", "replace", False,
      "ENV ASCEND_RT_VISIBLE_DEVICES=0",
      "ignored on Ascend; device 0 is the default anyway, so only the restriction is lost"),
])

# --------------------------------------------------------------------------------------------
# DBNet.pytorch (WenmuZhou): tools/train.py, base/base_trainer.py, tools/predict.py, env, launcher
# --------------------------------------------------------------------------------------------
E("dbpt_train", "tools/train.py", "explicit_replacement", "WenmuZhou/DBNet.pytorch tools/train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "entry script (torch is imported inside main())"),
    C("if torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", True,
      "if torch.npu.device_count() > 1:",
      "returns 0 on an NPU host: every launched rank would train undistributed"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)",
      "raises without CUDA"),
    C("torch.distributed.init_process_group(backend=\"nccl\"", "dist_backend", "replace", True,
      "torch.distributed.init_process_group(backend=\"hccl\", init_method=\"env://\", world_size=torch.npu.device_count(), rank=args.local_rank)",
      "nccl -> hccl; world_size also comes from torch.cuda.device_count() on the same line"),
    C("criterion = build_loss(config['loss']).cuda()", "tensor_to_device", "replace", True,
      "criterion = build_loss(config['loss']).npu()",
      ".cuda() on the loss module"),
])

E("dbpt_base_trainer", "base/base_trainer.py", "device_branch_or_abstraction", "WenmuZhou/DBNet.pytorch base/base_trainer.py", [
    C("if torch.cuda.device_count() > 0 and torch.cuda.is_available():", "device_type", "replace", True,
      "if torch.npu.device_count() > 0 and torch.npu.is_available():",
      "False on an NPU host -> silent CPU training"),
    C("self.device = torch.device(\"cuda\")", "device_type", "replace", True,
      "self.device = torch.device(\"npu\")",
      "'cuda' device string"),
    C("torch.cuda.manual_seed(self.config['trainer']['seed'])", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(self.config['trainer']['seed'])",
      "lazy no-op without CUDA: NPU RNG stays unseeded (reproducibility only)"),
    C("torch.cuda.manual_seed_all(self.config['trainer']['seed'])", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(self.config['trainer']['seed'])",
      "same: silent no-op, reproducibility only"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "no-op when CUDA was never initialised; freeing the NPU cache after add_graph is an optimisation"),
])

E("dbpt_predict", "tools/predict.py", "explicit_replacement", "WenmuZhou/DBNet.pytorch tools/predict.py (Pytorch_model)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "entry script"),
    C("isinstance(self.gpu_id, int) and torch.cuda.is_available():", "device_type", "replace", True,
      "if self.gpu_id is not None and isinstance(self.gpu_id, int) and torch.npu.is_available():",
      "False on an NPU host -> inference silently on CPU"),
    C("self.device = torch.device(\"cuda:%s\" % self.gpu_id)", "device_type", "replace", True,
      "self.device = torch.device(\"npu:%s\" % self.gpu_id)",
      "'cuda:N' device string"),
    C("if str(self.device).__contains__('cuda'):", "device_type", "replace", False,
      "if str(self.device).__contains__('npu'):",
      "never true on NPU, so the pre-timing sync is skipped: the reported time is off, results are not"),
    C("=torch.cuda.synchronize(self.device)", "torch_cuda_api", "replace", False,
      "torch.npu.synchronize(self.device)",
      "guarded by the string check above; must change together with it"),
    C("if 'cuda' in str(self.device):", "device_type", "replace", False,
      "if 'npu' in str(self.device):",
      "timing only (see above)"),
    C("torch.cuda.synchronize(self.device)  # wait for the forward pass", "torch_cuda_api", "replace", False,
      "torch.npu.synchronize(self.device)  # wait for the forward pass before timing",
      "timing only; guarded"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = str('0')", "env_var", "replace", False,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = str('0')",
      "ignored by the Ascend runtime; gpu_id=0 is used anyway"),
])

E("dbpt_env", "environment.yml", "explicit_replacement", "DBNet.pytorch-style conda environment.yml", [
    C("- cudatoolkit=10.1", "import_torch_npu", "removal", False, None,
      "CUDA runtime package is useless on Ascend; unconfirmed whether the solve fails on aarch64 hosts"),
    C("- pytorch=1.5.1", "import_torch_npu", "replace", True,
      "- pytorch=2.1.0",
      "no torch_npu release pairs with torch 1.5.1; the torch version must match the torch-npu wheel"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True,
      "- torch-npu==2.1.0.post12",
      "torch-npu pin (pip only), same version as torch"),
])

E("dbpt_sh", "multi_gpu_train.sh", "explicit_replacement", "DBNet.pytorch multi_gpu_train.sh (torch.distributed.launch)", [
    C("#!/usr/bin/env bash", "env_var", "npu_only_addition", True, SET_ENV,
      "CANN runtime libraries/paths must be in the environment before python starts"),
    C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None,
      "NCCL-only knob; no effect with HCCL"),
    C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None,
      "NCCL-only knob; no effect with HCCL"),
    C("CUDA_VISIBLE_DEVICES=4,5,6,7 python3", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=4,5,6,7 python3 -m torch.distributed.launch --nproc_per_node=${NGPUS} \\",
      "ignored on Ascend: the 4 ranks would silently land on cards 0-3, which the comment says belong to another job"),
])

# --------------------------------------------------------------------------------------------
# PAN++ / PSENet / PAN (whai362/pan_pp.pytorch)
# --------------------------------------------------------------------------------------------
E("pan_train", "train.py", "explicit_replacement", "whai362/pan_pp.pytorch train.py (DataParallel(model).cuda())", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "entry script"),
    C("torch.cuda.manual_seed(123456)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(123456)",
      "silent no-op on an NPU host; reproducibility only"),
    C("data.update(dict(cfg=cfg))", "tensor_to_device", "npu_only_addition", True,
      "data = {k: (v.npu(non_blocking=True) if torch.is_tensor(v) else v) for k, v in data.items()}",
      "DataParallel used to scatter the batch to the GPU; without it the batch must be moved explicitly"),
    C("pin_memory=True", "pin_memory", "replace", False,
      "pin_memory=True, pin_memory_device='npu'",
      "unconfirmed: with an empty pin_memory_device torch decides pinning from torch.cuda.is_available(); perf only"),
    C("model = torch.nn.DataParallel(model).cuda()", "distributed_framework", "replace", True,
      "model = model.npu()",
      "nn.DataParallel is unsupported (✘) on NPU and .cuda() fails; single-card (or DDP) instead"),
    C("optimizer = torch.optim.SGD(model.parameters()", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedSGD(model.parameters(), lr=cfg.train_cfg.lr, momentum=0.99, weight_decay=5e-4)",
      "performance: tensor-fused SGD"),
    C("optimizer = torch.optim.Adam(model.parameters()", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdam(model.parameters(), lr=cfg.train_cfg.lr)",
      "performance: tensor-fused Adam"),
    C("checkpoint = torch.load(cfg.train_cfg.pretrain)", "device_type", "replace", True,
      "checkpoint = torch.load(cfg.train_cfg.pretrain, map_location='cpu')",
      "released pretrain weights were saved from CUDA tensors; loading them without map_location fails when CUDA is unavailable"),
    C("checkpoint = torch.load(args.resume)", "device_type", "replace", False,
      "checkpoint = torch.load(args.resume, map_location='cpu')",
      "only fails when resuming a checkpoint written on a GPU host"),
])

E("pan_test", "test.py", "explicit_replacement", "whai362/pan_pp.pytorch test.py (report_speed, fuse_module)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "entry script"),
    C("data['imgs'] = data['imgs'].cuda()", "tensor_to_device", "replace", True,
      "data['imgs'] = data['imgs'].npu()",
      ".cuda() on the batch"),
    C("model = model.cuda()", "tensor_to_device", "replace", True,
      "model = model.npu()",
      ".cuda() on the model"),
    C("checkpoint = torch.load(args.checkpoint)", "device_type", "replace", True,
      "checkpoint = torch.load(args.checkpoint, map_location='cpu')",
      "released checkpoints hold CUDA tensors; torch.load without map_location fails without CUDA"),
])

E("pan_det_head", "models/head/pan_pp_det_head.py", "explicit_replacement", "whai362/pan_pp.pytorch models/head/pan_pp_det_head.py (pa post-processing)", [
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "report_speed path (test.py --report_speed) raises without CUDA"),
    C("torch.cuda.synchronize()  # pa ran on host", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # pa ran on host; sync so the timer is fair",
      "same, closing sync"),
])

E("pan_rec_head", "models/head/pan_pp_rec_head.py", "explicit_replacement", "whai362/pan_pp.pytorch models/head/pan_pp_rec_head.py (attention decoder)", [
    C("seq = torch.cuda.LongTensor(batch_size, max_seq_len + 1)", "torch_cuda_api", "replace", True,
      "seq = torch.full((batch_size, max_seq_len + 1), self.START_TOKEN, dtype=torch.long, device=x.device)",
      "legacy CUDA tensor constructor"),
    C("seq_score = torch.zeros((batch_size, max_seq_len + 1), dtype=torch.float32).cuda()", "tensor_to_device", "replace", True,
      "seq_score = torch.zeros((batch_size, max_seq_len + 1), dtype=torch.float32, device=x.device)",
      ".cuda() allocation in inference decoding"),
    C("end = torch.ones((batch_size, ), dtype=torch.uint8).cuda()", "tensor_to_device", "replace", True,
      "end = torch.ones((batch_size, ), dtype=torch.uint8, device=x.device)",
      ".cuda() allocation in inference decoding"),
])

E("pan_req", "requirements.txt", "explicit_replacement", "pan_pp.pytorch-style requirements.txt with a CUDA wheel index", [
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "import_torch_npu", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; torch_npu docs install CPU torch from whl/cpu on x86 (aarch64 uses PyPI)"),
    C("torch>=1.10.0", "import_torch_npu", "replace", False,
      "torch==2.1.0",
      "loose pin; torch must equal the torch-npu wheel's torch version, which the next line's pin may or may not enforce (unconfirmed)"),
    C("torchvision>=0.11.1", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post12",
      "torch-npu pin; torch itself must be pinned to the same version (torch>=1.10.0 is loose)"),
])

# --------------------------------------------------------------------------------------------
# ABCNet / AdelaiDet (detectron2-based)
# --------------------------------------------------------------------------------------------
E("adet_setup", "setup.py", "kernel_rewrite", "aim-uofa/AdelaiDet setup.py (adet._C, FORCE_CUDA)", [
    C("if (torch.cuda.is_available() and CUDA_HOME is not None) or os.getenv(\"FORCE_CUDA\", \"0\") == \"1\":", "custom_cuda_extension", "add_branch", False,
      "elif os.getenv(\"BUILD_NPU\", \"0\") == \"1\": extension = NpuExtension  # torch_npu.utils.cpp_extension, Ascend C sources",
      "on an NPU host this branch is skipped and a CPU-only adet._C builds fine; an NPU branch only matters if BezierAlign is ported to Ascend C"),
])

E("adet_bezier", "adet/layers/bezier_align.py", "kernel_rewrite", "aim-uofa/AdelaiDet adet/layers/bezier_align.py (ABCNet BezierAlign)", [
    C("from adet import _C", "custom_cuda_extension", "removal", False, None,
      "the CPU-only _C still imports; unused once both call sites are rewritten"),
    C("output = _C.bezier_align_forward(", "custom_cuda_extension", "replace", True,
      "output = bezier_align_torch(input, bezier, spatial_scale, output_size, sampling_ratio, aligned)  # Bezier sample grid + F.grid_sample",
      "on NPU tensors this dispatches to the CPU kernel (no CUDA build) and fails; rewrite with grid_sample (native NPU op)"),
    C("grad_input = _C.bezier_align_backward(", "custom_cuda_extension", "removal", True, None,
      "custom backward disappears: autograd differentiates the grid_sample rewrite"),
])

E("adet_predictor", "demo/predictor.py", "explicit_replacement", "AdelaiDet / detectron2 demo/predictor.py (AsyncPredictor)", [
    C("num_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_gpu = torch.npu.device_count()",
      "0 on an NPU host: --parallel silently runs a single CPU worker"),
    C("cfg.MODEL.DEVICE = \"cuda:{}\".format(gpuid)", "device_type", "replace", True,
      "cfg.MODEL.DEVICE = \"npu:{}\".format(gpuid) if num_gpus > 0 else \"cpu\"",
      "'cuda:N' device string per worker"),
])

E("adet_train_net", "tools/train_net.py", "explicit_replacement", "AdelaiDet tools/train_net.py (detectron2 launch, --num-gpus)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "entry script"),
    C("cfg.merge_from_list(args.opts)", "device_type", "npu_only_addition", True,
      "cfg.MODEL.DEVICE = \"npu\"",
      "detectron2's default MODEL.DEVICE is \"cuda\" and the BAText configs do not override it"),
    C("=launch(", "distributed_framework", "replace", False,
      "launch_npu(  # detectron2 launch() picks NCCL/GLOO from torch.cuda.is_available() and calls torch.cuda.set_device",
      "unconfirmed in the knowledge base: multi-card (--num-gpus > 1) needs an NPU-aware launcher; single card is unaffected"),
])

# --------------------------------------------------------------------------------------------
# FOTS (FOTS.PyTorch-style)
# --------------------------------------------------------------------------------------------
E("fots_roi", "FOTS/model/model.py", "explicit_replacement", "jiangxiluning/FOTS.PyTorch model (RoIRotate, FOTSModel)", [
    C("self.sharedConv = torch.nn.DataParallel(self.sharedConv)", "distributed_framework", "removal", False, None,
      "DataParallel is unsupported on NPU; only reached through BaseTrainer's device_count()>1 branch, which the port drops"),
    C("self.recognizer = torch.nn.DataParallel(self.recognizer)", "distributed_framework", "removal", False, None,
      "as above"),
    C("self.detector = torch.nn.DataParallel(self.detector)", "distributed_framework", "removal", False, None,
      "as above"),
    C("theta = torch.cuda.FloatTensor(n, 2, 3).zero_()", "torch_cuda_api", "replace", True,
      "theta = torch.zeros(n, 2, 3, device=feature_map.device)",
      "legacy CUDA tensor type in RoIRotateLegacy"),
    C("theta[i] = torch.from_numpy(theta_np).float().cuda()", "tensor_to_device", "replace", True,
      "theta[i] = torch.from_numpy(theta_np).float().to(feature_map.device)",
      ".cuda() per RoI"),
    C("feats = feature_map[torch.as_tensor(mapping, dtype=torch.long).cuda()]", "tensor_to_device", "replace", True,
      "feats = feature_map[torch.as_tensor(mapping, dtype=torch.long, device=feature_map.device)]",
      ".cuda() index tensor"),
])

E("fots_trainer", "FOTS/trainer/trainer.py", "device_branch_or_abstraction", "FOTS.PyTorch base/trainer (config['cuda'], gpus, torch.cuda.amp)", [
    C("self.with_cuda = config['cuda'] and torch.cuda.is_available()", "device_type", "replace", True,
      "self.with_cuda = config['cuda'] and torch.npu.is_available()",
      "False on an NPU host -> CPU training (the JSON 'cuda' flag just means 'use the accelerator')"),
    C("if config['cuda'] and not torch.cuda.is_available():", "device_type", "replace", True,
      "if config['cuda'] and not torch.npu.is_available():",
      "this branch would be taken on an NPU host and force the CPU"),
    C("if torch.cuda.device_count() > 1 and len(self.gpus) > 1:", "distributed_framework", "removal", False, None,
      "unchanged it returns 0 and skips DataParallel, which is the right outcome on NPU (✘); a porter drops the branch rather than switching it to npu"),
    C("device = 'cuda'", "device_type", "replace", True,
      "device = 'npu'",
      "'cuda' device string"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "no-op without CUDA"),
    C("except torch.cuda.CudaError:", "torch_cuda_api", "replace", False,
      "except RuntimeError:",
      "never raised on NPU, so the memory report on failure is silently skipped"),
    C("allocated = torch.cuda.memory_allocated(deviceID)", "torch_cuda_api", "replace", False,
      "allocated = torch.npu.memory_allocated(deviceID) / (1024 * 1024)",
      "debug log only; returns 0 on an NPU host"),
    C("cached = torch.cuda.memory_cached(deviceID)", "torch_cuda_api", "replace", False,
      "cached = torch.npu.memory_reserved(deviceID) / (1024 * 1024)",
      "debug log only"),
    C("checkpoint = torch.load(resume_path)", "device_type", "replace", False,
      "checkpoint = torch.load(resume_path, map_location='cpu')",
      "only fails when resuming a checkpoint written on a GPU host"),
    C("state[k] = v.cuda(torch.device('cuda'))", "tensor_to_device", "replace", True,
      "state[k] = v.to(self.device)",
      "optimizer state moved with .cuda(torch.device('cuda'))"),
    C("self.scaler = torch.cuda.amp.GradScaler(enabled=self.use_amp)", "amp", "replace", False,
      "self.scaler = torch.npu.amp.GradScaler(enabled=self.use_amp)",
      "without CUDA the CUDA GradScaler disables itself: fp32 training, slower but correct"),
    C("with torch.cuda.amp.autocast(enabled=self.use_amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=self.use_amp):",
      "CUDA autocast disables itself on an NPU host; perf only"),
])

E("fots_config", "FOTS/config.json", "explicit_replacement", "FOTS.PyTorch config.json", [])

# --------------------------------------------------------------------------------------------
# MaskTextSpotter v3 (maskrcnn_benchmark-based)
# --------------------------------------------------------------------------------------------
E("mts_train_net", "tools/train_net.py", "explicit_replacement", "MhLiao/MaskTextSpotterV3 tools/train_net.py (maskrcnn_benchmark, apex amp)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "entry script"),
    C("from apex import amp", "amp", "replace", False,
      "from torch_npu.npu import amp as npu_amp  # or keep apex.amp from Ascend's apex patch",
      "Ascend's apex patch keeps apex.amp (O1/O2) importable; switching to native torch.npu.amp is the cleaner port (unconfirmed either way for this codebase)"),
    C("model, optimizer = amp.initialize(model, optimizer, opt_level=amp_opt_level)", "amp", "replace", False,
      "scaler = torch.npu.amp.GradScaler(enabled=use_mixed_precision)",
      "only if moving to native AMP; Ascend apex keeps amp.initialize"),
    C("torch.cuda.empty_cache()  # TODO check if it helps", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # TODO check if it helps",
      "no-op without CUDA"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)",
      "raises without CUDA"),
    C("backend=\"nccl\", init_method=\"env://\"", "dist_backend", "replace", True,
      "backend=\"hccl\", init_method=\"env://\"",
      "nccl -> hccl"),
])

E("mts_comm", "maskrcnn_benchmark/utils/comm.py", "explicit_replacement", "maskrcnn_benchmark utils/comm.py (pickle all_gather over NCCL)", [
    C("tensor = torch.ByteTensor(storage).to(\"cuda\")", "device_type", "replace", True,
      "tensor = torch.ByteTensor(storage).to(\"npu\")",
      "HCCL collectives need NPU tensors; 'cuda' string fails"),
    C("local_size = torch.LongTensor([tensor.numel()]).to(\"cuda\")", "device_type", "replace", True,
      "local_size = torch.LongTensor([tensor.numel()]).to(\"npu\")",
      "'cuda' device string"),
    C("size_list = [torch.LongTensor([0]).to(\"cuda\") for _ in range(world_size)]", "device_type", "replace", True,
      "size_list = [torch.LongTensor([0]).to(\"npu\") for _ in range(world_size)]",
      "'cuda' device string"),
    C("tensor_list.append(torch.ByteTensor(size=(max_size,)).to(\"cuda\"))", "device_type", "replace", True,
      "tensor_list.append(torch.ByteTensor(size=(max_size,)).to(\"npu\"))",
      "'cuda' device string"),
    C("padding = torch.ByteTensor(size=(max_size - local_size,)).to(\"cuda\")", "device_type", "replace", True,
      "padding = torch.ByteTensor(size=(max_size - local_size,)).to(\"npu\")",
      "'cuda' device string"),
    C("t = torch.tensor([value], dtype=torch.float64, device=\"cuda\")", "device_type", "replace", True,
      "t = torch.tensor([value], dtype=torch.float32, device=\"npu\")",
      "'cuda' device string; fp64 also moved to fp32 (fp64 is a known NPU caveat)"),
])

E("mts_layers", "maskrcnn_benchmark/layers/roi_align.py", "kernel_rewrite", "maskrcnn_benchmark layers/roi_align.py + nms from the _C extension", [
    C("from maskrcnn_benchmark import _C", "custom_cuda_extension", "removal", False, None,
      "without FORCE_CUDA the extension builds CPU-only and still imports; unused once the call sites move"),
    C("=from apex import amp", "amp", "replace", False,
      "from torch_npu.npu import amp  # or Ascend's apex patch",
      "apex.amp.float_function hints; Ascend apex keeps them (unconfirmed)"),
    C("nms = amp.float_function(_C.nms)", "custom_cuda_extension", "replace", True,
      "from torchvision.ops import nms  # with torchvision_npu imported",
      "_C.nms would run the CPU kernel on NPU tensors; torchvision_npu provides nms"),
    C("output = _C.roi_align_forward(", "custom_cuda_extension", "replace", True,
      "output = torchvision.ops.roi_align(input, roi, output_size, spatial_scale, sampling_ratio, aligned=False)  # torchvision_npu",
      "CUDA kernel call site; torchvision_npu roi_align (or torch_npu.npu_roi_align) on NPU"),
    C("grad_input = _C.roi_align_backward(", "custom_cuda_extension", "removal", True, None,
      "custom backward disappears with the autograd Function"),
    C("@amp.float_function", "amp", "removal", False, None,
      "apex-only decorator; drops out if native AMP is used"),
])

E("mts_engine", "maskrcnn_benchmark/engine/trainer.py", "explicit_replacement", "maskrcnn_benchmark engine/trainer.py (do_train, apex scale_loss)", [
    C("=from apex import amp", "amp", "replace", False,
      "from torch_npu.npu import amp  # or Ascend's apex patch",
      "see tools/train_net.py: Ascend apex keeps apex.amp; native AMP is the alternative"),
    C("with amp.scale_loss(losses, optimizer) as scaled_losses:", "amp", "replace", False,
      "scaler.scale(losses).backward()",
      "only with native AMP"),
    C("torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer)", "amp", "replace", False,
      "torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.SOLVER.GRAD_CLIP)",
      "only with native AMP"),
    C("memory=torch.cuda.max_memory_allocated() / 1024.0 / 1024.0,", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / 1024.0 / 1024.0,",
      "log only; 0 on an NPU host"),
    C("start_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start_evt = torch.npu.Event(enable_timing=True)",
      "CUDA events cannot be created/recorded without CUDA"),
    C("end_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end_evt = torch.npu.Event(enable_timing=True)",
      "as above"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "raises without CUDA"),
    C("os.environ.get(\"CUDA_VISIBLE_DEVICES\", \"all\")", "env_var", "replace", False,
      "\"avg fwd+bwd: %.2f ms over %d iters (device %s)\", avg_ms, len(times), os.environ.get(\"ASCEND_RT_VISIBLE_DEVICES\", \"all\"))",
      "log text only"),
])

E("mts_defaults", "maskrcnn_benchmark/config/defaults.py", "explicit_replacement", "maskrcnn_benchmark config/defaults.py (MaskTextSpotter fields)", [
    C("_C.MODEL.DEVICE = \"cuda\"", "device_type", "replace", True,
      "_C.MODEL.DEVICE = \"npu\"",
      "default device for model, inference and the trainer"),
])

E("mts_docker", "docker/Dockerfile", "explicit_replacement", "maskrcnn_benchmark / MaskTextSpotterV3 docker/Dockerfile", [
    C("FROM nvidia/cuda:${CUDA}-cudnn${CUDNN}-devel-ubuntu16.04", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "CUDA base image has no CANN (image tag illustrative)"),
    C("RUN conda install -y pytorch=1.4.0 torchvision=0.5.0 cudatoolkit=10.1 -c pytorch", "import_torch_npu", "replace", True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12 \\",
      "CUDA conda build of torch 1.4 has no torch_npu counterpart"),
    C("RUN git clone https://github.com/NVIDIA/apex.git", "amp", "replace", False,
      "RUN git clone https://gitee.com/ascend/apex.git \\",
      "Ascend's apex patch (or drop apex for native AMP)"),
    C("&& python setup.py install --cuda_ext --cpp_ext", "amp", "replace", True,
      "&& bash scripts/build.sh --python=3.10 && pip install apex/dist/apex-*.whl",
      "--cuda_ext needs nvcc and fails on an Ascend image"),
    C("ARG FORCE_CUDA=\"1\"", "custom_cuda_extension", "replace", True,
      "ARG FORCE_CUDA=\"0\"",
      "FORCE_CUDA=1 makes maskrcnn_benchmark's setup.py build the .cu sources with nvcc, which fails"),
    C("ENV TORCH_CUDA_ARCH_LIST=", "custom_cuda_extension", "removal", False, None,
      "nvcc arch list; ignored"),
    C("ENV NCCL_DEBUG=INFO", "env_var", "removal", False, None,
      "NCCL-only knob"),
])

E("mts_train_sh", "train.sh", "explicit_replacement", "MaskTextSpotterV3-style train.sh (8-GPU torch.distributed.launch)", [
    C("=#!/bin/bash", "env_var", "npu_only_addition", True, SET_ENV,
      "CANN environment must be sourced before python"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "ignored on Ascend; all 8 cards are the default anyway"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False,
      "export HCCL_SOCKET_IFNAME=eth0",
      "ignored by HCCL; matters for multi-node root-info NIC choice, not for this single-node run"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None,
      "NCCL-only knob"),
    C("CUDA_VISIBLE_DEVICES=0 python3 tools/test_net.py", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0 python3 tools/test_net.py --config-file configs/mixtrain/seg_rec_poly_fuse_feature.yaml \\",
      "ignored; card 0 is used by default anyway"),
])

# --------------------------------------------------------------------------------------------
# MMOCR 0.x (DBNet / DBNet++ / PSENet / PANet implementations)
# --------------------------------------------------------------------------------------------
E("mmocr_train", "mmocr/apis/train.py", "explicit_replacement", "open-mmlab/mmocr 0.x mmocr/apis/train.py", [
    C("from mmcv.parallel import MMDataParallel, MMDistributedDataParallel", "distributed_framework", "replace", True,
      "from mmcv.device.npu import NPUDataParallel, NPUDistributedDataParallel",
      "mmcv's CUDA wrappers scatter onto CUDA streams; the NPU wrappers exist in mmcv>=1.7 (not in the knowledge base: unconfirmed name)"),
    C("model = MMDistributedDataParallel(", "distributed_framework", "replace", True,
      "model = NPUDistributedDataParallel(",
      "see import"),
    C("model.cuda(),", "tensor_to_device", "replace", True,
      "model.npu(),",
      ".cuda() on the model"),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
      "device_ids=[torch.npu.current_device()],",
      "torch.cuda.current_device() raises without CUDA"),
    C("if not torch.cuda.is_available():", "device_type", "replace", False,
      "if not torch.npu.is_available():",
      "only guards an mmcv version assert"),
    C("model = MMDataParallel(model, device_ids=cfg.gpu_ids)", "distributed_framework", "replace", True,
      "model = NPUDataParallel(model.npu(), device_ids=cfg.gpu_ids)",
      "MMDataParallel falls back to CPU when CUDA is unavailable: silent CPU training"),
    C("def init_random_seed(seed=None, device='cuda'):", "device_type", "replace", True,
      "def init_random_seed(seed=None, device='npu'):",
      "default 'cuda' device for the broadcast seed tensor fails in multi-rank runs"),
])
