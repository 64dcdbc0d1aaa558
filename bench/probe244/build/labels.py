# Labels for probe244 (virtual try-on / garment synthesis, CUDA -> Ascend NPU).
# One C(...) per upstream line a careful porter would edit. See README.md "How the labels were chosen".
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_ENTRY = "entry script: torch_npu must be imported before the first NPU tensor/device use (no backend autoload before torch_npu 2.5.1)"
CUDA_TO_NPU = ".cuda() fails on an NPU host (no CUDA); move to the NPU instead"
CANN_ENV = "CANN's set_env.sh must be sourced before python imports torch_npu (unless the host profile already does it)"

# ----------------------------------------------------------------------------------------------------------------------
# HR-VITON
# ----------------------------------------------------------------------------------------------------------------------
E("hrviton-test-generator", "test_generator.py", "explicit_replacement",
  "HR-VITON test_generator.py (condition generator + SPADE generator inference, opt.cuda branches)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", CUDA_TO_NPU + " (generator after loading)"),
      C("gauss.cuda()", "tensor_to_device", "replace", True, "gauss.npu()", CUDA_TO_NPU + " (GaussianBlur kernel buffer)"),
      C("tocg.cuda()", "tensor_to_device", "replace", True, "tocg.npu()", CUDA_TO_NPU),
      C("pose_map = inputs['pose'].cuda()", "tensor_to_device", "replace", True, "pose_map = inputs['pose'].npu()", CUDA_TO_NPU),
      C("pre_clothes_mask = inputs['cloth_mask'][opt.datasetting].cuda()", "tensor_to_device", "replace", True,
        "pre_clothes_mask = inputs['cloth_mask'][opt.datasetting].npu()", CUDA_TO_NPU),
      C("agnostic = inputs['agnostic'].cuda()", "tensor_to_device", "replace", True, "agnostic = inputs['agnostic'].npu()", CUDA_TO_NPU),
      C("clothes = inputs['cloth'][opt.datasetting].cuda()", "tensor_to_device", "replace", True,
        "clothes = inputs['cloth'][opt.datasetting].npu()  # target cloth", CUDA_TO_NPU),
      C("densepose = inputs['densepose'].cuda()", "tensor_to_device", "replace", True, "densepose = inputs['densepose'].npu()", CUDA_TO_NPU),
      C("label.cuda(), parse_agnostic.cuda()", "tensor_to_device", "replace", True,
        "input_label, input_parse_agnostic = label.npu(), parse_agnostic.npu()", CUDA_TO_NPU),
      C("(pre_clothes_mask.detach().cpu().numpy() > 0.5).astype(np.float32)).cuda()", "tensor_to_device", "replace", True,
        "pre_clothes_mask = torch.FloatTensor((pre_clothes_mask.detach().cpu().numpy() > 0.5).astype(np.float32)).npu()", CUDA_TO_NPU),
      C("(warped_clothmask_paired.detach().cpu().numpy() > 0.5).astype(np.float32)).cuda()", "tensor_to_device", "replace", True,
        "warped_cm_onehot = torch.FloatTensor((warped_clothmask_paired.detach().cpu().numpy() > 0.5).astype(np.float32)).npu()", CUDA_TO_NPU),
      C("old_parse = torch.FloatTensor(fake_parse.size(0), 13, opt.fine_height, opt.fine_width).zero_().cuda()", "tensor_to_device", "replace", True,
        "old_parse = torch.FloatTensor(fake_parse.size(0), 13, opt.fine_height, opt.fine_width).zero_().npu()", CUDA_TO_NPU),
      C("parse = torch.FloatTensor(fake_parse.size(0), 7, opt.fine_height, opt.fine_width).zero_().cuda()", "tensor_to_device", "replace", True,
        "parse = torch.FloatTensor(fake_parse.size(0), 7, opt.fine_height, opt.fine_width).zero_().npu()", CUDA_TO_NPU),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = opt.gpu_ids', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = opt.gpu_ids',
        "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime, so --gpu_ids silently stops selecting the card"),
  ])

E("hrviton-networks", "networks.py", "explicit_replacement",
  "HR-VITON networks.py (ConditionGenerator, make_grid, VGG/GAN losses, define_D, checkpoint helpers)", [
      C("grid = torch.cat([grid_x, grid_y], 3).cuda()", "tensor_to_device", "replace", True,
        "grid = torch.cat([grid_x, grid_y], 3).npu()", CUDA_TO_NPU + " (sampling grid used by every grid_sample)"),
      C("self.vgg.cuda()", "tensor_to_device", "replace", True, "self.vgg.npu()", CUDA_TO_NPU),
      C("assert (torch.cuda.is_available())", "torch_cuda_api", "replace", True, "assert (torch.npu.is_available())",
        "AssertionError on an NPU host: torch.cuda.is_available() is False"),
      C("netD.cuda()", "tensor_to_device", "replace", True, "netD.npu()", CUDA_TO_NPU),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
        CUDA_TO_NPU + " (moves the model back after saving a CPU copy)"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", CUDA_TO_NPU),
  ])

E("hrviton-train-generator", "train_generator.py", "explicit_replacement",
  "HR-VITON train_generator.py (SPADE/ALIAS generator GAN training, DataParallel + optional DDP, --fp16 AMP)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
      C("from torch.cuda.amp import autocast, GradScaler", "amp", "replace", False,
        "from torch.npu.amp import autocast, GradScaler",
        "only matters with --fp16: CUDA autocast/GradScaler disable themselves with a warning when CUDA is absent, so the run silently trains in fp32"),
      C("torch.cuda.set_device(opt.gpu_ids[0])", "torch_cuda_api", "replace", True, "torch.npu.set_device(opt.gpu_ids[0])",
        "torch.cuda.set_device raises without CUDA"),
      C("tocg = torch.nn.DataParallel(tocg).cuda()", "distributed_framework", "replace", True, "tocg = tocg.npu()",
        "torch.nn.DataParallel is unsupported on Ascend (✘ in the 2.7.1 API list, msFmkTransplt limitation); the frozen tocg only needs the local NPU"),
      C("tensor=torch.cuda.HalfTensor", "torch_cuda_api", "replace", True,
        "criterionGAN = GANLoss('hinge', tensor=torch.npu.HalfTensor)", "torch.cuda tensor types cannot be constructed without CUDA"),
      C("tensor=torch.cuda.FloatTensor)", "torch_cuda_api", "replace", True,
        "criterionGAN = GANLoss('hinge', tensor=torch.npu.FloatTensor)", "GAN targets are built with self.Tensor(...); torch.cuda.FloatTensor fails on an NPU host"),
      C("gauss = gauss.cuda()", "tensor_to_device", "replace", True, "gauss = gauss.npu()", CUDA_TO_NPU),
      C("agnostic = inputs['agnostic'].cuda()", "tensor_to_device", "replace", True, "agnostic = inputs['agnostic'].npu()", CUDA_TO_NPU),
      C("parse_GT = inputs['parse'].cuda()", "tensor_to_device", "replace", True, "parse_GT = inputs['parse'].npu()", CUDA_TO_NPU),
      C("pose = inputs['densepose'].cuda()", "tensor_to_device", "replace", True, "pose = inputs['densepose'].npu()", CUDA_TO_NPU),
      C("parse_cloth = inputs['parse_cloth'].cuda()", "tensor_to_device", "replace", True, "parse_cloth = inputs['parse_cloth'].npu()", CUDA_TO_NPU),
      C("parse_agnostic = inputs['parse_agnostic'].cuda()", "tensor_to_device", "replace", True,
        "parse_agnostic = inputs['parse_agnostic'].npu()", CUDA_TO_NPU),
      C("pcm = inputs['pcm'].cuda()", "tensor_to_device", "replace", True, "pcm = inputs['pcm'].npu()", CUDA_TO_NPU),
      C("cm = inputs['cloth_mask']['paired'].cuda()", "tensor_to_device", "replace", True, "cm = inputs['cloth_mask']['paired'].npu()", CUDA_TO_NPU),
      C("c_paired = inputs['cloth']['paired'].cuda()", "tensor_to_device", "replace", True, "c_paired = inputs['cloth']['paired'].npu()", CUDA_TO_NPU),
      C("im = inputs['image'].cuda()", "tensor_to_device", "replace", True, "im = inputs['image'].npu()", CUDA_TO_NPU),
      C("astype(np.float32)).cuda()", "tensor_to_device", "replace", True,
        "warped_cm_onehot = torch.FloatTensor((warped_clothmask_paired.detach().cpu().numpy() > 0.5).astype(np.float32)).npu()", CUDA_TO_NPU),
      C("old_parse = torch.FloatTensor(fake_parse.size(0), 13, iH, iW).zero_().cuda()", "tensor_to_device", "replace", True,
        "old_parse = torch.FloatTensor(fake_parse.size(0), 13, iH, iW).zero_().npu()", CUDA_TO_NPU),
      C("parse = torch.FloatTensor(fake_parse.size(0), 7, iH, iW).zero_().cuda()", "tensor_to_device", "replace", True,
        "parse = torch.FloatTensor(fake_parse.size(0), 7, iH, iW).zero_().npu()", CUDA_TO_NPU),
      C("GAN_Feat_loss = torch.cuda.FloatTensor(len(opt.gpu_ids)).zero_()", "torch_cuda_api", "replace", True,
        "GAN_Feat_loss = torch.npu.FloatTensor(len(opt.gpu_ids)).zero_()", "torch.cuda.FloatTensor fails on an NPU host"),
      C("torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
        "board.add_scalar('Memory/max_allocated_GB', torch.npu.max_memory_allocated() / 1024 ** 3, step + 1)",
        "logging only: the CUDA allocator was never initialised, so it silently reports 0"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA; the NPU caching allocator is not trimmed"),
      C("torch.cuda.set_device(opt.local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(opt.local_rank)",
        "raises without CUDA; every rank would otherwise share NPU 0"),
      C("backend='nccl'", "dist_backend", "replace", True,
        "torch.distributed.init_process_group(backend='hccl', init_method='env://')", "NCCL is not available on Ascend; HCCL is the collective backend"),
      C("assert (torch.cuda.is_available())", "torch_cuda_api", "replace", True, "assert (torch.npu.is_available())",
        "AssertionError on an NPU host"),
      C("generator.cuda()", "tensor_to_device", "replace", True, "generator.npu()", CUDA_TO_NPU),
      C("discriminator.cuda()", "tensor_to_device", "replace", True, "discriminator.npu()", CUDA_TO_NPU),
      C("generator = torch.nn.DataParallel(generator, device_ids=opt.gpu_ids)", "distributed_framework", "replace", True,
        "generator = SingleDeviceWrapper(generator)  # exposes .module; multi-card runs use --distributed (DDP)",
        "torch.nn.DataParallel is unsupported on Ascend; the code still needs a .module attribute"),
      C("discriminator = torch.nn.DataParallel(discriminator, device_ids=opt.gpu_ids)", "distributed_framework", "replace", True,
        "discriminator = SingleDeviceWrapper(discriminator)",
        "torch.nn.DataParallel is unsupported on Ascend"),
      C("use_gpu=True", "device_type", "replace", True,
        "model = models.PerceptualLoss(model='net-lin', net='alex', use_gpu=False).npu()",
        "the bundled LPIPS PerceptualLoss moves itself to CUDA device 0 when use_gpu=True"),
  ])

E("hrviton-cp-dataset", "cp_dataset.py", "explicit_replacement",
  "HR-VITON cp_dataset.py (CPDataset / CPDataLoader; pure data code, pin_memory loader)", [])

E("hrviton-evaluate", "evaluate.py", "explicit_replacement",
  "try-on evaluation script in the HR-VITON/VITON-HD style (SSIM/LPIPS paired, FID/KID unpaired, CUDA event timing)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
      C("lpips_model = lpips.LPIPS(net='alex').cuda()", "tensor_to_device", "replace", True,
        "lpips_model = lpips.LPIPS(net='alex').to(device)", CUDA_TO_NPU),
      C("pred = pred.cuda(non_blocking=True)", "tensor_to_device", "replace", True, "pred = pred.to(device, non_blocking=True)", CUDA_TO_NPU),
      C("gt = gt.cuda(non_blocking=True)", "tensor_to_device", "replace", True, "gt = gt.to(device, non_blocking=True)", CUDA_TO_NPU),
      C("torch.cuda.set_device(opt.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(opt.gpu)", "raises without CUDA"),
      C("device = torch.device('cuda', opt.gpu)", "device_type", "replace", True, "device = torch.device('npu', opt.gpu)",
        "a cuda device object makes every .to(device) fail"),
      C("torch.cuda.get_device_name(opt.gpu)", "torch_cuda_api", "replace", True,
        'print(f"evaluating on {torch.npu.get_device_name(opt.gpu)}")', "raises without CUDA"),
      C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "start = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
      C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "end = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "initialises CUDA and raises on an NPU host"),
  ])

E("hrviton-scripts", "scripts/run_hrviton.sh", "explicit_replacement",
  "HR-VITON shell launcher (train_condition / train_generator via torch.distributed.launch / test_generator)", [
      C("=set -e", "import_torch_npu", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh", CANN_ENV),
      C("CUDA_VISIBLE_DEVICES=$GPUS python3 train_condition.py", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=$GPUS python3 train_condition.py \\", "device selection variable of the Ascend runtime"),
      C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None,
        "NCCL-only knob (consumer-GPU P2P workaround); HCCL ignores it and has no direct equivalent"),
      C("export CUDA_VISIBLE_DEVICES=$GPUS", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=$GPUS",
        "device selection variable of the Ascend runtime"),
      C("CUDA_VISIBLE_DEVICES=$GPUS python3 test_generator.py", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=$GPUS python3 test_generator.py \\", "device selection variable of the Ascend runtime"),
      C("nvidia-smi --query-gpu", "torch_cuda_api", "replace", True, "npu-smi info",
        "nvidia-smi does not exist on an Ascend host; under set -e the launcher exits non-zero"),
  ])

E("preprocess-sh", "scripts/preprocess_vitonhd.sh", "explicit_replacement",
  "VITON-HD/HR-VITON preprocessing script (detectron2 DensePose apply_net, SCHP simple_extractor, OpenPose binary)", [
      C("=set -euo pipefail", "import_torch_npu", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh", CANN_ENV),
      C("export CUDA_VISIBLE_DEVICES=$GPU", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=$GPU",
        "device selection variable of the Ascend runtime"),
      C("--opts MODEL.DEVICE cuda", "device_type", "replace", True, "--opts MODEL.DEVICE npu",
        "detectron2 places the model on cfg.MODEL.DEVICE; 'cuda' fails on an NPU host"),
      C("./openpose/build/examples/openpose/openpose.bin \\", "custom_cuda_extension", "replace", True,
        "./openpose/build_cpu/examples/openpose/openpose.bin \\",
        "the OpenPose C++ binary is built against CUDA/cuDNN and cannot start without an NVIDIA driver; rebuild CPU_ONLY or use the Python detector"),
  ])

# ----------------------------------------------------------------------------------------------------------------------
# VITON-HD
# ----------------------------------------------------------------------------------------------------------------------
E("vitonhd-test", "test.py", "explicit_replacement",
  "VITON-HD test.py (SegGenerator -> GMM -> ALIASGenerator inference)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
      C("gauss.cuda()", "tensor_to_device", "replace", True, "gauss.npu()", CUDA_TO_NPU),
      C("img_agnostic = inputs['img_agnostic'].cuda()", "tensor_to_device", "replace", True, "img_agnostic = inputs['img_agnostic'].npu()", CUDA_TO_NPU),
      C("parse_agnostic = inputs['parse_agnostic'].cuda()", "tensor_to_device", "replace", True,
        "parse_agnostic = inputs['parse_agnostic'].npu()", CUDA_TO_NPU),
      C("pose = inputs['pose'].cuda()", "tensor_to_device", "replace", True, "pose = inputs['pose'].npu()", CUDA_TO_NPU),
      C("c = inputs['cloth']['unpaired'].cuda()", "tensor_to_device", "replace", True, "c = inputs['cloth']['unpaired'].npu()", CUDA_TO_NPU),
      C("cm = inputs['cloth_mask']['unpaired'].cuda()", "tensor_to_device", "replace", True, "cm = inputs['cloth_mask']['unpaired'].npu()", CUDA_TO_NPU),
      C("gen_noise(cm_down.size()).cuda()", "tensor_to_device", "replace", True,
        "seg_input = torch.cat((cm_down, c_masked_down, parse_agnostic_down, pose_down, gen_noise(cm_down.size()).npu()), dim=1)", CUDA_TO_NPU),
      C("parse_old = torch.zeros(", "tensor_to_device", "replace", True,
        "parse_old = torch.zeros(parse_pred.size(0), 13, opt.load_height, opt.load_width, dtype=torch.float).npu()", CUDA_TO_NPU),
      C("parse = torch.zeros(", "tensor_to_device", "replace", True,
        "parse = torch.zeros(parse_pred.size(0), 7, opt.load_height, opt.load_width, dtype=torch.float).npu()", CUDA_TO_NPU),
      C("seg.cuda().eval()", "tensor_to_device", "replace", True, "seg.npu().eval()", CUDA_TO_NPU),
      C("gmm.cuda().eval()", "tensor_to_device", "replace", True, "gmm.npu().eval()", CUDA_TO_NPU),
      C("alias.cuda().eval()", "tensor_to_device", "replace", True, "alias.npu().eval()", CUDA_TO_NPU),
  ])

E("vitonhd-networks", "networks.py", "device_branch_or_abstraction",
  "VITON-HD networks.py (SegGenerator, GMM with TPS grid, ALIAS normalisation/generator)", [
      C("noise = (torch.randn(b, w, h, 1).cuda() * self.noise_scale).transpose(1, 3)", "tensor_to_device", "replace", True,
        "noise = (torch.randn(b, w, h, 1, device=x.device) * self.noise_scale).transpose(1, 3)",
        "hard-coded .cuda() inside ALIASNorm.forward; follow the activation's device instead"),
  ])

# ----------------------------------------------------------------------------------------------------------------------
# SCHP human parsing
# ----------------------------------------------------------------------------------------------------------------------
E("schp-simple-extractor", "simple_extractor.py", "explicit_replacement",
  "Self-Correction-Human-Parsing simple_extractor.py (LIP/ATR parsing maps for try-on preprocessing)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True, 'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu',
        "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; --gpu silently stops selecting the card"),
      C("state_dict = torch.load(args.model_restore)['state_dict']", "tensor_to_device", "replace", True,
        "state_dict = torch.load(args.model_restore, map_location='cpu')['state_dict']",
        "the released SCHP checkpoints hold CUDA tensors (saved from a DataParallelModel on GPUs); without map_location torch.load raises when CUDA is unavailable"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", CUDA_TO_NPU),
      C("output = model(image.cuda())", "tensor_to_device", "replace", True, "output = model(image.npu())", CUDA_TO_NPU),
  ])

E("schp-train", "train.py", "explicit_replacement",
  "Self-Correction-Human-Parsing train.py (DataParallelModel/DataParallelCriterion, SCHP self-correction cycles)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True, 'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu',
        "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime"),
      C("model = DataParallelModel(AugmentCE2P)", "distributed_framework", "replace", True,
        "model = AugmentCE2P  # DataParallel-based wrapper unsupported on NPU; multi-card -> DDP + SyncBN",
        "DataParallelModel subclasses torch.nn.DataParallel, which is unsupported on Ascend"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", CUDA_TO_NPU),
      C("checkpoint = torch.load(restore_from)", "tensor_to_device", "replace", True,
        "checkpoint = torch.load(restore_from, map_location='cpu')",
        "resume checkpoints are state_dicts of a CUDA model; torch.load without map_location raises when CUDA is unavailable"),
      C("schp_model = DataParallelModel(SCHP_AugmentCE2P)", "distributed_framework", "replace", True,
        "schp_model = SCHP_AugmentCE2P", "torch.nn.DataParallel-based wrapper is unsupported on Ascend"),
      C("schp_model.cuda()", "tensor_to_device", "replace", True, "schp_model.npu()", CUDA_TO_NPU),
      C("schp_checkpoint = torch.load(args.schp_restore)", "tensor_to_device", "replace", True,
        "schp_checkpoint = torch.load(args.schp_restore, map_location='cpu')", "CUDA-tensor checkpoint, see above"),
      C("criterion = DataParallelCriterion(criterion)", "distributed_framework", "removal", True, None,
        "goes away with DataParallelModel (it gathers per-replica outputs); the plain criterion takes the single-device outputs"),
      C("criterion.cuda()", "tensor_to_device", "replace", True, "criterion.npu()", CUDA_TO_NPU),
      C("images, labels, _ = batch", "tensor_to_device", "npu_only_addition", True, "images = images.npu(non_blocking=True)",
        "DataParallelModel used to scatter the CPU batch to the GPUs; without it the inputs must be moved explicitly"),
      C("labels = labels.cuda(non_blocking=True)", "tensor_to_device", "replace", True, "labels = labels.npu(non_blocking=True)", CUDA_TO_NPU),
      C("labels = labels.type(torch.cuda.LongTensor)", "torch_cuda_api", "replace", True, "labels = labels.long()",
        "casting to torch.cuda.LongTensor initialises CUDA and raises on an NPU host"),
      C("edges = edges.type(torch.cuda.LongTensor)", "torch_cuda_api", "replace", True, "edges = edges.long()",
        "casting to torch.cuda.LongTensor raises on an NPU host"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA"),
  ])

E("schp-inplace-abn-functions", "modules/functions.py", "kernel_rewrite",
  "SCHP / mapillary inplace_abn modules/functions.py (JIT-built CUDA InPlace-ABN and its autograd functions)", [
      C('_backend = load(name="inplace_abn",', "custom_cuda_extension", "replace", True,
        "_backend = None  # nvcc JIT build removed: statistics, BN and activations are done with torch ops below",
        "cpp_extension.load with .cu sources needs nvcc/CUDA_HOME (cpp_extension.load is ✘ on A2/A3); the import of the whole parser fails"),
      C("_backend.leaky_relu_forward(x, ctx.slope)", "custom_cuda_extension", "replace", True, "F.leaky_relu_(x, ctx.slope)",
        "call into the removed CUDA extension"),
      C("_backend.elu_forward(x)", "custom_cuda_extension", "replace", True, "F.elu_(x)", "call into the removed CUDA extension"),
      C("_backend.leaky_relu_backward(x, dx, ctx.slope)", "custom_cuda_extension", "replace", True,
        "neg = x < 0; dx[neg] *= ctx.slope; x[neg] /= ctx.slope", "call into the removed CUDA extension (inverts the in-place activation)"),
      C("_backend.elu_backward(x, dx)", "custom_cuda_extension", "replace", True,
        "neg = x < 0; dx[neg] *= (x[neg] + 1.); x[neg] = torch.log1p(x[neg])", "call into the removed CUDA extension"),
      C("=mean, var = _backend.mean_var(x)", "custom_cuda_extension", "replace", True,
        "mean, var = x.transpose(0, 1).flatten(1).mean(1), x.transpose(0, 1).flatten(1).var(1, unbiased=False)",
        "per-channel statistics were a CUDA kernel"),
      C("local_mean, local_var = _backend.mean_var(x)", "custom_cuda_extension", "replace", True,
        "local_mean, local_var = x.transpose(0, 1).flatten(1).mean(1), x.transpose(0, 1).flatten(1).var(1, unbiased=False)",
        "per-channel statistics were a CUDA kernel"),
      C("=_backend.forward(x, mean, var, weight, bias, ctx.affine, ctx.eps)", "custom_cuda_extension", "replace", True,
        "x.copy_(_bn_forward_torch(x, mean, var, weight, bias, ctx.affine, ctx.eps))", "in-place BN forward was a CUDA kernel"),
      C("_backend.forward(x, mean, var, weight, bias, ctx.affine, ctx.eps)  # sync stats", "custom_cuda_extension", "replace", True,
        "x.copy_(_bn_forward_torch(x, mean, var, weight, bias, ctx.affine, ctx.eps))  # sync stats", "in-place BN forward was a CUDA kernel"),
      C("edz, eydz = _backend.edz_eydz(z, dz, weight, bias, ctx.affine, ctx.eps)", "custom_cuda_extension", "replace", True,
        "edz, eydz = _edz_eydz_torch(z, dz, weight, bias, ctx.affine, ctx.eps)", "backward reductions were a CUDA kernel"),
      C("edz_local, eydz_local = _backend.edz_eydz(", "custom_cuda_extension", "replace", True,
        "edz_local, eydz_local = _edz_eydz_torch(z, dz, weight, bias, ctx.affine, ctx.eps)", "backward reductions were a CUDA kernel"),
      C("dx = _backend.backward(z, dz, var, weight, bias, edz, eydz, ctx.affine, ctx.eps)", "custom_cuda_extension", "replace", True,
        "dx = _bn_backward_torch(z, dz, var, weight, bias, edz, eydz, ctx.affine, ctx.eps)", "BN input gradient was a CUDA kernel"),
      C("dx = _backend.backward(z, dz, var, weight, bias, edz_local, eydz_local", "custom_cuda_extension", "replace", True,
        "dx = _bn_backward_torch(z, dz, var, weight, bias, edz_local, eydz_local, ctx.affine, ctx.eps)", "BN input gradient was a CUDA kernel"),
  ])

# ----------------------------------------------------------------------------------------------------------------------
# DensePose (detectron2)
# ----------------------------------------------------------------------------------------------------------------------
E("densepose-apply-net", "apply_net.py", "device_branch_or_abstraction",
  "detectron2 projects/DensePose apply_net.py as vendored by try-on repos (show/dump actions, gradio entry)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "detectron2 moves the model to torch.device(cfg.MODEL.DEVICE); 'npu' only parses once torch_npu is imported"),
      C("from detectron2.engine.defaults import DefaultPredictor", "unsupported_op_workaround", "npu_only_addition", False,
        "import torchvision_npu  # NPU kernels for torchvision roi_align / nms used by the R-CNN heads",
        "unconfirmed: without torchvision_npu the torchvision box ops may fall back to CPU or fail on NPU tensors"),
      C("if not torch.cuda.is_available():", "device_type", "replace", True,
        "if not (torch.cuda.is_available() or torch.npu.is_available()):",
        "always true on an NPU host: silently overrides MODEL.DEVICE npu with cpu"),
  ])

# ----------------------------------------------------------------------------------------------------------------------
# IDM-VTON
# ----------------------------------------------------------------------------------------------------------------------
E("idmvton-gradio-app", "gradio_demo/app.py", "explicit_replacement",
  "IDM-VTON gradio_demo/app.py (SDXL try-on pipeline in fp16, DensePose/OpenPose/parsing preprocessing, ZeroGPU decorator)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
      C("'--opts', 'MODEL.DEVICE', 'cuda',", "device_type", "replace", True, "'--opts', 'MODEL.DEVICE', 'npu',",
        "DensePose predictor device; 'cuda' fails on an NPU host"),
      C('device = "cuda"', "device_type", "replace", True, 'device = "npu"', "every pipe/encoder/tensor move uses this string"),
      C("with torch.cuda.amp.autocast():", "amp", "replace", False, "with torch.npu.amp.autocast():",
        "CUDA autocast only warns and disables itself on an NPU host; weights and inputs are already fp16, so the demo most likely still runs (unconfirmed)"),
  ])

E("idmvton-inference", "inference.py", "device_branch_or_abstraction",
  "IDM-VTON inference.py (accelerate-driven batch try-on on VITON-HD test pairs)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "accelerate >= 0.22 imports torch_npu itself when it is installed and picks the NPU for accelerator.device; explicit import recommended"),
      C("not torch.cuda.is_bf16_supported()", "device_capability_check", "replace", True,
        'if args.mixed_precision == "bf16" and not torch.npu.is_bf16_supported():',
        "torch.cuda.is_bf16_supported() needs a CUDA device and raises on an NPU host when bf16 is requested"),
      C("unet.enable_xformers_memory_efficient_attention()", "attention_kernel", "replace", False,
        "unet.set_attn_processor(AttnProcessor2_0())",
        "only with --enable_xformers_memory_efficient_attention; xformers has no NPU backend, SDPA dispatches to the NPU fused attention"),
      C("with torch.cuda.amp.autocast():", "amp", "replace", False, "with torch.npu.amp.autocast():",
        "CUDA autocast disables itself on an NPU host; models are loaded in weight_dtype and the pipeline casts inputs, so likely still correct (unconfirmed)"),
  ])

E("idmvton-train-xl", "train_xl.py", "device_branch_or_abstraction",
  "IDM-VTON train_xl.py (accelerate + diffusers SDXL try-on UNet training, 8-bit Adam, xformers flag)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "accelerate >= 0.22 imports torch_npu itself when installed; explicit import recommended"),
      C("unet.enable_xformers_memory_efficient_attention()", "attention_kernel", "replace", False,
        "unet.set_attn_processor(AttnProcessor2_0())",
        "reached only with --enable_xformers_memory_efficient_attention (dropped in train_xl.sh); xformers has no NPU backend"),
      C("optimizer_class = bnb.optim.AdamW8bit", "fused_optimizer", "replace", False,
        "optimizer_class = torch_npu.optim.NpuFusedAdamW",
        "reached only with --use_8bit_adam (dropped in train_xl.sh); bitsandbytes 8-bit optimizers have no NPU kernels"),
      C("with torch.cuda.amp.autocast():", "amp", "replace", False,
        "with torch.autocast(device_type='npu', dtype=weight_dtype):",
        "validation block: CUDA autocast disables itself on an NPU host; the fp16 encoders feed the fp32 UNet, which accelerate's kept fp32 wrapper probably still autocasts (unconfirmed)"),
      C('generator = torch.Generator("cuda").manual_seed(args.seed)', "device_type", "replace", True,
        "generator = torch.Generator(accelerator.device).manual_seed(args.seed)", "creating a CUDA generator raises on an NPU host"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "silent no-op without CUDA"),
  ])

E("idmvton-train-sh", "train_xl.sh", "explicit_replacement",
  "IDM-VTON train_xl.sh / inference launcher (accelerate launch --mixed_precision fp16, 8-bit Adam, xformers)", [
      C("=#!/usr/bin/env bash", "import_torch_npu", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh", CANN_ENV),
      C('export TORCH_CUDA_ARCH_LIST="8.0"', "env_var", "removal", False, None, "only read by nvcc extension builds"),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=3",
        "NCCL-only logging switch; CANN/HCCL logging is controlled by ASCEND_GLOBAL_LOG_LEVEL"),
      C("CUDA_VISIBLE_DEVICES=0,1,2,3 accelerate launch", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=0,1,2,3 accelerate launch \\", "device selection variable of the Ascend runtime"),
      C("--use_8bit_adam", "fused_optimizer", "removal", True, None,
        "bitsandbytes 8-bit AdamW is CUDA-only (the bitsandbytes NPU work covers NF4 quantisation only); drop it or use NpuFusedAdamW"),
      C("--enable_xformers_memory_efficient_attention", "attention_kernel", "removal", True, None,
        "train_xl.py then calls enable_xformers_memory_efficient_attention(): ValueError without xformers, 'No operator found' on NPU tensors with it"),
      C("CUDA_VISIBLE_DEVICES=0 accelerate launch inference.py", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=0 accelerate launch inference.py \\", "device selection variable of the Ascend runtime"),
  ])

E("idmvton-environment", "environment.yaml", "explicit_replacement",
  "IDM-VTON environment.yaml (conda: pytorch + pytorch-cuda from the nvidia channel, pip extras)", [
      C("=- nvidia", "torch_cuda_api", "removal", False, None, "NVIDIA channel only serves CUDA runtime packages"),
      C("pytorch-cuda=11.8", "torch_cuda_api", "removal", True, None,
        "selects the CUDA build of pytorch (none for aarch64 Ascend hosts); torch_npu needs the CPU build"),
      C("cudatoolkit-dev=11.8", "torch_cuda_api", "removal", False, None,
        "nvcc toolchain for CUDA extension builds, unused on NPU (unconfirmed whether it even resolves on aarch64)"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.0.1.post1",
        "torch_npu wheel matching torch 2.0.1 (EOL line; moving to torch 2.1.0 + torch-npu 2.1.0.post10 is the supported path)"),
      C("bitsandbytes==0.39.0", "fused_optimizer", "removal", False, None,
        "only used by --use_8bit_adam; bitsandbytes 0.39 has CUDA kernels only"),
      C("xformers==0.0.22", "attention_kernel", "removal", True, None,
        "no NPU backend and no aarch64 wheel; the wheel also pins a CUDA torch 2.0.1"),
  ])

E("idmvton-tryon-pipeline", "src/tryon_pipeline.py", "device_branch_or_abstraction",
  "IDM-VTON src/tryon_pipeline.py (copied diffusers SDXL inpaint pipeline with GarmentNet, offload helpers)", [
      C('device = torch.device(f"cuda:{gpu_id}")', "device_type", "replace", True, 'device = torch.device(f"npu:{gpu_id}")',
        "enable_model_cpu_offload would attach the offload hooks to a CUDA device; fails on an NPU host when used"),
      C("torch.cuda.empty_cache()  # otherwise", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()  # otherwise we don't see the memory savings (but they probably exist)", "silent no-op without CUDA"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "silent no-op without CUDA"),
  ])

E("idmvton-ip-attention", "ip_adapter/attention_processor.py", "device_branch_or_abstraction",
  "IP-Adapter ip_adapter/attention_processor.py as vendored by IDM-VTON (SDPA attention processors)", [])

# ----------------------------------------------------------------------------------------------------------------------
# StableVITON (ControlNet / LDM code base)
# ----------------------------------------------------------------------------------------------------------------------
E("stableviton-inference", "inference.py", "explicit_replacement",
  "StableVITON inference.py (ControlLDM + PLMS sampler over the VITON-HD test split)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
      C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(args.seed)",
        "silent no-op without CUDA (torch.manual_seed above likely already seeds the NPU generator)"),
      C('load_cp = load_state_dict(args.model_load_path, location="cuda")', "tensor_to_device", "replace", True,
        'load_cp = load_state_dict(args.model_load_path, location="cpu")', "map_location='cuda' raises when CUDA is unavailable"),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", CUDA_TO_NPU),
      C('with precision_scope("cuda"):', "amp", "replace", False, 'with precision_scope("npu"):',
        "autocast('cuda') disables itself on an NPU host; the model is fp32, so only speed/memory is lost"),
      C("batch[k] = v.cuda()", "tensor_to_device", "replace", True, "batch[k] = v.npu()", CUDA_TO_NPU),
      C("torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
        'print(f"peak NPU memory: {torch.npu.max_memory_allocated() / 2**30:.2f} GiB")', "logging only; reports 0"),
  ])

E("stableviton-plms", "cldm/plms_hacked.py", "device_branch_or_abstraction",
  "StableVITON cldm/plms_hacked.py (LDM PLMS sampler with the classic register_buffer -> cuda idiom)", [
      C('if attr.device != torch.device("cuda"):', "device_type", "replace", False, "if attr.device != self.model.device:",
        "on its own harmless (always true on NPU); changed together with the .to() below"),
      C('attr = attr.to(torch.device("cuda"))', "tensor_to_device", "replace", True, "attr = attr.to(self.model.device)",
        "moves every schedule buffer to CUDA; raises on an NPU host"),
  ])

E("stableviton-attention", "ldm/modules/attention.py", "explicit_replacement",
  "StableVITON ldm/modules/attention.py (SD2 CrossAttention with fp32 upcast, xformers MemoryEfficientCrossAttention)", [
      C("with torch.autocast(enabled=False, device_type='cuda'):", "amp", "replace", True,
        "with torch.autocast(enabled=False, device_type='npu'):",
        "meant to force q·k into fp32 under fp16 autocast; device_type='cuda' leaves NPU autocast on, so the overflow guard silently does nothing"),
      C("out = xformers.ops.memory_efficient_attention(", "attention_kernel", "replace", False,
        "out = F.scaled_dot_product_attention(q, k, v)",
        "reached only if xformers imports (guarded import falls back to CrossAttention); xformers has no NPU backend, SDPA/npu_fusion_attention is the fast NPU path"),
  ])

E("stableviton-diffusion-util", "ldm/modules/diffusionmodules/util.py", "explicit_replacement",
  "LDM ldm/modules/diffusionmodules/util.py as carried by StableVITON (schedules, gradient-checkpoint function)", [
      C('ctx.gpu_autocast_kwargs = {"enabled": torch.is_autocast_enabled(),', "amp", "replace", True,
        'ctx.gpu_autocast_kwargs = {"enabled": torch.npu.is_autocast_enabled(),',
        "torch.is_autocast_enabled() without a device reads the CUDA autocast state (torch < 2.4), so under NPU AMP the backward recomputation runs without autocast"),
      C('"dtype": torch.get_autocast_gpu_dtype(),', "amp", "replace", True, '"dtype": torch.npu.get_autocast_dtype(),',
        "returns the CUDA autocast dtype, not the NPU one"),
      C("torch.cuda.amp.autocast(**ctx.gpu_autocast_kwargs):", "amp", "replace", True,
        "torch.npu.amp.autocast(**ctx.gpu_autocast_kwargs):", "CUDA autocast context is a no-op on NPU, recomputation differs from the forward pass"),
  ])

E("stableviton-train", "train.py", "explicit_replacement",
  "StableVITON train.py (PyTorch Lightning Trainer, DDP, 16-bit precision)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
      C("default=torch.cuda.device_count())", "torch_cuda_api", "replace", True,
        'parser.add_argument("--n_gpus", type=int, default=torch.npu.device_count())', "returns 0 on an NPU host, so devices=0"),
      C("torch.cuda.get_device_name(0)", "torch_cuda_api", "replace", True,
        'print(f"training on {args.n_gpus} x {torch.npu.get_device_name(0)}")', "raises without CUDA"),
      C('accelerator="gpu",', "device_type", "replace", True, 'accelerator="npu",',
        "Lightning's GPU accelerator needs CUDA; an NPU accelerator has to come from a plugin (which one is unconfirmed)"),
      C("strategy=DDPStrategy(find_unused_parameters=True),", "dist_backend", "replace", False,
        'strategy=DDPStrategy(find_unused_parameters=True, process_group_backend="hccl"),',
        "the default process-group backend follows the accelerator (nccl for GPU); unconfirmed whether an NPU accelerator plugin switches it to hccl itself"),
  ])

E("stableviton-dockerfile", "Dockerfile", "explicit_replacement",
  "community Dockerfile for StableVITON + detectron2/DensePose (nvidia/cuda devel base, cu118 wheels, xformers)", [
      C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "torch_cuda_api", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10", "CUDA base image; an Ascend image needs CANN (driver is mounted by Ascend Docker Runtime)"),
      C('ENV TORCH_CUDA_ARCH_LIST="7.5;8.0;8.6+PTX"', "env_var", "removal", False, None, "only read by nvcc extension builds"),
      C("ENV FORCE_CUDA=1", "env_var", "removal", True, None,
        "forces detectron2's setup.py to compile CUDA kernels; without nvcc the detectron2 RUN step fails"),
      C("ENV CUDA_HOME=/usr/local/cuda", "env_var", "removal", False, None, "points at a toolkit that does not exist in the CANN image"),
      C("whl/cu118", "torch_cuda_api", "replace", True,
        "RUN pip install torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheels; torch_npu pairs with the CPU build of the same torch version"),
      C("RUN pip install xformers==0.0.22 triton==2.0.0", "attention_kernel", "removal", True, None,
        "xformers and CUDA triton have no NPU backend; the ldm attention picks xformers whenever it imports and then fails on NPU tensors"),
      C("RUN pip install -r requirements.txt", "import_torch_npu", "npu_only_addition", True,
        "RUN pip install torch-npu==2.1.0.post10 pyyaml decorator", "torch_npu wheel matching the CPU torch 2.1.0"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
        "nvidia-container-runtime hint; Ascend Docker Runtime takes ASCEND_VISIBLE_DEVICES at docker run"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None, "nvidia-container-runtime hint"),
  ])

# ----------------------------------------------------------------------------------------------------------------------
# OOTDiffusion
# ----------------------------------------------------------------------------------------------------------------------
E("ootd-requirements", "requirements.txt", "explicit_replacement",
  "OOTDiffusion requirements.txt (cu118 torch pins, diffusers 0.24, onnxruntime, optional xformers)", [
      C("--extra-index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu", "x86 Ascend hosts take the CPU torch build that torch_npu is built against"),
      C("torch==2.0.1+cu118", "torch_cuda_api", "replace", True, "torch==2.1.0",
        "+cu118 local build is CUDA-only (and absent for aarch64)"),
      C("torchvision==0.15.2+cu118", "torch_cuda_api", "replace", True, "torchvision==0.16.0", "CUDA local build"),
      C("torchaudio==2.0.2+cu118", "torch_cuda_api", "replace", True, "torchaudio==2.1.0", "CUDA local build"),
      C("numpy==1.24.4", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10", "torch_npu pin matching torch 2.1.0"),
      C('xformers==0.0.22 ; platform_system == "Linux"', "attention_kernel", "removal", True, None,
        "no NPU backend; the 0.0.22 wheel pins torch==2.0.1 and so conflicts with the torch/torch_npu pins"),
  ])

E("ootd-inference-hd", "ootd/inference_ootd_hd.py", "explicit_replacement",
  "OOTDiffusion ootd/inference_ootd_hd.py (OOTDiffusionHD: fp16 UNet pair, CLIP image/text encoders on 'cuda:<id>')", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "first module on the OOTD CLI path that touches torch (run_ootd.py imports no torch); 'npu:<id>' strings need the backend registered"),
      C("self.gpu_id = 'cuda:' + str(gpu_id)", "device_type", "replace", True, "self.gpu_id = 'npu:' + str(gpu_id)",
        "every .to(self.gpu_id) follows this string"),
  ])

E("ootd-gradio", "run/gradio_ootd.py", "explicit_replacement",
  "OOTDiffusion run/gradio_ootd.py (two model sets on GPU 0/1, .to('cuda') before each request)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
      C("openpose_model_hd.preprocessor.body_estimation.model.to('cuda')", "tensor_to_device", "replace", True,
        "openpose_model_hd.preprocessor.body_estimation.model.to('npu')", "'cuda' device string fails on an NPU host"),
      C("ootd_model_hd.pipe.to('cuda')", "tensor_to_device", "replace", True, "ootd_model_hd.pipe.to('npu')", "'cuda' device string"),
      C("ootd_model_hd.image_encoder.to('cuda')", "tensor_to_device", "replace", True, "ootd_model_hd.image_encoder.to('npu')", "'cuda' device string"),
      C("ootd_model_hd.text_encoder.to('cuda')", "tensor_to_device", "replace", True, "ootd_model_hd.text_encoder.to('npu')", "'cuda' device string"),
      C("openpose_model_dc.preprocessor.body_estimation.model.to('cuda')", "tensor_to_device", "replace", True,
        "openpose_model_dc.preprocessor.body_estimation.model.to('npu')", "'cuda' device string"),
      C("ootd_model_dc.pipe.to('cuda')", "tensor_to_device", "replace", True, "ootd_model_dc.pipe.to('npu')", "'cuda' device string"),
      C("ootd_model_dc.image_encoder.to('cuda')", "tensor_to_device", "replace", True, "ootd_model_dc.image_encoder.to('npu')", "'cuda' device string"),
      C("ootd_model_dc.text_encoder.to('cuda')", "tensor_to_device", "replace", True, "ootd_model_dc.text_encoder.to('npu')", "'cuda' device string"),
  ])

E("ootd-run-openpose", "preprocess/openpose/run_openpose.py", "explicit_replacement",
  "OOTDiffusion preprocess/openpose/run_openpose.py (controlnet OpenposeDetector wrapper pinned with torch.cuda.set_device)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "module has its own __main__ entry and calls torch.npu after porting"),
      C("torch.cuda.set_device(gpu_id)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu_id)", "raises without CUDA"),
      C("torch.cuda.set_device(self.gpu_id)", "torch_cuda_api", "replace", True, "torch.npu.set_device(self.gpu_id)", "raises without CUDA"),
  ])

E("ootd-run-parsing", "preprocess/humanparsing/run_parsing.py", "explicit_replacement",
  "OOTDiffusion preprocess/humanparsing/run_parsing.py (ONNX Runtime CPU parsing, torch.cuda.set_device pinning)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "the OOTD / IDM-VTON entry points already import torch_npu before Parsing() is constructed; explicit import keeps the module self-contained"),
      C("torch.cuda.set_device(gpu_id)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu_id)", "raises without CUDA"),
      C("torch.cuda.set_device(self.gpu_id)", "torch_cuda_api", "replace", True, "torch.npu.set_device(self.gpu_id)", "raises without CUDA"),
  ])

E("ootd-openpose-body", "preprocess/openpose/annotator/openpose/body.py", "device_branch_or_abstraction",
  "controlnet annotator openpose/body.py as vendored by OOTDiffusion / IDM-VTON (Body pose estimator)", [
      C("self.use_cuda = torch.cuda.is_available()", "device_type", "replace", True,
        "self.use_cuda = torch.npu.is_available()  # name kept: 'use accelerator'",
        "always False on an NPU host: the detector silently runs on CPU, and once the demos move .model to the NPU the CPU input no longer matches"),
      C("self.model = self.model.cuda()", "tensor_to_device", "replace", True, "self.model = self.model.npu()", CUDA_TO_NPU),
      C("data = data.cuda()", "tensor_to_device", "replace", True, "data = data.to(next(self.model.parameters()).device)",
        "follow the model's device (the demos move the model themselves)"),
  ])
