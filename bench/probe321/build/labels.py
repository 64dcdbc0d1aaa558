"""Labels for probe321: single-object visual tracking (pysot / PyTracking / STARK / OSTrack / MixFormer), CUDA -> Ascend NPU.

One entry per upstream file; one C() per line a careful porter would edit. See ../README.md for the policy.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry point: registers the NPU backend before any npu call; mandatory with torch_npu < 2.5.1 "
               "(e.g. the 2.1.0 line), recommended after (autoload)")

# ---------------------------------------------------------------- pysot / SiamRPN++
E("pysot_train", "tools/train.py", "explicit_replacement",
  "pysot tools/train.py (SiamRPN++ distributed training entry)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "lazy no-op on a CUDA-less torch build; torch.manual_seed above already seeds the registered NPU backend "
      "in torch 2.x (unconfirmed in knowledge), so only for clarity/reproducibility"),
    C("pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',",
      "without CUDA the loader silently stops pinning; naming the npu pin device keeps async H2D copies "
      "(performance only; DataLoader behaviour under torch_npu unconfirmed)"),
    C("model = ModelBuilder().cuda().train()", "tensor_to_device", "replace", True,
      "model = ModelBuilder().npu().train()", ".cuda() fails on a torch build without CUDA"),
  ])

E("pysot_distributed", "pysot/utils/distributed.py", "explicit_replacement",
  "pysot pysot/utils/distributed.py (dist_init / DistModule / average_reduce)", [
    C("tensor = torch.cuda.FloatTensor(1)", "torch_cuda_api", "replace", True,
      "tensor = torch.npu.FloatTensor(1)",
      "legacy CUDA tensor type cannot be constructed without CUDA; HCCL all_reduce needs an NPU tensor"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_gpus = torch.npu.device_count()", "returns 0 on an NPU host, so rank % num_gpus raises ZeroDivisionError"),
    C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(rank % num_gpus)", "CUDA device selection fails without CUDA; each rank must bind its NPU"),
    C("dist.init_process_group(backend='nccl')", "dist_backend", "replace", True,
      "dist.init_process_group(backend='hccl')", "NCCL is not available on Ascend; HCCL is the collective backend"),
  ])

E("pysot_model_builder", "pysot/models/model_builder.py", "explicit_replacement",
  "pysot pysot/models/model_builder.py (ModelBuilder.forward moves the batch itself)", [
    C("template = data['template'].cuda()", "tensor_to_device", "replace", True,
      "template = data['template'].npu()", "training batch is moved inside forward; .cuda() fails without CUDA"),
    C("search = data['search'].cuda()", "tensor_to_device", "replace", True,
      "search = data['search'].npu()", "same as template"),
    C("label_cls = data['label_cls'].cuda()", "tensor_to_device", "replace", True,
      "label_cls = data['label_cls'].npu()", "same as template"),
    C("label_loc = data['label_loc'].cuda()", "tensor_to_device", "replace", True,
      "label_loc = data['label_loc'].npu()", "same as template"),
    C("label_loc_weight = data['label_loc_weight'].cuda()", "tensor_to_device", "replace", True,
      "label_loc_weight = data['label_loc_weight'].npu()", "same as template"),
  ])

E("pysot_loss", "pysot/models/loss.py", "explicit_replacement",
  "pysot pysot/models/loss.py (select_cross_entropy_loss)", [
    C("pos = label.data.eq(1).nonzero().squeeze().cuda()", "tensor_to_device", "replace", True,
      "pos = label.data.eq(1).nonzero().squeeze().npu()",
      "index tensor is pushed to CUDA explicitly; fails on NPU (label is already on the NPU, so dropping the call also works)"),
    C("neg = label.data.eq(0).nonzero().squeeze().cuda()", "tensor_to_device", "replace", True,
      "neg = label.data.eq(0).nonzero().squeeze().npu()", "same as pos"),
  ])

E("pysot_base_tracker", "pysot/tracker/base_tracker.py", "explicit_replacement",
  "pysot pysot/tracker/base_tracker.py (SiameseTracker.get_subwindow)", [
    C("im_patch = im_patch.cuda()", "tensor_to_device", "replace", True, "im_patch = im_patch.npu()",
      "template/search crop is pushed with .cuda() behind cfg.CUDA; fails (or, with cfg.CUDA off, silently runs on CPU)"),
  ])

E("pysot_model_load", "pysot/utils/model_load.py", "explicit_replacement",
  "pysot pysot/utils/model_load.py (load_pretrain / restore_from)", [
    C("=device = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "device = torch.npu.current_device()", "CUDA runtime query raises without CUDA"),
    C("map_location=lambda storage, loc: storage.cuda(device))", "tensor_to_device", "replace", True,
      "map_location='npu:{}'.format(device))",
      "map_location moves every storage with .cuda(); map onto this process' NPU instead"),
    C("cur_device = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "cur_device = torch.npu.current_device()  # resume onto this process' NPU", "same as load_pretrain"),
    C("map_location=lambda storage, loc: storage.cuda(cur_device))", "tensor_to_device", "replace", True,
      "map_location='npu:{}'.format(cur_device))", "same as load_pretrain"),
  ])

E("pysot_test", "tools/test.py", "explicit_replacement",
  "pysot tools/test.py with the SiamBAN/SiamCAR-style --gpu_id flag (VOT restart / OPE evaluation loop)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu_id", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu_id",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime, so every job would land on NPU 0; must be set before "
      "the first device call (exact point at which ACL reads it unconfirmed)"),
    C("model = load_pretrain(model, args.snapshot).cuda().eval()", "tensor_to_device", "replace", True,
      "model = load_pretrain(model, args.snapshot).npu().eval()", ".cuda() fails without CUDA"),
  ])

E("pysot_demo", "tools/demo.py", "explicit_replacement",
  "pysot tools/demo.py (webcam / video demo)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("cfg.CUDA = torch.cuda.is_available() and cfg.CUDA", "torch_cuda_api", "replace", True,
      "cfg.CUDA = torch.npu.is_available() and cfg.CUDA",
      "is False on an NPU host, so the demo silently tracks on CPU (cfg.CUDA then also skips the crop transfer)"),
    C("device = torch.device('cuda' if cfg.CUDA else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if cfg.CUDA else 'cpu')", "'cuda' device string fails on NPU"),
  ])

E("pysot_run_sh", "experiments/siamrpn_r50_l234_dwxcorr_8gpu/run.sh", "explicit_replacement",
  "pysot experiment launcher (torch.distributed.launch train, xargs test, eval, hp_search per GPU)", [
    C("=set -e", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment (LD_LIBRARY_PATH, ASCEND_* paths) must be loaded before torch_npu can be imported"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None,
      "NCCL-only knob, ignored under HCCL; no HCCL counterpart needed on one node"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "NCCL logging knob is a no-op on Ascend; CANN log level is the closest equivalent (cosmetic)"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "ignored on Ascend, but it selects all 8 devices of the node anyway, so the 8 ranks still map to NPU 0-7"),
    C("CUDA_VISIBLE_DEVICES=${gpu} python -u ../../tools/hp_search.py \\", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${gpu} python -u ../../tools/hp_search.py \\",
      "per-worker device pinning is silently lost: all search workers would pile onto NPU 0"),
  ])

# ---------------------------------------------------------------- PyTracking / ltr (ATOM, DiMP, PrDiMP, KYS)
E("ltr_base_trainer", "ltr/trainers/base_trainer.py", "device_branch_or_abstraction",
  "PyTracking ltr/trainers/base_trainer.py (device fallback + checkpointing)", [
    C('self.device = torch.device("cuda:0" if torch.cuda.is_available() and settings.use_gpu else "cpu")',
      "device_type", "add_branch", True,
      'self.device = torch.device("npu:0" if torch.npu.is_available() and settings.use_gpu else '
      '"cuda:0" if torch.cuda.is_available() and settings.use_gpu else "cpu")',
      "default device when settings.device is unset: on an NPU host is_available() is False and training silently "
      "runs on CPU"),
  ])

E("ltr_multigpu", "ltr/admin/multigpu.py", "explicit_replacement",
  "PyTracking ltr/admin/multigpu.py (MultiGPU wrapper over nn.DataParallel)", [
    C("class MultiGPU(nn.DataParallel):", "unsupported_op_workaround", "replace", True,
      "class MultiGPU(nn.parallel.DistributedDataParallel):",
      "torch.nn.DataParallel is listed unsupported on Atlas A2/A3 (replicate/scatter rely on CUDA comm); multi-NPU "
      "training has to go through DDP with one process per NPU"),
  ])

E("ltr_prdimp50_settings", "ltr/train_settings/dimp/prdimp50.py", "explicit_replacement",
  "PyTracking ltr/train_settings/dimp/prdimp50.py (PrDiMP-50 training recipe)", [
    C("settings.device = 'cuda'", "device_type", "replace", True, "settings.device = 'npu'",
      "trainer does actor.to(settings.device) and data.to(settings.device); 'cuda' fails on NPU"),
  ])

PRROI_NOTE = ("PrRoIPool is an nvcc-built kernel; on NPU it has to be re-expressed with torch ops (exact bin integral "
              "via grid_sample/cumsum) or Ascend C. torch_npu.npu_roi_align is only an approximation and gives no "
              "gradient w.r.t. the rois, which IoU-Net box refinement needs at tracking time")

E("prroi_functional", "ltr/external/PreciseRoIPooling/pytorch/prroi_pool/functional.py", "kernel_rewrite",
  "PreciseRoIPooling (vendored in PyTracking ltr/external) prroi_pool/functional.py", [
    C("_prroi_pooling = load_extension(", "custom_cuda_extension", "replace", True,
      "_prroi_pooling = _TorchPrRoIPooling()  # pure-torch kernels, no nvcc on Ascend",
      "torch.utils.cpp_extension.load is unsupported on A2/A3 and there is no nvcc to build the .cu; " + PRROI_NOTE),
    C("[pjoin(root_dir, 'prroi_pooling_gpu.c'), pjoin(root_dir, 'prroi_pooling_gpu_impl.cu')],",
      "custom_cuda_extension", "removal", True, None, "CUDA sources of the JIT build go away with the load() call"),
    C("if features.is_cuda:", "device_type", "replace", True, "if features.is_npu:",
      "is_cuda is False for NPU tensors, so forward falls into the NotImplementedError branch"),
    C("output = _prroi_pooling.prroi_pooling_forward_cuda(features, rois, *params)", "custom_cuda_extension",
      "replace", True, "output = _prroi_pooling.prroi_pooling_forward(features, rois, *params)",
      "call site of the CUDA kernel; " + PRROI_NOTE),
    C("grad_input = _prroi_pooling.prroi_pooling_backward_cuda(", "custom_cuda_extension", "replace", True,
      "grad_input = _prroi_pooling.prroi_pooling_backward(features, rois, output, grad_output, *ctx.params)",
      "feature gradient kernel call site"),
    C("grad_coor = _prroi_pooling.prroi_pooling_coor_backward_cuda(", "custom_cuda_extension", "replace", True,
      "grad_coor = _prroi_pooling.prroi_pooling_coor_backward(features, rois, output, grad_output, *ctx.params)",
      "roi-coordinate gradient kernel call site (used by IoU-Net refinement); no torch_npu op provides it"),
  ])

E("kys_cost_volume", "ltr/models/kys/cost_volume.py", "kernel_rewrite",
  "PyTracking ltr/models/kys/cost_volume.py (KYS cost volume on the spatial-correlation-sampler CUDA op)", [
    C("from spatial_correlation_sampler import SpatialCorrelationSampler", "custom_cuda_extension", "replace", True,
      "from ltr.models.kys.torch_correlation import TorchCorrelation  # unfold-based, runs on NPU",
      "spatial-correlation-sampler is a C++/CUDA extension with only CPU and CUDA kernels; it cannot take NPU tensors"),
    C("self.correlation_layer = SpatialCorrelationSampler(kernel_size, 2 * max_displacement + 1, stride,",
      "custom_cuda_extension", "replace", True,
      "self.correlation_layer = TorchCorrelation(kernel_size, 2 * max_displacement + 1, stride,",
      "construct the pure-torch local correlation (F.pad + unfold + sum) instead of the extension op"),
  ])

E("pytracking_dimp", "pytracking/tracker/dimp/dimp.py", "explicit_replacement",
  "PyTracking pytracking/tracker/dimp/dimp.py (DiMP/PrDiMP online tracker)", [
    C("self.params.device = 'cuda' if self.params.use_gpu else 'cpu'", "device_type", "replace", True,
      "self.params.device = 'npu' if self.params.use_gpu else 'cpu'",
      "default tracker device; every .to(self.params.device) in the tracker follows it, so 'cuda' fails on NPU"),
  ])

E("pytracking_net_wrappers", "pytracking/features/net_wrappers.py", "explicit_replacement",
  "PyTracking pytracking/features/net_wrappers.py (NetWrapper / NetWithBackbone)", [
    C("self.cuda()", "tensor_to_device", "replace", True, "self.npu()",
      "forwards to nn.Module.cuda() of the wrapped net through __getattr__; fails without CUDA"),
    C("im = im.cuda()", "tensor_to_device", "replace", True, "im = im.npu()",
      "every search/template patch is moved with .cuda() before the backbone"),
  ])

E("pytracking_install", "install.sh", "explicit_replacement",
  "PyTracking install.sh (conda env + CUDA 10 pytorch + PrRoIPool ninja + spatial-correlation-sampler)", [
    C("conda install -y pytorch=1.4.0 torchvision=0.5.0 cudatoolkit=10.0 -c pytorch", "torch_cuda_api", "replace",
      True, "pip install torch==2.1.0 torchvision==0.16.0 && pip install torch-npu==2.1.0.post12",
      "CUDA 10 build of torch 1.4 has no torch_npu counterpart; install a torch version that has a torch-npu wheel "
      "(torch x.y.z pairs with torch-npu x.y.z[.postN]) plus the torch-npu pin"),
    C("pip install spatial-correlation-sampler", "custom_cuda_extension", "removal", False, None,
      "CUDA extension package only used by KYS; dead after the pure-torch cost-volume rewrite (whether its build "
      "falls back to CPU-only without nvcc is unconfirmed)"),
  ])

E("ltr_atom_iou_net", "ltr/models/bbreg/atom_iou_net.py", "explicit_replacement",
  "PyTracking ltr/models/bbreg/atom_iou_net.py (ATOM IoU-Net head; consumer of PrRoIPool2D)", [
    # deliberately no labels: device-agnostic (.to(c3_t.device), .to(bb.device)); the CUDA dependency lives in
    # prroi_pool/functional.py, whose rewrite keeps the PrRoIPool2D module interface unchanged.
  ])

# ---------------------------------------------------------------- STARK / OSTrack / MixFormer (lib/ layout)
E("stark_run_training", "lib/train/run_training.py", "explicit_replacement",
  "STARK / OSTrack lib/train/run_training.py (per-process entry started by torch.distributed.launch)", [
    C("=import torch.backends.cudnn", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "lazy no-op without CUDA; torch.manual_seed already seeds the NPU generator in torch 2.x (unconfirmed in knowledge)"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "same as manual_seed"),
    C("dist.init_process_group(backend='nccl')", "dist_backend", "replace", True,
      "dist.init_process_group(backend='hccl')", "NCCL unavailable on Ascend"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "per-rank device binding; torch.cuda.set_device fails without CUDA"),
    C("torch.cuda.set_device(0)", "torch_cuda_api", "replace", True, "torch.npu.set_device(0)",
      "single-process path; same failure"),
  ])

E("stark_train_script", "lib/train/train_script.py", "explicit_replacement",
  "STARK lib/train/train_script.py (build net, DDP wrap, settings.device, LTRTrainer)", [
    C("net.cuda()", "tensor_to_device", "replace", True, "net.npu()", ".cuda() on the model fails without CUDA"),
    C('settings.device = torch.device("cuda:%d" % settings.local_rank)', "device_type", "replace", True,
      'settings.device = torch.device("npu:%d" % settings.local_rank)',
      "trainer moves every batch to settings.device"),
    C('settings.device = torch.device("cuda:0")', "device_type", "replace", True,
      'settings.device = torch.device("npu:0")', "single-process path"),
  ])

AMP_NOTE = ("torch.cuda.amp on a host without CUDA warns and disables itself, so AMP silently turns into fp32 "
            "training; torch_npu.npu.amp provides the same autocast/GradScaler API")

E("ostrack_ltr_trainer", "lib/train/trainers/ltr_trainer.py", "explicit_replacement",
  "OSTrack / STARK lib/train/trainers/ltr_trainer.py (AMP via torch.cuda.amp, wandb, timing prints)", [
    C("from torch.cuda.amp import autocast", "amp", "replace", True, "from torch_npu.npu.amp import autocast",
      AMP_NOTE),
    C("from torch.cuda.amp import GradScaler", "amp", "replace", True, "from torch_npu.npu.amp import GradScaler",
      AMP_NOTE),
  ])

E("stark_head", "lib/models/stark/head.py", "explicit_replacement",
  "STARK lib/models/stark/head.py (Corner_Predictor soft-argmax grids built with .cuda() in __init__)", [
    C("=.view((self.feat_sz * self.feat_sz,)).float().cuda()", "tensor_to_device", "replace", True,
      ".view((self.feat_sz * self.feat_sz,)).float().npu()",
      "coordinate grid is created on CUDA at model construction (plain attribute, not a buffer, so model.to() "
      "does not move it); fails without CUDA"),
    C("self.coord_y = self.indice.repeat((1, self.feat_sz)).view((self.feat_sz * self.feat_sz,)).float().cuda()",
      "tensor_to_device", "replace", True,
      "self.coord_y = self.indice.repeat((1, self.feat_sz)).view((self.feat_sz * self.feat_sz,)).float().npu()",
      "same as coord_x"),
  ])

E("ostrack_tracker", "lib/test/tracker/ostrack.py", "explicit_replacement",
  "OSTrack lib/test/tracker/ostrack.py (one-stream ViT tracker, hann window, candidate elimination)", [
    C("self.network = network.cuda()", "tensor_to_device", "replace", True, "self.network = network.npu()",
      ".cuda() on the tracker network fails without CUDA"),
    C("centered=True).cuda()", "tensor_to_device", "replace", True,
      "self.output_window = hann2d(torch.tensor([self.feat_sz, self.feat_sz]).long(), centered=True).npu()",
      "hann window must live on the same device as the score map it multiplies"),
  ])

E("stark_data_utils", "lib/test/tracker/data_utils.py", "explicit_replacement",
  "STARK / OSTrack lib/test/tracker/data_utils.py (Preprocessor: normalisation constants and patches on CUDA)", [
    C("self.mean = torch.tensor([0.485, 0.456, 0.406]).view((1, 3, 1, 1)).cuda()", "tensor_to_device", "replace",
      True, "self.mean = torch.tensor([0.485, 0.456, 0.406]).view((1, 3, 1, 1)).npu()", ".cuda() fails without CUDA"),
    C("self.std = torch.tensor([0.229, 0.224, 0.225]).view((1, 3, 1, 1)).cuda()", "tensor_to_device", "replace",
      True, "self.std = torch.tensor([0.229, 0.224, 0.225]).view((1, 3, 1, 1)).npu()", "same as mean"),
    C("img_tensor = torch.tensor(img_arr).cuda().float()", "tensor_to_device", "replace", True,
      "img_tensor = torch.tensor(img_arr).npu().float().permute((2, 0, 1)).unsqueeze(dim=0)",
      "every template/search patch is uploaded with .cuda()"),
    C("amask_tensor = torch.from_numpy(amask_arr).to(torch.bool).cuda()", "tensor_to_device", "replace", True,
      "amask_tensor = torch.from_numpy(amask_arr).to(torch.bool).npu().unsqueeze(dim=0)  # (1,H,W)",
      "attention mask of the NestedTensor, same device as the patch"),
    C("def __init__(self, device='cuda'):", "device_type", "replace", True, "def __init__(self, device='npu'):",
      "default device string; callers construct PreprocessorX() without an argument"),
  ])

E("stark_running", "lib/test/evaluation/running.py", "explicit_replacement",
  "STARK / OSTrack lib/test/evaluation/running.py (multi-GPU evaluation with a spawn Pool)", [
    C("torch.cuda.set_device(gpu_id)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu_id)",
      "the failure is swallowed by the bare except, so every pool worker silently tracks on NPU 0 instead of "
      "being spread round-robin"),
  ])

E("stark_misc", "lib/utils/misc.py", "explicit_replacement",
  "STARK lib/utils/misc.py (DETR-derived distributed helpers, MetricLogger, NestedTensor)", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "device_type", "replace", True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
      "HCCL all_reduce needs an NPU tensor; 'cuda' fails (fp64 support of HCCL all_reduce unconfirmed, float32 is the "
      "safe fallback)"),
    C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", "replace", True,
      'tensor = torch.ByteTensor(storage).to("npu")', "pickled payload must be on the NPU for HCCL all_gather"),
    C('local_size = torch.tensor([tensor.numel()], device="cuda")', "device_type", "replace", True,
      'local_size = torch.tensor([tensor.numel()], device="npu")', "same as above"),
    C('size_list = [torch.tensor([0], device="cuda") for _ in range(world_size)]', "device_type", "replace", True,
      'size_list = [torch.tensor([0], device="npu") for _ in range(world_size)]', "receive buffers for all_gather"),
    C('tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="cuda"))', "device_type", "replace",
      True, 'tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="npu"))', "receive buffers"),
    C('padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="cuda")', "device_type",
      "replace", True, 'padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="npu")',
      "padding is concatenated with the NPU payload"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "only chooses the log format; on NPU the 'max mem' column silently disappears"),
    C("if torch.cuda.is_available():  # GPU memory", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():  # device memory is only reported when an accelerator is present",
      "logging branch only; must change together with the format branch above"),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB))",
      "returns 0 without an initialised CUDA context instead of failing; NPU peak memory needs torch.npu"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()", "device_count() is 0 on an NPU host -> ZeroDivisionError (SLURM path)"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "per-rank device binding"),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True, "args.dist_backend = 'hccl'",
      "backend string is passed to init_process_group on the next lines"),
  ])

T2N = "covered at runtime by transfer_to_npu"
E("mixformer_profile", "tracking/profile_model.py", "transfer_to_npu",
  "MixFormer tracking/profile_model.py (thop MACs/params + FPS benchmark, optional fp16)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu; from torch_npu.contrib import transfer_to_npu",
      "one-off benchmark script: the port is the transfer_to_npu import, which redirects torch.cuda.* to "
      "torch_npu.npu and rewrites 'cuda' device strings; the lines below are left as they are"),
    C('device = "cuda:%d" % args.gpu', "device_type", "replace", False, 'device = "npu:%d" % args.gpu',
      T2N + ": the string only reaches set_device and .to(), both of which rewrite cuda -> npu"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", False, "torch.npu.set_device(device)",
      T2N + " (torch.cuda -> torch_npu.npu)"),
    C("torch.cuda.synchronize()  # make sure warm-up", "torch_cuda_api", "replace", False,
      "torch.npu.synchronize()  # make sure warm-up kernels are done", T2N),
    C("torch.cuda.synchronize()  # wait for the async", "torch_cuda_api", "replace", False,
      "torch.npu.synchronize()  # wait for the async kernels before stopping the clock", T2N),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", False, "torch.npu.synchronize()", T2N),
    C("template = template.type(torch.cuda.HalfTensor)", "torch_cuda_api", "replace", False,
      "template = template.half()", T2N + " (HalfTensor is in the aliased torch_npu.npu names)"),
    C("search = search.type(torch.cuda.HalfTensor)", "torch_cuda_api", "replace", False,
      "search = search.half()", T2N),
    C("torch.cuda.max_memory_allocated() / 1024 ** 2", "torch_cuda_api", "replace", False,
      'print("max memory allocated: %.1f MB" % (torch.npu.max_memory_allocated() / 1024 ** 2))', T2N),
  ])

# ---------------------------------------------------------------- environment / packaging files
E("ostrack_env_yaml", "ostrack_cuda113_env.yaml", "explicit_replacement",
  "OSTrack ostrack_cuda113_env.yaml (exported conda env: CUDA 11.3 pytorch 1.10 + pip extras)", [
    C("  - cudatoolkit=11.3.1=h2bc3f7f_2", "torch_cuda_api", "removal", False, None,
      "CUDA runtime only needed by the CUDA pytorch build; dead weight once torch is the CPU build + torch-npu"),
    C("  - pytorch=1.10.0=py3.8_cuda11.3_cudnn8.2.0_0", "torch_cuda_api", "replace", True,
      "  - pytorch=2.1.0=py3.8_cpu_0",
      "CUDA build of torch 1.10, and 1.10 has no torch_npu release; torch_npu sits on a matching CPU torch (2.1.0 here)"),
    C("  - pytorch-mutex=1.0=cuda", "torch_cuda_api", "replace", True, "  - pytorch-mutex=1.0=cpu",
      "the mutex pins the solver to CUDA variants of pytorch/torchvision"),
    C("  - torchaudio=0.10.0=py38_cu113", "torch_cuda_api", "removal", True, None,
      "unused by the tracker; the cu113 build pins torch 1.10 + CUDA and makes the new env unsolvable"),
    C("  - torchvision=0.11.1=py38_cu113", "torch_cuda_api", "replace", True, "  - torchvision=0.16.0=py38_cpu",
      "cu113 build tied to torch 1.10; torchvision must match the torch 2.1.0 ABI"),
    C("  - pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post12",
      "torch-npu pin (wheel version = torch version + .postN; 2.1.0.post12 pairs with CANN 8.1.RC1)"),
    C("    - onnxruntime-gpu==1.10.0", "torch_cuda_api", "replace", False, "    - onnxruntime==1.16.3",
      "only used for the ONNX export check; the CUDA execution provider cannot run on Ascend and onnxruntime-gpu "
      "has no aarch64 wheel (Ascend hosts are often Kunpeng); CPU onnxruntime is enough for the check"),
  ])

E("tracking_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "community Dockerfile for a PyTracking + OSTrack/MixFormer workspace (nvidia/cuda base, cu113 wheels, JIT op pre-build)", [
    C("FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04", "torch_cuda_api", "replace", True,
      "FROM ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
      "CUDA base image; the container needs the CANN toolkit (and the host driver mounted by the Ascend docker "
      "runtime) instead; exact image tag is illustrative"),
    C('ENV TORCH_CUDA_ARCH_LIST="6.0 6.1 7.0 7.5 8.0 8.6+PTX"', "env_var", "removal", False, None,
      "only read by nvcc extension builds; meaningless on Ascend"),
    C('ENV FORCE_CUDA="1"', "env_var", "removal", False, None,
      "forces CUDA extension builds in setup.py files; harmless once the CUDA op builds are gone"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
      "nvidia-container-runtime knob; NPUs are exposed by the Ascend docker runtime (ASCEND_VISIBLE_DEVICES at run time)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "nvidia-container-runtime knob, ignored"),
    C("RUN pip install torch==1.11.0+cu113 torchvision==0.12.0+cu113 \\", "torch_cuda_api", "replace", True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 \\",
      "+cu113 local-version wheels do not exist for the NPU stack (nor for aarch64); torch must match torch-npu"),
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "torch_cuda_api", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; x86 hosts take CPU torch from the /whl/cpu index, aarch64 uses plain PyPI"),
    C("=WORKDIR /workspace", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install torch-npu==2.1.0.post12",
      "torch-npu pin matching torch 2.1.0 (placed once the torch RUN layer is done)"),
    C("_import_prroi_pooling()\"", "custom_cuda_extension", "removal", True, None,
      "pre-builds the PrRoIPool CUDA extension with cpp_extension.load; no nvcc in the image -> docker build fails"),
    C("RUN pip install spatial-correlation-sampler==0.4.0", "custom_cuda_extension", "removal", False, None,
      "CUDA correlation op for KYS, replaced by a pure-torch cost volume (CPU-only fallback build unconfirmed)"),
    C("ENV NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "ENV HCCL_SOCKET_IFNAME=eth0",
      "NCCL knob is ignored by HCCL; HCCL_SOCKET_IFNAME selects the host NIC (in a single-NIC container HCCL's "
      "default pick is usually the same)"),
    C("ENV NCCL_IB_DISABLE=0", "env_var", "removal", False, None, "NCCL-only knob"),
  ])

E("ostrack_base_functions", "lib/train/base_functions.py", "explicit_replacement",
  "OSTrack / STARK lib/train/base_functions.py (datasets, LTRLoader, optimizer/scheduler; optional apex FusedAdam)", [
    C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", True,
      "from torch_npu.optim import NpuFusedAdamW",
      "NVIDIA apex FusedAdam is a CUDA kernel (Ascend apex only ships NpuFused* optimizers); the ImportError is "
      "swallowed, so FUSED_ADAMW configs then die on the assert"),
    C("optimizer = FusedAdam(param_dicts, lr=cfg.TRAIN.LR, adam_w_mode=True,", "fused_optimizer", "replace", True,
      "optimizer = NpuFusedAdamW(param_dicts, lr=cfg.TRAIN.LR,",
      "NpuFusedAdamW(params, lr, betas, eps, weight_decay) is the decoupled-weight-decay fused optimizer on NPU "
      "(no adam_w_mode argument)"),
    C("optimizer = torch.optim.AdamW(param_dicts, lr=cfg.TRAIN.LR,", "fused_optimizer", "replace", False,
      "optimizer = NpuFusedAdamW(param_dicts, lr=cfg.TRAIN.LR,",
      "performance only (msFmkTransplt advice: faster step, more memory); plain AdamW runs on NPU"),
  ])

E("vit_tracker_modern", "lib/models/vittrack/vit_tracker.py", "device_branch_or_abstraction",
  "recent one-stream ViT tracker code (OSTrack descendants such as LoRAT / MixFormerV2 era: flash-attn/SDPA, "
  "torch.compile, bf16 autocast)", [
    C("from flash_attn import flash_attn_func", "attention_kernel", "replace", False,
      "from torch_npu import npu_fusion_attention",
      "flash-attn cannot be installed on NPU; the ImportError is caught and 'auto' falls back to SDPA, which already "
      "dispatches to the NPU flash-attention kernel, so this is only needed to keep an explicit 'flash' path"),
    C("if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8:", "device_capability_check",
      "replace", True, "if torch.npu.is_available() and torch.npu.is_bf16_supported():",
      "on an NPU host the CUDA check is False, so bf16-capable Atlas A2 silently gets fp16; switching only the "
      "namespace is not enough because NPU get_device_capability() returns None (None[0] raises)"),
    C("x = flash_attn_func(q, k, v, dropout_p=self.attn_drop_p if self.training else 0.,", "attention_kernel",
      "replace", False,
      "x = npu_fusion_attention(q, k, v, self.num_heads, 'BSND', keep_prob=1. - (self.attn_drop_p if self.training else 0.),",
      "explicit NPU mapping of the flash path (BSND layout, keep_prob = 1 - dropout, scale=self.scale, output [0]); "
      "unreachable on NPU as long as the import above fails"),
    C("with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=True):",
      "attention_kernel", "replace", False, "with contextlib.nullcontext():",
      "CUDA SDPA backend selector, listed unsupported by Ascend; effect on the NPU SDPA dispatch unconfirmed "
      "(most likely just ignored), so drop it"),
    C('torch.cuda.nvtx.range_push("vit_backbone")', "torch_cuda_api", "replace", True,
      'nvtx_id = torch_npu.npu.mstx.range_start("vit_backbone")',
      "torch.cuda.nvtx is not redirected and raises without a CUDA build when cfg.MODEL.NVTX is on; mstx is the "
      "Ascend counterpart"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True, "torch_npu.npu.mstx.range_end(nvtx_id)",
      "same as range_push"),
    C("device = torch.device('cuda', local_rank)", "device_type", "add_branch", True,
      "device = torch.device('npu', local_rank) if torch.npu.is_available() else torch.device('cuda', local_rank)",
      "model placement; 'cuda' fails on NPU"),
    C("model = torch.compile(model, mode='max-autotune', dynamic=False)", "compile_mode", "replace", False,
      "model = torch.compile(model, backend='npugraphs', dynamic=False)",
      "max-autotune relies on Triton/CUDA-graph autotuning; NPU Inductor support depends on the torch_npu version "
      "(graph mode from 2.6) and npugraphs is the cudagraphs counterpart; benefit and failure mode unconfirmed"),
    C("ctx = torch.autocast(device_type='cuda', dtype=self.amp_dtype)", "amp", "replace", True,
      "ctx = torch.autocast(device_type='npu', dtype=self.amp_dtype) if self.use_amp else contextlib.nullcontext()",
      "autocast for device_type='cuda' is disabled with a warning on an NPU host, so inference silently runs in fp32"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the ported nvtx/mstx lines reference the torch_npu module name directly"),
  ])

E("mixformer_train_sh", "tracking/train_test_mixformer_cvt.sh", "explicit_replacement",
  "MixFormer tracking/train_mixformer_cvt.sh / test scripts (tracking/train.py --nproc_per_node, test --num_gpus)", [
    C("=set -x", "import_torch_npu", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be loaded before torch_npu is imported by the launched processes"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "ignored on Ascend, but it lists every device of the node, so device selection is unchanged"),
    C("export NCCL_DEBUG=INFO", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=1",
      "NCCL log knob is a no-op under HCCL (cosmetic)"),
    C("export NCCL_SOCKET_IFNAME=bond0", "env_var", "replace", True, "export HCCL_SOCKET_IFNAME=bond0",
      "multi-node: without it HCCL picks the first non-docker/non-lo NIC by name, which on these hosts is not the "
      "inter-node bond, so communicator setup to the root can fail"),
    C("export NCCL_IB_HCA=mlx5_0,mlx5_1", "env_var", "removal", False, None,
      "NCCL InfiniBand/RoCE HCA selection; HCCL's parameter plane uses the NPU-integrated RoCE ports configured "
      "with hccn_tool, so there is no counterpart"),
    C("export NCCL_IB_GID_INDEX=3", "env_var", "removal", False, None, "NCCL-only knob"),
    C("CUDA_VISIBLE_DEVICES=3 python tracking/test.py mixformer_cvt_online baseline_got --dataset got10k_test \\",
      "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=3 python tracking/test.py mixformer_cvt_online baseline_got --dataset got10k_test \\",
      "meant to pin the GOT-10k run to device 3; ignored on Ascend, so it lands on NPU 0 and collides with other jobs"),
  ])
