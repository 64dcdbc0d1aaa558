"""Labels for probe412 (lane detection: LaneATT, CLRNet, UFLD, SCNN, CondLaneNet, LaneAF).

One C(...) per upstream line a careful porter edits for an explicit torch_npu port.
`required` = complete-port counterfactual (see README.md "Label policy").
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: load torch_npu before any torch.npu.* / 'npu' device use "
               "(mandatory before torch_npu 2.5.1 autoload, still recommended after)")
RELEASED_CKPT = ("checkpoint released by upstream was saved from CUDA tensors; torch.load without map_location "
                 "raises 'Attempting to deserialize object on a CUDA device' on a host without CUDA")
OWN_CKPT = ("resume of this run's own checkpoint: NPU-saved states load fine without map_location; only a run "
            "started on a GPU box would fail, so performance/robustness only")
MMCV_NPU = ("mmcv's MM(Distributed)DataParallel scatter inputs to CUDA devices; mmcv>=1.7 ships "
            "mmcv.device.npu.NPU(Distributed)DataParallel (API name unconfirmed in knowledge; leaving the CUDA "
            "wrapper is a certain failure)")

# ----------------------------------------------------------------------------------------------
# LaneATT (lucastabelini/LaneATT)
# ----------------------------------------------------------------------------------------------
E("laneatt_main", "main.py", "explicit_replacement", "lucastabelini/LaneATT main.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device('cpu') if not torch.cuda.is_available() or args.cpu else torch.device('cuda')",
      "device_type", "replace", True,
      "device = torch.device('cpu') if not torch.npu.is_available() or args.cpu else torch.device('npu')",
      "torch.cuda.is_available() is False on an NPU host: the run would silently fall back to CPU "
      "(and the CPU path is explicitly unsupported by LaneATT)"),
])

E("laneatt_runner", "lib/runner.py", "explicit_replacement", "lucastabelini/LaneATT lib/runner.py", [])

E("laneatt_model", "lib/models/laneatt.py", "kernel_rewrite", "lucastabelini/LaneATT lib/models/laneatt.py", [
    C("from nms import nms", "custom_cuda_extension", "replace", True,
      "from lib.nms_torch import nms  # pure-PyTorch lane NMS, same (keep, num_to_keep, parent) contract",
      "`nms` is the CUDA-only extension built from lib/nms (nms_kernel.cu); no nvcc on Ascend, so the lane "
      "NMS is re-expressed with torch ops (line-distance IoU is lane specific, torchvision/npu_multiclass_nms "
      "do not fit)"),
    C("anchors_mask = torch.load(anchors_freq_path).cpu()", "tensor_to_device", "replace", True,
      "anchors_mask = torch.load(anchors_freq_path, map_location='cpu').cpu()",
      "the shipped data/*_anchors_freq.pt tensors were saved on CUDA (hence the trailing .cpu()); "
      "deserialising them needs map_location on a CUDA-less host"),
])

E("laneatt_nms_setup", "lib/nms/setup.py", "kernel_rewrite", "lucastabelini/LaneATT lib/nms/setup.py", [
    C("ext_modules=[CUDAExtension(", "custom_cuda_extension", "replace", False,
      "ext_modules=[],  # lane NMS re-implemented in lib/nms_torch.py, nothing to compile",
      "dead once laneatt.py imports the torch NMS; the separate `cd lib/nms; python setup.py install` step "
      "would fail without nvcc/CUDA_HOME, but the program no longer needs it"),
])

E("laneatt_speed", "utils/speed.py", "explicit_replacement", "lucastabelini/LaneATT utils/speed.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')",
      "device_type", "replace", True,
      "device = torch.device('npu') if torch.npu.is_available() else torch.device('cpu')",
      "would silently benchmark on CPU"),
    C("model.load_state_dict(torch.load(args.model_path)['model'])", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(args.model_path, map_location='cpu')['model'])", RELEASED_CKPT),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises on a host without CUDA; NPU execution is asynchronous, the sync is what makes the latency right"),
])

E("laneatt_experiment", "lib/experiment.py", "explicit_replacement", "lucastabelini/LaneATT lib/experiment.py", [
    C("return torch.load(self.get_checkpoint_path(epoch))['model']", "tensor_to_device", "replace", True,
      "return torch.load(self.get_checkpoint_path(epoch), map_location='cpu')['model']",
      "used by `main.py test` on the released experiment zips; " + RELEASED_CKPT),
    C("train_state = torch.load(train_state_path)", "tensor_to_device", "replace", False,
      "train_state = torch.load(train_state_path, map_location='cpu')", OWN_CKPT),
])

E("laneatt_cfg", "cfgs/laneatt_culane_resnet34.yml", "explicit_replacement",
  "lucastabelini/LaneATT cfgs/laneatt_culane_resnet34.yml", [])

# ----------------------------------------------------------------------------------------------
# CLRNet (Turoad/CLRNet)
# ----------------------------------------------------------------------------------------------
E("clrnet_main", "main.py", "explicit_replacement", "Turoad/CLRNet main.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('os.environ["CUDA_VISIBLE_DEVICES"]', "env_var", "replace", True,
      "os.environ[\"ASCEND_RT_VISIBLE_DEVICES\"] = ','.join(str(gpu) for gpu in args.gpus)",
      "user-chosen --gpus would be silently ignored (everything lands on NPU 0); set before the first NPU "
      "call (torch_npu initialises lazily; ordering after `import torch_npu` unconfirmed in knowledge)"),
])

E("clrnet_runner", "clrnet/engine/runner.py", "explicit_replacement", "Turoad/CLRNet clrnet/engine/runner.py", [
    C("from mmcv.parallel import MMDataParallel", "distributed_framework", "replace", True,
      "from mmcv.device.npu import NPUDataParallel", MMCV_NPU),
    C("self.net = MMDataParallel(self.net, device_ids=range(self.cfg.gpus)).cuda()", "distributed_framework",
      "replace", True, "self.net = NPUDataParallel(self.net.npu(), device_ids=range(self.cfg.gpus))",
      ".cuda() fails outright; " + MMCV_NPU),
    C("batch[k] = batch[k].cuda()", "tensor_to_device", "replace", True, "batch[k] = batch[k].npu()",
      "the batch is moved by hand before the wrapper; the method keeps its name to_cuda"),
])

E("clrnet_net_utils", "clrnet/utils/net_utils.py", "explicit_replacement", "Turoad/CLRNet clrnet/utils/net_utils.py", [
    C("pretrained_net = torch.load(model_dir)['net']", "tensor_to_device", "replace", True,
      "pretrained_net = torch.load(model_dir, map_location='cpu')['net']",
      "--finetune_from points at released CLRNet weights; " + RELEASED_CKPT),
    C("pretrained_model = torch.load(model_dir)", "tensor_to_device", "replace", True,
      "pretrained_model = torch.load(model_dir, map_location='cpu')",
      "--load_from is how the released models are evaluated; " + RELEASED_CKPT),
])

E("clrnet_head", "clrnet/models/heads/clr_head.py", "explicit_replacement",
  "Turoad/CLRNet clrnet/models/heads/clr_head.py", [])

E("clrnet_nms", "clrnet/ops/nms.py", "kernel_rewrite", "Turoad/CLRNet clrnet/ops/nms.py", [
    C("from . import nms_impl", "custom_cuda_extension", "replace", True,
      "from .nms_torch import lane_nms_forward",
      "nms_impl is the CUDA extension (csrc/nms_kernel.cu); replaced by a torch-ops lane NMS"),
    C("return nms_impl.nms_forward(boxes, scores, overlap, top_k)", "custom_cuda_extension", "replace", True,
      "return lane_nms_forward(boxes, scores, overlap, top_k)", "call site of the CUDA op"),
])

E("clrnet_setup", "setup.py", "kernel_rewrite", "Turoad/CLRNet setup.py", [
    C("ext_modules=get_extensions(),", "custom_cuda_extension", "replace", True, "ext_modules=[],",
      "CUDAExtension(...) raises without CUDA_HOME inside get_extensions(), so `python setup.py build develop` "
      "(the documented way to install the clrnet package itself) fails on an NPU host"),
])

E("clrnet_cfg", "configs/clrnet/clr_resnet34_culane.py", "explicit_replacement",
  "Turoad/CLRNet configs/clrnet/resnet34_culane.py", [])

# ----------------------------------------------------------------------------------------------
# Ultra-Fast-Lane-Detection (cfzd/Ultra-Fast-Lane-Detection, v1 + v2 DALI loader)
# ----------------------------------------------------------------------------------------------
E("ufld_train", "train.py", "explicit_replacement", "cfzd/Ultra-Fast-Lane-Detection train.py", [
    C("=import torch, os, datetime", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("img, cls_label, seg_label = img.cuda(), cls_label.long().cuda(), seg_label.long().cuda()",
      "tensor_to_device", "replace", True,
      "img, cls_label, seg_label = img.npu(), cls_label.long().npu(), seg_label.long().npu()", "aux branch"),
    C("img, cls_label = img.cuda(), cls_label.long().cuda()", "tensor_to_device", "replace", True,
      "img, cls_label = img.npu(), cls_label.long().npu()", "no-aux branch"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "per-rank device binding"),
    C("torch.distributed.init_process_group(backend='nccl', init_method='env://')", "dist_backend", "replace", True,
      "torch.distributed.init_process_group(backend='hccl', init_method='env://')", "NCCL does not exist on Ascend"),
    C("use_aux=cfg.use_aux).cuda()", "tensor_to_device", "replace", True, "use_aux=cfg.use_aux).npu()",
      "model placement (second line of the parsingNet(...) call)"),
    C("state_all = torch.load(cfg.finetune)['model']", "tensor_to_device", "replace", True,
      "state_all = torch.load(cfg.finetune, map_location='cpu')['model']",
      "finetune starts from released UFLD models; " + RELEASED_CKPT),
])

E("ufld_dist_utils", "utils/dist_utils.py", "explicit_replacement", "cfzd/Ultra-Fast-Lane-Detection utils/dist_utils.py", [
    C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", "replace", True,
      'tensor = torch.ByteTensor(storage).to("npu")', "HCCL all_gather needs NPU tensors"),
    C('local_size = torch.LongTensor([tensor.numel()]).to("cuda")', "tensor_to_device", "replace", True,
      'local_size = torch.LongTensor([tensor.numel()]).to("npu")', "HCCL all_gather needs NPU tensors"),
    C('size_list = [torch.LongTensor([0]).to("cuda") for _ in range(world_size)]', "tensor_to_device", "replace",
      True, 'size_list = [torch.LongTensor([0]).to("npu") for _ in range(world_size)]',
      "HCCL all_gather needs NPU tensors"),
    C('tensor_list.append(torch.ByteTensor(size=(max_size,)).to("cuda"))', "tensor_to_device", "replace", True,
      'tensor_list.append(torch.ByteTensor(size=(max_size,)).to("npu"))', "receive buffers"),
    C('padding = torch.ByteTensor(size=(max_size - local_size,)).to("cuda")', "tensor_to_device", "replace", True,
      'padding = torch.ByteTensor(size=(max_size - local_size,)).to("npu")', "must match the device of `tensor`"),
])

E("ufld_speed", "speed_simple.py", "explicit_replacement", "cfzd/Ultra-Fast-Lane-Detection speed_simple.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("=net = parsingNet(pretrained=False, backbone='18', cls_dim=(100 + 1, 56, 4), use_aux=False).cuda()",
      "tensor_to_device", "replace", True,
      "net = parsingNet(pretrained=False, backbone='18', cls_dim=(100 + 1, 56, 4), use_aux=False).npu()",
      "the commented-out variant below it is left alone"),
    C("x = torch.zeros((1, 3, 288, 800)).cuda() + 1", "tensor_to_device", "replace", True,
      "x = torch.zeros((1, 3, 288, 800)).npu() + 1", "benchmark input"),
])

E("ufld_demo", "demo.py", "explicit_replacement", "cfzd/Ultra-Fast-Lane-Detection demo.py", [
    C("=import torch, os, cv2", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("use_aux=False).cuda()  # we dont need auxiliary segmentation in testing", "tensor_to_device", "replace", True,
      "use_aux=False).npu()  # we dont need auxiliary segmentation in testing", "model placement"),
    C("imgs = imgs.cuda()", "tensor_to_device", "replace", True, "imgs = imgs.npu()", "input placement"),
])

E("ufld_dali", "data/dali_data.py", "kernel_rewrite", "cfzd/Ultra-Fast-Lane-Detection (v2) data/dali_data.py", [
    C("=import my_interp", "custom_cuda_extension", "replace", True,
      "from data import interp_torch as my_interp  # torch re-implementation of my_interp.run",
      "my_interp is UFLDv2's CUDA extension (my_interp/setup.py, .cu kernel) for lane-point interpolation"),
    C("pipe = Pipeline(batch_size, num_threads, device_id)", "device_type", "replace", True,
      "pipe = Pipeline(batch_size, num_threads, None)  # CPU-only DALI pipeline (no CUDA device on Ascend)",
      "a DALI GPU pipeline needs a CUDA device; CPU-only mode via device_id=None (availability of DALI wheels "
      "on aarch64 Ascend hosts unconfirmed; the alternative is a torch Dataset)"),
    C('images = fn.decoders.image(jpegs, device="mixed")', "device_type", "replace", True,
      'images = fn.decoders.image(jpegs, device="cpu")', "'mixed' = nvJPEG on the GPU"),
    C('seg_images = fn.decoders.image(seg_images, device="mixed")', "device_type", "replace", True,
      'seg_images = fn.decoders.image(seg_images, device="cpu")', "'mixed' = nvJPEG on the GPU"),
    C("labels = fn.coord_transform(labels.gpu(), MT=mt)", "tensor_to_device", "replace", True,
      "labels = fn.coord_transform(labels, MT=mt)", "DataNode.gpu() copies to the CUDA device"),
    C("self.interp_loc_row = torch.tensor(row_anchor, dtype=torch.float32).cuda() * self.original_image_height",
      "tensor_to_device", "replace", True,
      "self.interp_loc_row = torch.tensor(row_anchor, dtype=torch.float32).npu() * self.original_image_height",
      "interpolation runs on the NPU next to the points"),
    C("self.interp_loc_col = torch.tensor(col_anchor, dtype=torch.float32).cuda() * self.original_image_width",
      "tensor_to_device", "replace", True,
      "self.interp_loc_col = torch.tensor(col_anchor, dtype=torch.float32).npu() * self.original_image_width",
      "interpolation runs on the NPU next to the points"),
    C("images = data[0]['images']", "tensor_to_device", "replace", True,
      "images = data[0]['images'].npu(non_blocking=True)",
      "upstream relies on DALI handing back CUDA tensors (train.py never moves them); with a CPU pipeline the "
      "batch must be moved here"),
    C("seg_images = data[0]['seg_images']", "tensor_to_device", "replace", True,
      "seg_images = data[0]['seg_images'].npu(non_blocking=True)", "same as images"),
    C("points = data[0]['points']", "tensor_to_device", "replace", True, "points = data[0]['points'].npu()",
      "labels are derived from the points on device"),
])

E("ufld_launch", "scripts/train_culane.sh", "explicit_replacement",
  "cfzd/Ultra-Fast-Lane-Detection multi-GPU launch recipe (README) as a script", [
    C("=set -e", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment (libascendcl, op libs) must be sourced before python imports torch_npu; a bare host "
      "does not do it by itself"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "ignored on NPU; with these default values and 4 local ranks the ranks land on NPU 0-3 anyway, so only an "
      "edited selection would go wrong"),
])

E("ufld_cfg", "configs/culane.py", "explicit_replacement", "cfzd/Ultra-Fast-Lane-Detection configs/culane.py", [])

# ----------------------------------------------------------------------------------------------
# SCNN (harryhan618/SCNN_Pytorch)
# ----------------------------------------------------------------------------------------------
E("scnn_train", "train.py", "explicit_replacement", "harryhan618/SCNN_Pytorch train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("net = torch.nn.DataParallel(net)", "distributed_framework", "removal", True, None,
      "torch.nn.DataParallel is unsupported on Ascend (✘ in the 2.7.1 API list); the isinstance(net, "
      "DataParallel) guards keep the rest working on one NPU (DDP+HCCL for several)"),
    C("save_dict = torch.load(os.path.join(exp_dir, exp_name + '.pth'))", "tensor_to_device", "replace", False,
      "save_dict = torch.load(os.path.join(exp_dir, exp_name + '.pth'), map_location='cpu')", OWN_CKPT),
])

E("scnn_cfg", "experiments/exp10/cfg.json", "explicit_replacement", "harryhan618/SCNN_Pytorch experiments/exp10/cfg.json", [
    C('"device": "cuda:0",', "device_type", "replace", True, '"device": "npu:0",',
      "train.py builds torch.device(exp_cfg['device']) from this value"),
])

E("scnn_test", "test_CULane.py", "explicit_replacement", "harryhan618/SCNN_Pytorch test_CULane.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
      "test script hard-codes the device instead of reading cfg.json"),
    C("net = torch.nn.DataParallel(net.to(device))", "distributed_framework", "replace", True,
      "net = net.to(device)", "DataParallel ✘ on Ascend; net(img)[:2] works on the bare module"),
])

E("scnn_model", "model.py", "explicit_replacement", "harryhan618/SCNN_Pytorch model.py", [])

# ----------------------------------------------------------------------------------------------
# CondLaneNet (aliyun/conditional-lane-detection, mmdet 2.0 fork)
# ----------------------------------------------------------------------------------------------
E("condlane_train", "tools/train.py", "explicit_replacement", "aliyun/conditional-lane-detection tools/train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("init_dist(args.launcher, **cfg.dist_params)", "distributed_framework", "replace", True,
      "torch.npu.set_device(int(os.environ['LOCAL_RANK'])); torch.distributed.init_process_group(**cfg.dist_params)",
      "mmcv's _init_dist_pytorch does torch.cuda.set_device(rank % torch.cuda.device_count()): device_count() "
      "is 0 on an NPU host -> ZeroDivisionError; no CUDA token on this line"),
])

E("condlane_apis", "mmdet/apis/train.py", "explicit_replacement", "aliyun/conditional-lane-detection mmdet/apis/train.py", [
    C("from mmcv.parallel import MMDataParallel, MMDistributedDataParallel", "distributed_framework", "replace", True,
      "from mmcv.device.npu import NPUDataParallel, NPUDistributedDataParallel", MMCV_NPU),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "torch.manual_seed on the line above already seeds every registered device on recent torch (privateuse1 "
      "seeding unconfirmed in knowledge); the cuda call is a silent no-op on NPU hosts"),
    C("model = MMDistributedDataParallel(", "distributed_framework", "replace", True,
      "model = NPUDistributedDataParallel(", MMCV_NPU),
    C("=model.cuda(),", "tensor_to_device", "replace", True, "model.npu(),", "DDP branch model placement"),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
      "device_ids=[torch.npu.current_device()],", "raises on a CUDA-less host"),
    C("model = MMDataParallel(", "distributed_framework", "replace", True, "model = NPUDataParallel(", MMCV_NPU),
    C("model.cuda(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "tensor_to_device", "replace", True,
      "model.npu(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "single-device branch model placement"),
])

E("condlane_cfg", "configs/condlanenet/culane/culane_small_train.py", "explicit_replacement",
  "aliyun/conditional-lane-detection configs/condlanenet/culane/culane_small_train.py", [
    C("location_configs=dict(size=(1, 1, 80, 200), device='cuda:0')),", "device_type", "replace", True,
      "location_configs=dict(size=(1, 1, 80, 200), device='npu:0')),",
      "CondLaneHead pre-computes its coordinate maps on this device at build time"),
    C("dist_params = dict(backend='nccl')", "dist_backend", "replace", True, "dist_params = dict(backend='hccl')",
      "flows into init_process_group"),
])

E("condlane_detector", "mmdet/models/detectors/condlanenet.py", "explicit_replacement",
  "aliyun/conditional-lane-detection mmdet/models/detectors/condlanenet.py", [
    C("output = self.backbone(img.type(torch.cuda.FloatTensor))", "tensor_to_device", "replace", True,
      "output = self.backbone(img.float())",
      "type(torch.cuda.FloatTensor) casts *and* moves to CUDA; img is already on the NPU, only the dtype matters"),
    C("feats = self.backbone(img.type(torch.cuda.FloatTensor))", "tensor_to_device", "replace", True,
      "feats = self.backbone(img.float())", "same cast in the test path"),
])

E("condlane_test", "tools/condlanenet/culane/test_culane.py", "explicit_replacement",
  "aliyun/conditional-lane-detection tools/condlanenet/culane/test_culane.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("from mmcv.parallel import MMDataParallel", "distributed_framework", "replace", True,
      "from mmcv.device.npu import NPUDataParallel", MMCV_NPU),
    C("model = MMDataParallel(model, device_ids=[0])", "distributed_framework", "replace", True,
      "model = NPUDataParallel(model.npu(), device_ids=[0])", MMCV_NPU),
])

E("condlane_docker", "docker/Dockerfile", "explicit_replacement", "aliyun/conditional-lane-detection docker/Dockerfile", [
    C("FROM pytorch/pytorch:", "env_var", "replace", True,
      "FROM ascendai/pytorch:2.1.0-ubuntu22.04  # CANN + torch_npu base (tag per the torch_npu/CANN matrix)",
      "the CUDA devel image has neither CANN nor torch_npu; exact Ascend image tag unconfirmed"),
    C('ENV TORCH_CUDA_ARCH_LIST="6.0 6.1 7.0+PTX"', "env_var", "removal", False, None,
      "inert without nvcc; removed for hygiene"),
    C('ENV TORCH_NVCC_FLAGS="-Xfatbin -compress-all"', "env_var", "removal", False, None,
      "inert without nvcc; removed for hygiene"),
    C("RUN pip install mmcv==0.5.6", "distributed_framework", "replace", False,
      "RUN pip install mmcv-full==1.7.2",
      "only needed for the mmcv.device.npu wrappers chosen above; version and compatibility of this mmdet-2.0 "
      "fork with mmcv 1.7 unconfirmed"),
    C('ENV FORCE_CUDA="1"', "env_var", "removal", True, None,
      "forces mmdet's make_cuda_ext to CUDAExtension -> `pip install -e .` fails without nvcc; without it "
      "setup.py falls back to CppExtension (ops unused by CondLaneNet)"),
])

# ----------------------------------------------------------------------------------------------
# LaneAF (sel118/LaneAF)
# ----------------------------------------------------------------------------------------------
E("laneaf_train", "train_culane.py", "device_branch_or_abstraction", "sel118/LaneAF train_culane.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("args.cuda = not args.no_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "args.cuda = not args.no_cuda and torch.npu.is_available()",
      "the flag gates every device move; False on an NPU host -> silent CPU training"),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)",
      "torch.manual_seed just above already seeds registered devices on recent torch (unconfirmed in "
      "knowledge); silent no-op otherwise"),
    C("input_img = input_img.cuda()", "tensor_to_device", "replace", True, "input_img = input_img.npu()", "train batch"),
    C("input_seg = input_seg.cuda()", "tensor_to_device", "replace", True, "input_seg = input_seg.npu()", "train batch"),
    C("input_mask = input_mask.cuda()", "tensor_to_device", "replace", True, "input_mask = input_mask.npu()",
      "train batch"),
    C("input_af = input_af.cuda()", "tensor_to_device", "replace", True, "input_af = input_af.npu()", "train batch"),
    C("input_img, input_seg, input_mask, input_af = input_img.cuda(), input_seg.cuda(), input_mask.cuda(), input_af.cuda()",
      "tensor_to_device", "replace", True,
      "input_img, input_seg, input_mask, input_af = input_img.npu(), input_seg.npu(), input_mask.npu(), input_af.npu()",
      "val batch"),
    C("model.load_state_dict(torch.load(args.snapshot), strict=True)", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(args.snapshot, map_location='cpu'), strict=True)",
      "--snapshot = released LaneAF weights; " + RELEASED_CKPT),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "model placement"),
    C("criterion_1 = torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor([9.6]).cuda())", "tensor_to_device",
      "replace", True, "criterion_1 = torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor([9.6]).npu())",
      "loss weight tensor must live with the logits"),
])

E("laneaf_infer", "infer_culane.py", "device_branch_or_abstraction", "sel118/LaneAF infer_culane.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("args.cuda = not args.no_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "args.cuda = not args.no_cuda and torch.npu.is_available()", "silent CPU inference otherwise"),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)",
      "inference only; no randomness on device; silent no-op"),
    C("input_img = input_img.cuda()", "tensor_to_device", "replace", True, "input_img = input_img.npu()", "input"),
    C("model.load_state_dict(torch.load(args.snapshot), strict=True)", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(args.snapshot, map_location='cpu'), strict=True)", RELEASED_CKPT),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "model placement"),
])

E("laneaf_dla", "models/dla/pose_dla_dcn.py", "kernel_rewrite", "sel118/LaneAF models/dla/pose_dla_dcn.py (from CenterNet)", [
    C("from .DCNv2.dcn_v2 import DCN", "custom_cuda_extension", "replace", True,
      "from torch_npu.contrib.module import ModulatedDeformConv as DCN",
      "DCNv2 is a CUDA extension (make.sh/setup.py raise 'Cuda is not available'); torch_npu.contrib.module "
      "provides DCNv2/ModulatedDeformConv (knowledge §5); keyword compatibility with DCN(chi, cho, "
      "kernel_size=(3,3), ..., deformable_groups=1) unconfirmed"),
])
