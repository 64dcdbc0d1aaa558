"""Labels for probe439 (remote-sensing change detection). One C(...) per line a careful porter edits."""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("explicit port: load the torch_npu backend in the entry script before any torch.npu call; "
               "mandatory for torch_npu < 2.5.1 (the 2.1.0 line an old CD code base lands on), autoloaded afterwards")

# ---------------------------------------------------------------- BIT_CD (justchenhao/BIT_CD)
E("bit_main", "main_cd.py", "explicit_replacement", "justchenhao/BIT_CD main_cd.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("print(torch.cuda.is_available())", "torch_cuda_api", "replace", False,
      "print(torch.npu.is_available())", "diagnostic print at import time; prints False on an NPU host but nothing depends on it"),
])
E("bit_utils", "utils.py", "explicit_replacement", "justchenhao/BIT_CD utils.py (get_loaders / get_device)", [
    C("torch.cuda.set_device(args.gpu_ids[0])", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu_ids[0])", "torch.cuda.set_device raises without a CUDA driver; --gpu_ids now selects NPU ids"),
])
E("bit_trainer", "models/trainer.py", "explicit_replacement", "justchenhao/BIT_CD models/trainer.py (CDTrainer)", [
    C('self.device = torch.device("cuda:%s"', "device_type", "replace", True,
      'self.device = torch.device("npu:%s" % args.gpu_ids[0] if torch.npu.is_available() and len(args.gpu_ids)>0',
      "cuda-guarded device choice silently falls back to CPU on an NPU host while the net sits on npu:0 -> device mismatch; "
      "map_location=self.device and every .to(self.device) then follow this line"),
])
E("bit_evaluator", "models/evaluator.py", "explicit_replacement", "justchenhao/BIT_CD models/evaluator.py (CDEvaluator)", [
    C('self.device = torch.device("cuda:%s"', "device_type", "replace", True,
      'self.device = torch.device("npu:%s" % args.gpu_ids[0] if torch.npu.is_available() and len(args.gpu_ids)>0',
      "same device selection as the trainer; the commented-out module-level cuda device above is left alone"),
])
E("bit_networks", "models/networks.py", "explicit_replacement", "justchenhao/BIT_CD models/networks.py (init_net / define_G / BASE_Transformer)", [
    C("assert(torch.cuda.is_available())", "torch_cuda_api", "replace", True,
      "assert(torch.npu.is_available())", "assertion fails on every NPU host"),
    C("net.to(gpu_ids[0])", "tensor_to_device", "replace", True,
      "net.to(f'npu:{gpu_ids[0]}')", "an int device in Module.to means a CUDA ordinal; must name the npu device"),
    C("net = torch.nn.DataParallel(net, gpu_ids)", "distributed_framework", "replace", True,
      "print('torch.nn.DataParallel is not supported on NPU; running on npu:%d only' % gpu_ids[0])",
      "torch.nn.DataParallel is marked unsupported in Ascend's 2.7.1 API list; only reached with several --gpu_ids "
      "(documented usage '0,1'); a real multi-card port needs DDP + hccl, here the line becomes a single-card fallback "
      "(cannot simply delete it: it is the only statement of its if-block)"),
])
E("bit_run_sh", "scripts/run_cd.sh", "explicit_replacement", "justchenhao/BIT_CD scripts/run_cd.sh", [])

# ---------------------------------------------------------------- ChangeFormer (wgcban/ChangeFormer)
E("cf_trainer", "models/trainer.py", "explicit_replacement", "wgcban/ChangeFormer models/trainer.py (multi-scale CDTrainer)", [
    C('self.device = torch.device("cuda:%s"', "device_type", "replace", True,
      'self.device = torch.device("npu:%s" % args.gpu_ids[0] if torch.npu.is_available() and len(args.gpu_ids)>0',
      "CPU fallback on NPU host otherwise"),
    C("weights = 1-torch.from_numpy(alpha).cuda()", "tensor_to_device", "replace", True,
      "weights = 1-torch.from_numpy(alpha).float().npu()",
      ".cuda() raises on an NPU host (miou loss path); also cast the float64 numpy weights to fp32, fp64 being poorly "
      "supported on NPU (transfer_to_npu maps DoubleTensor to FloatTensor)"),
    C("self._pxl_loss = mIoULoss(weight=weights, size_average=True, n_classes=args.n_class).cuda()", "tensor_to_device", "replace", False,
      "self._pxl_loss = mIoULoss(weight=weights, size_average=True, n_classes=args.n_class).npu()",
      "mIoULoss registers no parameters or buffers, so Module.cuda() touches no tensor and does not fail; edited for consistency only"),
    C("self._pxl_loss = mmIoULoss(n_classes=args.n_class).cuda()", "tensor_to_device", "replace", False,
      "self._pxl_loss = mmIoULoss(n_classes=args.n_class).npu()",
      "parameter-less module, .cuda() is a no-op; consistency edit"),
    C("self.net_G.load_state_dict(torch.load(self.args.pretrain), strict=False)", "device_type", "replace", False,
      "self.net_G.load_state_dict(torch.load(self.args.pretrain, map_location='cpu'), strict=False)",
      "no map_location: fails only if the SegFormer .pth holds CUDA tensors; mmseg-style checkpoints are usually saved "
      "CPU-side (unconfirmed for the released file), so defensive"),
])
E("cf_losses", "models/losses.py", "explicit_replacement", "wgcban/ChangeFormer models/losses.py (CE / Focal / mIoU losses)", [])
E("cf_model", "models/ChangeFormer.py", "explicit_replacement", "wgcban/ChangeFormer models/ChangeFormer.py (ChangeFormerV6)", [])
E("cf_run_sh", "scripts/run_ChangeFormer_DSIFN.sh", "explicit_replacement", "wgcban/ChangeFormer scripts/run_ChangeFormer_DSIFN.sh", [
    C("CUDA_VISIBLE_DEVICES=1 python main_cd.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=1 python main_cd.py --img_size ${img_size} --loss ${loss} --checkpoint_root ${checkpoint_root} --vis_root ${vis_root} --lr_policy ${lr_policy} --optimizer ${optimizer} --pretrain ${pretrain} --split ${split} --split_val ${split_val} --net_G ${net_G} --multi_scale_train ${multi_scale_train} --multi_scale_infer ${multi_scale_infer} --gpu_ids ${gpus} --max_epochs ${max_epochs} --project_name ${project_name} --batch_size ${batch_size} --shuffle_AB ${shuffle_AB} --data_name ${data_name}  --lr ${lr} --embed_dim ${embed_dim}",
      "CUDA_VISIBLE_DEVICES is ignored by the NPU runtime; with --gpu_ids 0 the run would silently land on physical card 0 "
      "instead of the reserved card 1"),
])
E("cf_requirements", "requirements.txt", "explicit_replacement", "wgcban/ChangeFormer requirements (py3.8 / torch 1.8.1+cu111)", [
    C("torch==1.8.1+cu111", "import_torch_npu", "replace", True, "torch==2.1.0",
      "+cu111 local-version wheels do not exist for an aarch64 Ascend host and torch 1.8.1 has no current torch_npu pairing; "
      "2.1.0 still supports Python 3.8"),
    C("torchvision==0.9.1+cu111", "import_torch_npu", "replace", True, "torchvision==0.16.0",
      "must match the new torch (torchvision 0.16 pairs with torch 2.1); the cu111 wheel is not installable"),
    C("einops==0.3.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "torch_npu wheel = torch version + .postN (2.1.0.post12 <-> CANN 8.1.RC1 in the compatibility matrix)"),
])
E("cf_demo", "demo_LEVIR.py", "explicit_replacement", "wgcban/ChangeFormer demo_LEVIR.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda:%s" % args.gpu_ids[0]', "device_type", "replace", False,
      'device = torch.device("npu:%s" % args.gpu_ids[0]',
      "the demo computes this device but never uses it (CDEvaluator picks its own); edited for consistency"),
    C("if torch.cuda.is_available() and len(args.gpu_ids)>0", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available() and len(args.gpu_ids)>0", "second line of the same unused expression"),
])

# ---------------------------------------------------------------- SNUNet-CD (likyoo/Siam-NestedUNet)
E("snunet_train", "train.py", "explicit_replacement", "likyoo/Siam-NestedUNet train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("dev = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "dev = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "module-level device global; unported it silently trains on CPU"),
    C("logging.info('GPU AVAILABLE? ' + str(torch.cuda.is_available()))", "torch_cuda_api", "replace", False,
      "logging.info('NPU AVAILABLE? ' + str(torch.npu.is_available()))", "log line only"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "torch.cuda.manual_seed is queued lazily and does not raise without CUDA; torch.manual_seed two lines above already "
      "seeds the accelerator generators (that it covers the PrivateUse1/NPU generator is unconfirmed in the knowledge base)"),
])
E("snunet_eval", "eval.py", "explicit_replacement", "likyoo/Siam-NestedUNet eval.py", [
    C("=import torch.utils.data", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("dev = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "dev = torch.device('npu:0' if torch.npu.is_available() else 'cpu')", "CPU fallback otherwise"),
    C("model = torch.load(path)", "device_type", "replace", True,
      "model = torch.load(path, map_location='cpu'); model = getattr(model, 'module', model).to(dev)",
      "weights/snunet-32.pt is the authors' released full-model pickle, written on GPU and wrapped in nn.DataParallel: "
      "without map_location deserialisation needs CUDA, and the DataParallel wrapper (unsupported on NPU, checks "
      "cuda:0 placement in forward) has to be peeled off"),
])
E("snunet_helpers", "utils/helpers.py", "explicit_replacement", "likyoo/Siam-NestedUNet utils/helpers.py (load_model / get_loaders)", [
    C("model = nn.DataParallel(model, device_ids=device_ids)", "distributed_framework", "removal", True, None,
      "nn.DataParallel is unsupported on NPU (Ascend API list); even with num_gpus=1 its scatter path is CUDA-only"),
])
E("snunet_models", "models/Models.py", "explicit_replacement", "likyoo/Siam-NestedUNet models/Models.py (SNUNet_ECAM)", [])
E("snunet_metadata", "metadata.json", "explicit_replacement", "likyoo/Siam-NestedUNet utils/metadata.json", [])

# ---------------------------------------------------------------- Open-CD (likyoo/open-cd, MMSegmentation 1.x / MMEngine)
E("ocd_train", "tools/train.py", "device_branch_or_abstraction", "likyoo/open-cd tools/train.py (MMEngine Runner)", [])
E("ocd_dist_train", "tools/dist_train.sh", "device_branch_or_abstraction", "likyoo/open-cd tools/dist_train.sh", [
    C("=CONFIG=$1", "env_var", "npu_only_addition", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment for the launched workers; usually already sourced by the container/profile, so not strictly required"),
])
E("ocd_slurm_train", "tools/slurm_train.sh", "device_branch_or_abstraction", "likyoo/open-cd tools/slurm_train.sh", [
    C("--gres=gpu:${GPUS_PER_NODE}", "distributed_framework", "replace", False, "--gres=npu:${GPUS_PER_NODE} \\",
      "Slurm generic-resource name is site configuration; 'npu' is the common choice on Ascend clusters (unconfirmed)"),
])
E("ocd_runtime_cfg", "configs/_base_/default_runtime.py", "device_branch_or_abstraction", "likyoo/open-cd configs/_base_/default_runtime.py", [
    C("dist_cfg=dict(backend='nccl'),", "dist_backend", "replace", False, "dist_cfg=dict(backend='hccl'),",
      "MMEngine's pytorch launcher initialises hccl itself when an NPU is available and ignores this value "
      "(MMEngine behaviour, unconfirmed in the knowledge base); edited so the config states the truth"),
])
E("ocd_changer_cfg", "configs/changer/changer_ex_r18_512x512_40k_levircd.py", "device_branch_or_abstraction",
  "likyoo/open-cd configs/changer/changer_ex_r18_512x512_40k_levircd.py", [])
E("ocd_benchmark", "tools/analysis_tools/benchmark.py", "explicit_replacement", "likyoo/open-cd tools/analysis_tools/benchmark.py (mmseg FPS benchmark)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "the script calls torch.npu directly after the port, but importing mmengine already pulls torch_npu in on NPU hosts "
      "(mmengine.device; unconfirmed in the knowledge base)"),
    C("if not args.cpu_only and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if not args.cpu_only and torch.npu.is_available():",
      "unported the benchmark silently measures CPU FPS on an NPU host"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "move the model to the NPU"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "guard of the timing sync; unported the sync is skipped and wall-clock numbers only time the asynchronous launch"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "needed for honest timing of asynchronously queued NPU kernels"),
    C("peak_mb = torch.cuda.max_memory_allocated() / 1024**2", "torch_cuda_api", "replace", False,
      "peak_mb = torch.npu.max_memory_allocated() / 1024**2",
      "reports 0 MB without CUDA instead of failing; printed statistic only"),
])
E("ocd_inference", "opencd/apis/inference.py", "device_branch_or_abstraction", "likyoo/open-cd opencd/apis/inference.py (init_model / inference_model)", [
    C("device: str = 'cuda:0',", "device_type", "replace", True, "device: str = 'npu:0',",
      "default device of the public API; callers that rely on it (OpenCD notebooks, scripts) fail on an NPU host"),
])
E("ocd_image_demo", "demo/image_demo.py", "device_branch_or_abstraction", "likyoo/open-cd demo/image_demo.py", [
    C("'--device', default='cuda:0'", "device_type", "replace", True,
      "'--device', default='npu:0', help='Device used for inference')", "CLI default device"),
])
E("ocd_changer_head", "opencd/models/decode_heads/changer.py", "device_branch_or_abstraction",
  "likyoo/open-cd opencd/models/decode_heads/changer.py (Changer head, FDAF flow warp)", [])
E("ocd_dockerfile", "docker/Dockerfile", "explicit_replacement", "likyoo/open-cd docker/Dockerfile (mmseg-style)", [
    C("FROM pytorch/pytorch:", "import_torch_npu", "replace", True, "FROM ascendai/pytorch:2.1.0",
      "the CUDA devel image has neither CANN nor torch_npu; needs an Ascend base image carrying CANN + torch/torch_npu "
      "(image name illustrative)"),
    C("ENV TORCH_CUDA_ARCH_LIST=", "env_var", "removal", False, None, "nvcc arch list; inert without nvcc"),
    C("ENV TORCH_NVCC_FLAGS=", "env_var", "removal", False, None, "inert without nvcc"),
    C('mim install --no-cache-dir mmcv==${MMCV}', "custom_cuda_extension", "replace", False,
      'RUN ["/bin/bash", "-c", "MMCV_WITH_OPS=1 FORCE_NPU=1 pip install --no-cache-dir mmcv==${MMCV}"]',
      "mmcv's compiled ops need the NPU build; the Changer recipe itself uses only torch ops, so only models that hit "
      "mmcv.ops need it (FORCE_NPU build flag from mmcv docs, unconfirmed in the knowledge base)"),
    C('ENV FORCE_CUDA="1"', "env_var", "removal", False, None,
      "Open-CD itself builds no extension, so the flag is inert"),
])
E("ocd_mminstall", "requirements/mminstall.txt", "explicit_replacement", "likyoo/open-cd requirements/mminstall.txt", [])

# ---------------------------------------------------------------- STANet (justchenhao/STANet, pix2pix-style framework)
E("stanet_base_options", "options/base_options.py", "explicit_replacement", "justchenhao/STANet options/base_options.py", [
    C("torch.cuda.set_device(opt.gpu_ids[0])", "torch_cuda_api", "replace", True, "torch.npu.set_device(opt.gpu_ids[0])",
      "raises without CUDA"),
])
E("stanet_base_model", "models/base_model.py", "explicit_replacement", "justchenhao/STANet models/base_model.py (BaseModel)", [
    C("self.device = torch.device('cuda:{}'", "device_type", "replace", True,
      "self.device = torch.device('npu:{}'.format(self.gpu_ids[0])) if self.gpu_ids else torch.device('cpu')  # get device name: CPU or NPU",
      "device of every input tensor and of map_location in load_networks"),
    C("if len(self.gpu_ids) > 0 and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if len(self.gpu_ids) > 0 and torch.npu.is_available():",
      "unported the else-branch runs: net.cpu() moves the live network to the CPU at the first checkpoint and training "
      "silently continues there"),
    C("torch.save(net.module.cpu().state_dict(), save_path)", "distributed_framework", "replace", True,
      "torch.save(net.cpu().state_dict(), save_path)",
      "follows from dropping nn.DataParallel in networks.init_net: the bare module has no .module attribute"),
    C("net.cuda(self.gpu_ids[0])", "tensor_to_device", "replace", True, "net.npu(self.gpu_ids[0])",
      "moves the network back after saving"),
])
E("stanet_networks", "models/networks.py", "explicit_replacement", "justchenhao/STANet models/networks.py (init_net)", [
    C("assert(torch.cuda.is_available())", "torch_cuda_api", "replace", True, "assert(torch.npu.is_available())",
      "assertion fails on an NPU host"),
    C("net.to(gpu_ids[0])", "tensor_to_device", "replace", True, "net.to(f'npu:{gpu_ids[0]}')",
      "int ordinal means CUDA"),
    C("net = torch.nn.DataParallel(net, gpu_ids)  # multi-GPUs", "distributed_framework", "removal", True, None,
      "STANet always wraps, even for one id; DataParallel is unsupported on NPU (scatter/broadcast are CUDA-only)"),
])
E("stanet_cdfa", "models/CDFA_model.py", "explicit_replacement", "justchenhao/STANet models/CDFA_model.py (STANet-BAM/PAM)", [
    C("self.L_s = self.L.type(torch.cuda.FloatTensor)", "torch_cuda_api", "replace", True, "self.L_s = self.L.float()",
      "legacy CUDA tensor type raises 'type torch.cuda.FloatTensor not available' on an NPU host"),
])
E("stanet_train", "train.py", "explicit_replacement", "justchenhao/STANet train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "does not raise without CUDA; torch.manual_seed above already seeds the device generators (unconfirmed for NPU)"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "as above"),
])

# ---------------------------------------------------------------- change_detection.pytorch (likyoo/change_detection.pytorch)
E("cdp_local_test", "local_test.py", "explicit_replacement", "likyoo/change_detection.pytorch local_test.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("DEVICE = 'cuda:0' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
      "DEVICE = 'npu:0' if torch.npu.is_available() else 'cpu'",
      "module-level device string handed to TrainEpoch/ValidEpoch; silently CPU otherwise"),
    C("pin_memory=True)", "pin_memory", "replace", False,
      "train_loader = DataLoader(train_dataset, batch_size=8, shuffle=True, num_workers=4, pin_memory=True, pin_memory_device='npu')",
      "without an accelerator-aware pin_memory_device the loader warns and skips pinning on a CUDA-less host; performance only"),
])
E("cdp_train_util", "change_detection_pytorch/utils/train.py", "device_branch_or_abstraction",
  "likyoo/change_detection.pytorch change_detection_pytorch/utils/train.py (Epoch runners)", [])
