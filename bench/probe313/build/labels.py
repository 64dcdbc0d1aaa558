# Labels for probe313 (salient / camouflaged object detection, CUDA -> Ascend NPU).
# One entry per upstream file; one C(...) per line a careful porter would edit.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: import torch_npu right after torch so .npu()/torch.npu exist "
               "(mandatory before torch_npu 2.5.1 autoload, still recommended after)")
CKPT_NOTE = ("checkpoint was written from CUDA tensors; torch.load without map_location tries to restore "
             "CUDA storages and raises on a host without CUDA")

# ---------------------------------------------------------------- BASNet
E("basnet_train", "basnet_train.py", "explicit_replacement",
  "BASNet (CVPR'19) basnet_train.py: module-level trainer, Variable(...).cuda(), hybrid BCE+SSIM+IoU loss",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if torch.npu.is_available():",
        "torch.cuda.is_available() is False on an NPU host, so the net silently trains on CPU"),
      C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "model to NPU"),
      C("if torch.cuda.is_available():  # GPU path", "torch_cuda_api", "replace", True,
        "if torch.npu.is_available():  # NPU path",
        "same CPU fallback for the batches; must agree with the model placement"),
      C("Variable(inputs.cuda(), requires_grad=False), Variable(labels.cuda(),", "tensor_to_device", "replace", True,
        "inputs_v, labels_v = Variable(inputs.npu(), requires_grad=False), Variable(labels.npu(),",
        "batch to NPU (both tensors on one line)"),
  ])

E("basnet_test", "basnet_test.py", "explicit_replacement",
  "BASNet basnet_test.py: inference over a folder, GPU-saved checkpoint loaded without map_location",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("net.load_state_dict(torch.load(model_dir))", "tensor_to_device", "replace", True,
        "net.load_state_dict(torch.load(model_dir, map_location='cpu'))", CKPT_NOTE),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "False on NPU host -> silent CPU inference"),
      C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "model to NPU"),
      C("if torch.cuda.is_available(): # run on GPU if we have one", "torch_cuda_api", "replace", True,
        "if torch.npu.is_available(): # run on NPU if we have one", "input placement branch"),
      C("inputs_test = Variable(inputs_test.cuda())", "tensor_to_device", "replace", True,
        "inputs_test = Variable(inputs_test.npu())", "input to NPU"),
  ])

SSIM_NOTE = ("is_cuda is False for NPU tensors, so this branch is skipped on NPU; the following "
             "window.type_as(img1) is to(img1.options()) and already moves the window to the NPU, so the "
             "unchanged code still runs - port for clarity only")
E("basnet_ssim", "pytorch_ssim/__init__.py", "explicit_replacement",
  "pytorch_ssim as vendored by BASNet / U2-Net forks: gaussian window moved with is_cuda / .cuda(get_device())",
  [
      C("=if img1.is_cuda:", "device_type", "replace", False, "if img1.is_npu:", SSIM_NOTE),
      C("=window = window.cuda(img1.get_device())", "tensor_to_device", "replace", False,
        "window = window.npu(img1.get_device())",
        "dead on NPU unless the is_cuda test above is ported; then it must become .npu()"),
      C("if img1.is_cuda:  # keep the gaussian window", "device_type", "replace", False,
        "if img1.is_npu:  # keep the gaussian window on the same NPU as the prediction", SSIM_NOTE),
      C("window = window.cuda(img1.get_device())  # same device as img1", "tensor_to_device", "replace", False,
        "window = window.npu(img1.get_device())  # same device as img1", "LOGSSIM copy of the same idiom"),
      C("if img1.is_cuda and img1.get_device() >= 0:", "device_type", "replace", False,
        "if img1.is_npu and img1.get_device() >= 0:", SSIM_NOTE),
      C("window = window.cuda(img1.get_device())  # functional form", "tensor_to_device", "replace", False,
        "window = window.npu(img1.get_device())  # functional form", "functional ssim() copy of the same idiom"),
  ])

# ---------------------------------------------------------------- U^2-Net
E("u2net_train", "u2net_train.py", "explicit_replacement",
  "U2-Net (PR'20) u2net_train.py: deep-supervision BCE fusion, Variable(...).cuda(), optional resume",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "False on NPU host -> silent CPU training"),
      C("if torch.cuda.is_available():  # validation batch to GPU", "torch_cuda_api", "replace", True,
        "if torch.npu.is_available():  # validation batch to NPU", "validation inputs would stay on CPU while the "
        "model is on the NPU -> device mismatch"),
      C("val_inputs, val_labels = val_inputs.cuda(), val_labels.cuda()", "tensor_to_device", "replace", True,
        "val_inputs, val_labels = val_inputs.npu(), val_labels.npu()", "validation batch to NPU"),
      C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "model to NPU"),
      C("map_location='cuda:0'", "device_type", "replace", True,
        "net.load_state_dict(torch.load(resume_path, map_location='npu:0'))",
        "map_location 'cuda:0' raises without CUDA"),
      C("if torch.cuda.is_available():  # inputs to GPU", "torch_cuda_api", "replace", True,
        "if torch.npu.is_available():  # inputs to NPU", "batch placement branch"),
      C("Variable(inputs.cuda(), requires_grad=False), Variable(labels.cuda(),", "tensor_to_device", "replace", True,
        "inputs_v, labels_v = Variable(inputs.npu(), requires_grad=False), Variable(labels.npu(),",
        "batch to NPU"),
  ])

E("u2net_test", "u2net_test.py", "explicit_replacement",
  "U2-Net u2net_test.py: cuda/cpu branches around torch.load, forward timing with synchronize",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "False on NPU host -> takes the CPU branch"),
      C("if torch.cuda.is_available():  # honour --gpu", "torch_cuda_api", "replace", True,
        "if torch.npu.is_available():  # honour --gpu", "False on NPU host -> --gpu silently ignored"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
        "raises without CUDA once the guard above is ported"),
      C("net.load_state_dict(torch.load(model_dir))", "tensor_to_device", "replace", True,
        "net.load_state_dict(torch.load(model_dir, map_location='cpu'))",
        CKPT_NOTE + " (once the branch above is ported to NPU)"),
      C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "model to NPU"),
      C("if torch.cuda.is_available():  # move the batch to GPU", "torch_cuda_api", "replace", True,
        "if torch.npu.is_available():  # move the batch to NPU", "input placement branch"),
      C("inputs_test = Variable(inputs_test.cuda())", "tensor_to_device", "replace", True,
        "inputs_test = Variable(inputs_test.npu())", "input to NPU"),
      C("if inputs_test.is_cuda:", "device_type", "replace", False, "if inputs_test.is_npu:",
        "False on NPU, so the sync is skipped and the printed forward time only measures the async launch; "
        "log value only"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", False, "torch.npu.synchronize()",
        "dead on NPU until the is_cuda test is ported; then must be torch.npu.synchronize()"),
  ])

# ---------------------------------------------------------------- C2FNet (COD)
E("c2fnet_model", "lib/C2FNet.py", "explicit_replacement",
  "C2FNet (IJCAI'21, camouflaged) model file: Res2Net + RFB + CBAM-style CIM, ACFM/DGCM, __main__ FPS smoke test",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "needed for the __main__ smoke test (.npu() only exists once torch_npu is imported on torch < 2.5.1); "
        "when imported as a library the entry script's import suffices"),
      C("self.max_pool = nn.AdaptiveMaxPool2d(1)", "unsupported_op_workaround", "replace", False,
        "self.max_pool = lambda t: torch.amax(t, dim=(2, 3), keepdim=True)",
        "Ascend's PyTorch 2.7.1 API list marks nn.AdaptiveMaxPool2d unsupported (x) and msFmkTransplt lists it, "
        "but op-plugin registers an adaptive_max_pool2d kernel; a global max is a plain amax - unconfirmed"),
      C("model = C2FNet().cuda()", "tensor_to_device", "replace", True, "model = C2FNet().npu()",
        "smoke test model to NPU"),
      C("input_tensor = torch.randn(1, 3, 352, 352).cuda()", "tensor_to_device", "replace", True,
        "input_tensor = torch.randn(1, 3, 352, 352).npu()", "smoke test input to NPU"),
  ])

# ---------------------------------------------------------------- F3Net
E("f3net_train", "train.py", "explicit_replacement",
  "F3Net (AAAI'20) train.py: NVIDIA apex amp O2, CUDA_VISIBLE_DEVICES set in-process, triangular LR",
  [
      C('os.environ["CUDA_VISIBLE_DEVICES"] = "0"', "env_var", "replace", False,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "0"',
        "ignored by the Ascend runtime, but it pins device 0, which is also the default NPU - harmless as shipped"),
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("=from apex import amp", "amp", "removal", True, None,
        "NVIDIA apex amp needs CUDA tensors (checks params are torch.cuda.*); switch to torch.npu.amp "
        "(alternative: build Ascend's patched apex)"),
      C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "model to NPU"),
      C("net, optimizer = amp.initialize(net, optimizer, opt_level='O2')", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler()", "apex O2 initialize -> native NPU loss scaler"),
      C("image, mask = image.cuda().float(), mask.cuda().float()", "tensor_to_device", "replace", True,
        "image, mask = image.npu().float(), mask.npu().float()", "batch to NPU"),
      C("out1u, out2u, out2r, out3r, out4r, out5r = net(image)", "amp", "replace", True,
        "with torch.npu.amp.autocast(): out1u, out2u, out2r, out3r, out4r, out5r = net(image)",
        "keeps the mixed-precision recipe apex O2 gave (batch 32 at 352px was tuned for it); GradScaler alone "
        "would silently train in fp32"),
      C("with amp.scale_loss(loss, optimizer) as scale_loss:", "amp", "replace", True,
        "scaler.scale(loss).backward()", "apex loss scaling -> GradScaler"),
      C("=scale_loss.backward()", "amp", "removal", True, None, "folded into scaler.scale(loss).backward()"),
      C("=optimizer.step()", "amp", "replace", True, "scaler.step(optimizer); scaler.update()",
        "with a GradScaler the step must go through the scaler or the scaled grads are applied"),
  ])

E("f3net_test", "test.py", "explicit_replacement",
  "F3Net test.py: Test class saving maps for five SOD benchmarks, plus an FPS helper with cuda synchronize",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("=self.net.cuda()", "tensor_to_device", "replace", True, "self.net.npu()", "model to NPU"),
      C("image, mask = image.cuda().float(), mask.cuda().float()", "tensor_to_device", "replace", True,
        "image, mask = image.npu().float(), mask.npu().float()", "batch to NPU (show)"),
      C("x = torch.randn(1, 3, 352, 352).cuda()", "tensor_to_device", "replace", True,
        "x = torch.randn(1, 3, 352, 352).npu()", "dummy input to NPU"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA (lazy CUDA init)"),
      C("torch.cuda.synchronize()  # wait for the last forward", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # wait for the last forward", "raises without CUDA"),
      C("image = image.cuda().float()", "tensor_to_device", "replace", True, "image = image.npu().float()",
        "batch to NPU (save)"),
      C("thresholds = torch.linspace(0, 1 - 1e-10, 256).cuda()", "tensor_to_device", "replace", True,
        "thresholds = torch.linspace(0, 1 - 1e-10, 256).npu()", "threshold vector must sit with the NPU predictions"),
      C("image = image.cuda(non_blocking=True).float()", "tensor_to_device", "replace", True,
        "image = image.npu(non_blocking=True).float()", "batch to NPU (evaluate)"),
      C("mask  = mask.cuda(non_blocking=True).float()", "tensor_to_device", "replace", True,
        "mask  = mask.npu(non_blocking=True).float()", "mask to NPU (evaluate)"),
  ])

E("f3net_net", "net.py", "explicit_replacement",
  "F3Net net.py: ResNet-50 backbone, CFM cascaded decoders, snapshot loading in initialize()",
  [
      C("self.load_state_dict(torch.load(self.cfg.snapshot))", "tensor_to_device", "replace", True,
        "self.load_state_dict(torch.load(self.cfg.snapshot, map_location='cpu'))",
        CKPT_NOTE + " (snapshots are saved by train.py from the GPU model)"),
  ])

E("f3net_dataset", "dataset.py", "explicit_replacement",
  "F3Net dataset.py with the CUDA-stream DataPrefetcher that GCPANet / CTDNet-style SOD repos add",
  [
      C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "self.stream = torch.npu.Stream()",
        "CUDA stream creation raises without CUDA"),
      C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True,
        "with torch.npu.stream(self.stream):", "side-stream context"),
      C("self.next_image = self.next_image.cuda(non_blocking=True).float()", "tensor_to_device", "replace", True,
        "self.next_image = self.next_image.npu(non_blocking=True).float()", "async H2D copy"),
      C("self.next_mask  = self.next_mask.cuda(non_blocking=True).float()", "tensor_to_device", "replace", True,
        "self.next_mask  = self.next_mask.npu(non_blocking=True).float()", "async H2D copy"),
      C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
        "torch.npu.current_stream().wait_stream(self.stream)", "stream sync"),
      C("image.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
        "image.record_stream(torch.npu.current_stream())", "record_stream needs the NPU current stream"),
      C("mask.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
        "mask.record_stream(torch.npu.current_stream())", "record_stream needs the NPU current stream"),
  ])

# ---------------------------------------------------------------- PraNet
E("pranet_train", "MyTrain.py", "explicit_replacement",
  "PraNet (MICCAI'20) MyTrain.py: multi-scale training, Variable(...).cuda(), --gpu -> CUDA_VISIBLE_DEVICES",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("images = Variable(images).cuda()", "tensor_to_device", "replace", True, "images = Variable(images).npu()",
        "batch to NPU"),
      C("gts = Variable(gts).cuda()", "tensor_to_device", "replace", True, "gts = Variable(gts).npu()",
        "masks to NPU"),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = opt.gpu", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = opt.gpu",
        "--gpu would be silently ignored on NPU (set before first device use, so in-process setting still works)"),
      C("model = PraNet().cuda()", "tensor_to_device", "replace", True, "model = PraNet().npu()", "model to NPU"),
      C("=image = image.cuda()", "tensor_to_device", "replace", True, "image = image.npu()",
        "per-epoch Dice validation input to NPU"),
  ])

E("pranet_utils", "utils/utils.py", "explicit_replacement",
  "PraNet / SINet-V2 utils/utils.py: clip_gradient, adjust_lr, AvgMeter, thop CalParams, seed + FPS helpers",
  [
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
        "silent no-op without CUDA; torch.manual_seed(seed) on the line above already seeds the NPU generator "
        "(custom-device seeding in torch>=2.1 - unconfirmed in the notes)"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "same as above"),
      C("x = torch.randn(*input_size, device='cuda')", "device_type", "replace", True,
        "x = torch.randn(*input_size, device='npu')", "'cuda' device string raises without CUDA"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA"),
      C("torch.cuda.synchronize()  # flush queued kernels", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # flush queued kernels", "raises without CUDA"),
  ])

E("pranet_model", "lib/PraNet_Res2Net.py", "explicit_replacement",
  "PraNet lib/PraNet_Res2Net.py: RFB + partial decoder + reverse attention, __main__ smoke test on GPU",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "needed for the __main__ smoke test (run as `python -m lib.PraNet_Res2Net`); entry scripts import their own"),
      C("ras = PraNet().cuda()", "tensor_to_device", "replace", True, "ras = PraNet().npu()", "smoke test model"),
      C("input_tensor = torch.randn(1, 3, 352, 352).cuda()", "tensor_to_device", "replace", True,
        "input_tensor = torch.randn(1, 3, 352, 352).npu()", "smoke test input"),
  ])

# ---------------------------------------------------------------- SINet-V2
E("sinet_train", "MyTrain_Val.py", "explicit_replacement",
  "SINet-V2 (TPAMI'21) MyTrain_Val.py: --gpu_id -> CUDA_VISIBLE_DEVICES, cudnn.benchmark, train+val with best-epoch "
  "tracking, optional nn.DataParallel",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("images = images.cuda()", "tensor_to_device", "replace", True, "images = images.npu()", "batch to NPU"),
      C("gts = gts.cuda()", "tensor_to_device", "replace", True, "gts = gts.npu()", "masks to NPU"),
      C("=image = image.cuda()", "tensor_to_device", "replace", True, "image = image.npu()", "val input to NPU"),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = "0"', "env_var", "replace", False,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "0"',
        "ignored by the Ascend runtime; device 0 is the NPU default anyway, so only the other branches misbehave"),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = "1"', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "1"', "ignored by the Ascend runtime: --gpu_id 1 silently runs on device 0"),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = opt.gpu_id', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = opt.gpu_id', "ignored by the Ascend runtime: wrong/too many devices visible"),
      C("model = Network(channel=32).cuda()", "tensor_to_device", "replace", True,
        "model = Network(channel=32).npu()", "model to NPU"),
      C("model = nn.DataParallel(model)", "distributed_framework", "replace", True,
        "pass  # nn.DataParallel is unsupported on NPU: launch with torchrun + DDP(backend='hccl') instead",
        "Ascend's API list marks torch.nn.DataParallel unsupported (x); reachable with --gpu_id 0,1"),
      C("model.load_state_dict(torch.load(opt.load))", "tensor_to_device", "replace", True,
        "model.load_state_dict(torch.load(opt.load, map_location='cpu'))", CKPT_NOTE),
  ])

E("sinet_test", "MyTesting.py", "explicit_replacement",
  "SINet-V2 MyTesting.py (fork with a --gpu_id device object): one torch.device drives everything",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("device = torch.device('cuda:{}'.format(opt.gpu_id))", "device_type", "replace", True,
        "device = torch.device('npu:{}'.format(opt.gpu_id))",
        "single point of device choice; map_location/model.to/image.to all follow it"),
      C("print('Inference on', torch.cuda.get_device_name(device))", "torch_cuda_api", "replace", True,
        "print('Inference on', torch.npu.get_device_name(device))", "raises without CUDA"),
  ])

# ---------------------------------------------------------------- SOD evaluator
EVAL_NOTE = ("the evaluator already runs on CPU when no GPU is found (use_cuda is False on an NPU host) and "
             "gives identical numbers; moving it to the NPU is a speed-up only")
E("sod_evaluator", "evaluator.py", "explicit_replacement",
  "Evaluate-SOD style torch metric toolbox (MAE / max-F / max-E / S-measure) vendored in many SOD/COD repos, "
  "--cuda flag and self.cuda bool",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "only needed once the metric kernels are moved to the NPU"),
      C("pred, gt = pred.cuda(), gt.cuda()", "tensor_to_device", "replace", False, "pred, gt = pred.npu(), gt.npu()",
        EVAL_NOTE),
      C("scores = scores.cuda()", "tensor_to_device", "replace", False, "scores = scores.npu()", EVAL_NOTE),
      C("score = torch.zeros(num).cuda()", "tensor_to_device", "replace", False, "score = torch.zeros(num).npu()",
        EVAL_NOTE),
      C("=thlist = torch.linspace(0, 1 - 1e-10, num).cuda()", "tensor_to_device", "replace", False,
        "thlist = torch.linspace(0, 1 - 1e-10, num).npu()", EVAL_NOTE),
      C("prec, recall = torch.zeros(num).cuda(), torch.zeros(num).cuda()", "tensor_to_device", "replace", False,
        "prec, recall = torch.zeros(num).npu(), torch.zeros(num).npu()", EVAL_NOTE),
      C("thlist = torch.linspace(0, 1 - 1e-10, num).cuda()  # thresholds", "tensor_to_device", "replace", False,
        "thlist = torch.linspace(0, 1 - 1e-10, num).npu()  # thresholds for the PR curve", EVAL_NOTE),
      C("X = torch.eye(1).cuda() * round(cols / 2)", "tensor_to_device", "replace", False,
        "X = torch.eye(1).npu() * round(cols / 2)", EVAL_NOTE),
      C("Y = torch.eye(1).cuda() * round(rows / 2)", "tensor_to_device", "replace", False,
        "Y = torch.eye(1).npu() * round(rows / 2)", EVAL_NOTE),
      C("i = torch.from_numpy(np.arange(0, cols)).cuda().float()", "tensor_to_device", "replace", False,
        "i = torch.from_numpy(np.arange(0, cols)).npu().float()", EVAL_NOTE),
      C("j = torch.from_numpy(np.arange(0, rows)).cuda().float()", "tensor_to_device", "replace", False,
        "j = torch.from_numpy(np.arange(0, rows)).npu().float()", EVAL_NOTE),
      C("use_cuda = cfg.cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", False,
        "use_cuda = cfg.cuda and torch.npu.is_available()",
        "False on NPU host -> documented CPU fallback; port to get the NPU speed-up"),
  ])

# ---------------------------------------------------------------- ZoomNet
E("zoomnet_main", "main.py", "device_branch_or_abstraction",
  "ZoomNet (CVPR'22) main.py with torchrun/DDP support added: config-driven device and backend, "
  "torch.cuda.amp autocast, GPU memory in the log line",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.set_device(cfg.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(cfg.local_rank)", "raises without CUDA (distributed path)"),
      C("with torch.cuda.amp.autocast(enabled=cfg.train.use_amp):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=cfg.train.use_amp):",
        "CUDA autocast disables itself without CUDA: use_amp=True silently trains in fp32 (2x memory)"),
      C("gpu_mem = f\"{torch.cuda.max_memory_allocated() / 1024 ** 3:.2f}G\"", "torch_cuda_api", "replace", False,
        "gpu_mem = f\"{torch.npu.max_memory_allocated() / 1024 ** 3:.2f}G\"",
        "returns 0 without an initialised CUDA context; log value only"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA; NPU cache not released between epochs"),
      C("from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler", "torch_cuda_api",
        "replace", True, "from torch_npu.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler",
        "--profile: torch.profiler has no NPU activity, the trace would silently contain host events only"),
      C("activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],", "torch_cuda_api", "replace", True,
        "activities=[ProfilerActivity.CPU, ProfilerActivity.NPU],", "CUDA activity -> NPU activity"),
      C('sort_by="cuda_time_total"', "torch_cuda_api", "replace", False,
        'LOGGER.info(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=15))',
        "CUDA time column is empty/absent for an NPU run; the Ascend profiler writes its own summaries under the "
        "trace dir - unconfirmed whether key_averages() is available there"),
      C("torch.cuda.get_device_name(0)", "torch_cuda_api", "replace", True,
        "LOGGER.info(f\"{cfg.exp_name} on {torch.npu.device_count()} NPU(s): {torch.npu.get_device_name(0)}\")",
        "get_device_name raises without CUDA (device_count on the same line would print 0)"),
  ])

E("zoomnet_ptutils", "utils/pt_utils.py", "device_branch_or_abstraction",
  "ZoomNet / lartpang-style utils/pt_utils.py: seeding + cudnn flags, to_device, NCCL-aware reduce_dict, "
  "GradScaler wrapper",
  [
      C("torch.cuda.manual_seed(seed)  # 为当前GPU设置随机种子", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed(seed)  # 为当前NPU设置随机种子",
        "silent no-op without CUDA; torch.manual_seed above already seeds the NPU generator (unconfirmed)"),
      C("torch.cuda.manual_seed_all(seed)  # 为所有GPU设置随机种子", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(seed)  # 为所有NPU设置随机种子", "same as above"),
      C('os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"', "env_var", "replace", False,
        'os.environ["HCCL_DETERMINISTIC"] = "true"',
        "cuBLAS-only knob, no effect on NPU; for deterministic multi-NPU reductions HCCL_DETERMINISTIC is the "
        "relevant switch"),
      C('def to_device(data, device="cuda"):', "device_type", "replace", False,
        'def to_device(data, device="npu"):', "default only - every caller passes cfg.device / model.device"),
      C('if dist.get_backend() == "nccl":', "dist_backend", "replace", True,
        'if dist.get_backend() in ("nccl", "hccl"):',
        "backend string comparison is not rewritten by any tool; under hccl the branch is skipped and CPU tensors "
        "are handed to an HCCL all_reduce"),
      C('return torch.device("cuda", torch.cuda.current_device())', "device_type", "replace", True,
        'return torch.device("npu", torch.npu.current_device())', "reduce buffer must live on the NPU"),
      C("self.scaler = torch.cuda.amp.GradScaler(enabled=use_fp16)", "amp", "replace", True,
        "self.scaler = torch.npu.amp.GradScaler(enabled=use_fp16)",
        "CUDA GradScaler disables itself without CUDA; once autocast is on NPU fp16 grads would go unscaled"),
      C("reserved = torch.cuda.memory_reserved(device) / scale", "torch_cuda_api", "replace", False,
        "reserved = torch.npu.memory_reserved(device) / scale", "returns 0 without CUDA; log helper only"),
      C("peak = torch.cuda.max_memory_allocated(device) / scale", "torch_cuda_api", "replace", False,
        "peak = torch.npu.max_memory_allocated(device) / scale", "returns 0 without CUDA; log helper only"),
  ])

E("zoomnet_config", "configs/zoomnet/zoomnet.py", "device_branch_or_abstraction",
  "ZoomNet mmcv-style python config (configs/zoomnet/zoomnet.py) carrying device and dist backend",
  [
      C('=device = "cuda"', "device_type", "replace", True, 'device = "npu"',
        "main.py builds cfg.device = f\"{cfg.device}:{local_rank}\" from this value"),
      C('dist_params = dict(backend="nccl", port=29500)', "dist_backend", "replace", True,
        'dist_params = dict(backend="hccl", port=29500)', "main.py passes this straight to init_process_group"),
  ])

E("zoomnet_dist_sh", "tools/dist_train.sh", "explicit_replacement",
  "ZoomNet/ZoomNeXt-style tools/dist_train.sh: CUDA_VISIBLE_DEVICES, NCCL knobs, nvidia-smi, "
  "torch.distributed.launch",
  [
      C("=set -e", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment (LD_LIBRARY_PATH, ASCEND_OPP_PATH...) must be sourced before torch_npu loads"),
      C("export CUDA_VISIBLE_DEVICES=${GPU_IDS}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${GPU_IDS}", "ignored by the Ascend runtime"),
      C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None,
        "GPU P2P workaround; HCCL does not read it"),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
        "NCCL log level has no HCCL effect; CANN logging is ASCEND_GLOBAL_LOG_LEVEL (mapping unconfirmed)"),
      C('echo "Using GPUs: ${CUDA_VISIBLE_DEVICES}', "env_var", "replace", False,
        'echo "Using NPUs: ${ASCEND_RT_VISIBLE_DEVICES} (nproc_per_node=${GPUS})"', "log line only"),
      C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "torch_cuda_api", "replace", True,
        "npu-smi info", "nvidia-smi does not exist on an Ascend host and `set -e` aborts the script"),
      C("CUDA_VISIBLE_DEVICES=${GPU_IDS%%,*} python main.py \\", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=${GPU_IDS%%,*} python main.py \\", "evaluation run device selection"),
  ])

# ---------------------------------------------------------------- BiRefNet
E("birefnet_train", "train.py", "device_branch_or_abstraction",
  "BiRefNet (CAAI AIR'24) train.py: --dist DDP with NCCL, int LOCAL_RANK device, optional accelerate, "
  "torch.compile, fp16 autocast + GradScaler",
  [
      C("os.environ.setdefault('PYTORCH_CUDA_ALLOC_CONF', 'expandable_segments:True')", "env_var", "replace", False,
        "os.environ.setdefault('PYTORCH_NPU_ALLOC_CONF', 'expandable_segments:True')",
        "CUDA allocator knob ignored on NPU; NPU equivalent exists (needs HDK >= 23.0.0) - memory behaviour only"),
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('init_process_group(backend="nccl", timeout=datetime.timedelta(seconds=3600*10))', "dist_backend", "replace",
        True, 'init_process_group(backend="hccl", timeout=datetime.timedelta(seconds=3600*10))',
        "NCCL backend not available on NPU"),
      C('device = int(os.environ["LOCAL_RANK"])', "device_type", "replace", True,
        'device = torch.device("npu", int(os.environ["LOCAL_RANK"]))',
        "a bare int device is a CUDA ordinal for .to()/DDP (transfer_to_npu rewrites exactly this case)"),
      C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)",
        "raises without CUDA"),
      C("=import torch.optim as optim", "unsupported_op_workaround", "npu_only_addition", False,
        "import torchvision_npu  # NPU kernels for torchvision.ops.deform_conv2d (ASPPDeformable decoder)",
        "config selects dec_att='ASPPDeformable' (torchvision deform_conv2d); without torchvision_npu the op has no "
        "NPU kernel and runs through torch_npu's CPU fallback - slow, not wrong"),
      C("model = torch.compile(model, mode=['default', 'reduce-overhead', 'max-autotune'][2])", "compile_mode",
        "replace", False, "model = torch.compile(model, mode='default')",
        "max-autotune relies on Triton GEMM autotuning / CUDA graphs; Inductor on NPU exists from torch_npu 2.6 "
        "(torch 2.5.1 is pinned) - behaviour on this stack unconfirmed, keep compile simple or off"),
      C("fused=torch.cuda.is_available())", "fused_optimizer", "replace", False,
        "optimizer = torch_npu.optim.NpuFusedAdamW(params=model.parameters(), lr=config.lr, weight_decay=1e-2)",
        "on NPU the flag evaluates False and plain AdamW runs (correct); Ascend's performance advice maps AdamW to "
        "NpuFusedAdamW (faster, more memory)"),
      C("self.scaler = torch.cuda.amp.GradScaler(", "amp", "replace", True,
        "self.scaler = torch.npu.amp.GradScaler(enabled=(mixed_dtype == torch.float16 and not args.use_accelerate))",
        "CUDA GradScaler disables itself without CUDA"),
      C("with torch.amp.autocast(device_type='cuda', dtype=mixed_dtype,", "amp", "replace", True,
        "with torch.amp.autocast(device_type='npu', dtype=mixed_dtype, enabled=mixed_dtype is not None and not args.use_accelerate):",
        "device_type='cuda' autocast is disabled without CUDA: fp16 config silently trains in fp32"),
      C("torch.cuda.max_memory_reserved()", "torch_cuda_api", "replace", False,
        "info_loss += ', mem: {:.1f}GB'.format(torch.npu.max_memory_reserved() / 1024 ** 3)",
        "returns 0 without CUDA; log value only"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA"),
  ])

E("birefnet_config", "config.py", "device_branch_or_abstraction",
  "BiRefNet config.py: task/backbone/loss switches, compile + precision flags, int device index",
  [
      C("if self.mixed_precision == 'bf16' and torch.cuda.is_available() and torch.cuda.get_device_capability()[0] < 8:",
        "device_capability_check", "replace", False,
        "if self.mixed_precision == 'bf16' and torch.npu.is_available() and not torch.npu.is_bf16_supported():",
        "guarded by torch.cuda.is_available() (False on NPU) and fp16 is selected, so it never fires; but a plain "
        "cuda->npu rename would crash: NPU get_device_capability returns None unless TORCH_NPU_DEVICE_CAPABILITY is set"),
      C("self.device = [0, 'cpu'][0]", "device_type", "replace", True,
        "self.device = ['npu:0', 'cpu'][0]     # a bare 0 means cuda:0",
        "used as .to(config.device) in train.py / inference.py; int 0 is a CUDA ordinal"),
  ])

E("birefnet_inference", "inference.py", "device_branch_or_abstraction",
  "BiRefNet inference.py: folder inference over checkpoints, optional half precision chosen by SM capability, "
  "CUDA-event latency benchmark",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("def inference(model, data_loader_test, pred_root, method, testset, device=0, dtype=None):", "device_type",
        "replace", False,
        "def inference(model, data_loader_test, pred_root, method, testset, device='npu:0', dtype=None):",
        "default int 0 = cuda:0, but every caller passes config.device"),
      C("starter, ender = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)",
        "torch_cuda_api", "replace", True,
        "starter, ender = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)",
        "--benchmark path: CUDA events raise without CUDA"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA"),
      C("major, _ = torch.cuda.get_device_capability()", "device_capability_check", "replace", True,
        "major, _ = (8, 0) if torch.npu.is_bf16_supported() else (7, 0)",
        "--half path: raises without CUDA; NPU get_device_capability returns None (not an SM version)"),
  ])

E("birefnet_loss", "loss.py", "device_branch_or_abstraction",
  "BiRefNet loss.py: PixLoss (BCE/IoU/SSIM/...), SSIM window moved with is_cuda, Sobel edge loss built with "
  "torch.cuda.FloatTensor, fp32 island inside autocast",
  [
      C("kx = torch.cuda.FloatTensor([[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]).view(1, 1, 3, 3)", "torch_cuda_api",
        "replace", True,
        "kx = torch.tensor([[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]], dtype=torch.float32, device='npu').view(1, 1, 3, 3)",
        "torch.cuda.FloatTensor raises without CUDA (only built when lambdas_pix_last['edge'] is enabled)"),
      C("with torch.autocast(device_type='cuda', enabled=False):", "amp", "replace", True,
        "with torch.autocast(device_type='npu', enabled=False):",
        "a cuda-typed autocast(enabled=False) does not switch off NPU autocast, so BCE/SSIM would run in fp16 "
        "inside the NPU autocast region"),
      C("if img1.is_cuda:", "device_type", "replace", False, "if img1.is_npu:", SSIM_NOTE),
      C("window = window.cuda(img1.get_device())", "tensor_to_device", "replace", False,
        "window = window.npu(img1.get_device())", "dead on NPU unless the is_cuda test is ported"),
  ])

E("birefnet_train_sh", "train.sh", "explicit_replacement",
  "BiRefNet train.sh: task-dependent epochs parsed by config.py, CUDA_VISIBLE_DEVICES + torchrun, then inference",
  [
      C("=#!/bin/bash", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment before any python/torch_npu"),
      C("export TORCH_NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False,
        "export HCCL_ASYNC_ERROR_HANDLING=1", "NCCL watchdog knob; torch_npu's is HCCL_ASYNC_ERROR_HANDLING"),
      C("=CUDA_VISIBLE_DEVICES=${devices} \\", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=${devices} \\", "multi-device device selection ignored on NPU"),
      C("CUDA_VISIBLE_DEVICES=${devices} python train.py", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=${devices} python train.py --ckpt_dir ckpt/${method} --epochs ${epochs} \\",
        "single-device selection ignored on NPU"),
      C("CUDA_VISIBLE_DEVICES=${devices_test} python inference.py", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=${devices_test} python inference.py --pred_root e_preds --ckpt_folder ckpt/${method}",
        "test device selection ignored on NPU"),
  ])

E("birefnet_requirements", "requirements.txt", "explicit_replacement",
  "BiRefNet requirements.txt with the cu121 extra index and GPU-only extras",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu121", "device_type", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "pulls the CUDA build of torch on x86 (aarch64 falls back to the plain PyPI wheel); torch_npu is meant "
        "to sit on the CPU build - whether the CUDA build breaks it is unconfirmed"),
      C("=torch==2.5.1", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.5.1",
        "torch_npu wheel matching torch 2.5.1 (branch v2.5.1-7.0.0, CANN 8.1.RC1)"),
      C("=nvidia-ml-py", "unsupported_op_workaround", "removal", False, None,
        "NVML binding installs but has no NPU backend; nothing in the training path needs it"),
  ])

# ---------------------------------------------------------------- InSPyReNet / transparent-background
E("inspyrenet_remover", "transparent_background/Remover.py", "device_branch_or_abstraction",
  "transparent-background (InSPyReNet) Remover: auto device pick cuda > mps > cpu, fp16 on GPU, "
  "TorchScript trace cache",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "library used from user code; torch.npu must exist for the new device branch (guard with try/except "
        "ImportError to keep CUDA users working)"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
        "if hasattr(torch, 'npu') and torch.npu.is_available(): self.device = 'npu:0'  (then elif torch.cuda...)",
        "without an NPU branch the auto-pick silently lands on CPU"),
      C('self.fp16 = fp16 and "cuda" in str(self.device)', "device_type", "add_branch", False,
        'self.fp16 = fp16 and ("cuda" in str(self.device) or "npu" in str(self.device))',
        "device-string test silently turns --fp16 off on NPU; result still correct in fp32"),
      C("with torch.no_grad(), torch.cuda.amp.autocast(enabled=self.fp16):", "amp", "replace", False,
        "with torch.no_grad(), torch.autocast(device_type=torch.device(self.device).type, enabled=self.fp16):",
        "only matters once the fp16 test above admits NPU devices"),
      C('if "cuda" in str(self.device):', "device_type", "add_branch", False,
        'if "cuda" in str(self.device) or "npu" in str(self.device):',
        "string test skips the cache release on NPU; memory housekeeping only"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op without CUDA; would need the NPU call once the test above admits npu"),
  ])

E("inspyrenet_train", "run/Train.py", "explicit_replacement",
  "InSPyReNet (ACCV'22) run/Train.py: `import torch.cuda as cuda` alias, torch.cuda.amp imports, NCCL DDP, "
  "to_cuda(sample) helper",
  [
      C("import torch.cuda as cuda", "torch_cuda_api", "replace", True,
        "import torch_npu.npu as cuda  # keeps the cuda.set_device / cuda.device_count call sites",
        "every device call goes through this alias; re-pointing it also imports torch_npu"),
      C("from torch.cuda.amp.grad_scaler import GradScaler", "amp", "replace", True,
        "from torch_npu.npu.amp import GradScaler",
        "used when Train.Optimizer.mixed_precision is true; the CUDA scaler disables itself without CUDA"),
      C("from torch.cuda.amp.autocast_mode import autocast", "amp", "replace", True,
        "from torch_npu.npu.amp import autocast",
        "CUDA autocast is a silent no-op on NPU: mixed_precision would train in fp32"),
      C("dist.init_process_group(backend='nccl'", "dist_backend", "replace", True,
        "dist.init_process_group(backend='hccl', rank=args.local_rank, world_size=args.device_num)",
        "NCCL backend not available on NPU"),
      C("model = model.cuda(args.local_rank)", "tensor_to_device", "replace", True,
        "model = model.npu(args.local_rank)", "model to NPU (DDP path)"),
      C("=model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
        "model to NPU (single-device path)"),
  ])

# ---------------------------------------------------------------- container / environment files
E("demo_dockerfile", "Dockerfile", "explicit_replacement",
  "Dockerfile for a BiRefNet / transparent-background gradio demo on nvidia/cuda with cu121 torch wheels",
  [
      C("FROM nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04", "device_type", "replace", True,
        "FROM quay.io/ascend/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
        "torch_npu needs the CANN toolkit in the image; the CANN images also export the set_env.sh variables as ENV"),
      C("NVIDIA_VISIBLE_DEVICES=all \\", "env_var", "replace", False, "ASCEND_VISIBLE_DEVICES=0 \\",
        "read only by the NVIDIA container runtime; device mounting on Ascend is done by Ascend-Docker-Runtime / --device"),
      C("NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "NVIDIA-runtime-only variable"),
      C("RUN pip install torch==2.5.1 torchvision==0.20.1 --index-url https://download.pytorch.org/whl/cu121",
        "device_type", "replace", True,
        "RUN pip install torch==2.5.1 torchvision==0.20.1 --index-url https://download.pytorch.org/whl/cpu && pip install torch-npu==2.5.1",
        "--index-url replaces PyPI: the cu121 index has no matching aarch64 wheel and gives the CUDA build on x86; "
        "torch-npu itself is added here"),
      C("HEALTHCHECK --interval=60s --timeout=10s CMD nvidia-smi > /dev/null || exit 1", "torch_cuda_api", "replace",
        True, "HEALTHCHECK --interval=60s --timeout=10s CMD npu-smi info > /dev/null || exit 1",
        "nvidia-smi is absent, the container is reported unhealthy forever (npu-smi must be mounted in)"),
      C('CMD ["python", "app.py", "--device", "cuda:0"', "device_type", "replace", True,
        'CMD ["python", "app.py", "--device", "npu:0", "--server-name", "0.0.0.0", "--port", "7860"]',
        "explicit cuda:0 device raises on NPU"),
  ])

E("demo_compose", "docker-compose.yml", "explicit_replacement",
  "docker-compose.yml for the demo + a 4-GPU trainer: nvidia device reservation, runtime: nvidia",
  [
      C("- CUDA_VISIBLE_DEVICES=0", "env_var", "replace", False, "- ASCEND_RT_VISIBLE_DEVICES=0",
        "only one device is mounted into the container, so ignoring it changes nothing"),
      C("- PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", "replace", False,
        "- PYTORCH_NPU_ALLOC_CONF=expandable_segments:True", "allocator tuning only"),
      C("- ~/.cache/huggingface:/root/.cache/huggingface", "device_type", "npu_only_addition", True,
        "- /usr/local/Ascend/driver:/usr/local/Ascend/driver:ro",
        "without Ascend-Docker-Runtime the driver libraries (libascend_hal.so) must be mounted; add "
        "/usr/local/bin/npu-smi and /usr/local/dcmi too"),
      C("- driver: nvidia", "device_type", "replace", True,
        'devices: ["/dev/davinci0", "/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc"]',
        "compose cannot satisfy an nvidia device reservation on an Ascend host and refuses to start the service"),
      C("count: 1", "device_type", "removal", True, None, "part of the nvidia reservation block"),
      C("capabilities: [gpu]", "device_type", "removal", True, None, "part of the nvidia reservation block"),
      C("runtime: nvidia", "device_type", "replace", True, "runtime: ascend",
        "nvidia runtime is not installed; Ascend-Docker-Runtime registers as `ascend`"),
      C("- NVIDIA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", True, "- ASCEND_VISIBLE_DEVICES=0,1,2,3",
        "Ascend-Docker-Runtime mounts /dev/davinciN from ASCEND_VISIBLE_DEVICES; without it the trainer sees no NPU"),
      C("- NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "- HCCL_SOCKET_IFNAME=eth0",
        "single-node trainer: NIC choice only matters across hosts"),
  ])

E("cod_environment", "environment.yml", "explicit_replacement",
  "conda environment.yml shared by SINet-V2 / PraNet / ZoomNet forks: pytorch 1.13 + pytorch-cuda 11.7, "
  "mmcv-full from the cu117 find-links",
  [
      C("=- nvidia", "device_type", "removal", False, None, "NVIDIA conda channel, harmless once pytorch-cuda is gone"),
      C("=- pytorch=1.13.1", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
        "there is no torch_npu build for torch 1.13; 2.1.0 pairs with torch-npu 2.1.0.postN"),
      C("=- torchvision=0.14.1", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
        "must follow the torch bump"),
      C("=- pytorch-cuda=11.7", "device_type", "replace", True, "- cpuonly",
        "selects the CUDA build of pytorch and pulls the CUDA runtime; torch_npu sits on the CPU build"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post10",
        "torch_npu is only distributed as a pip wheel"),
      C("--find-links https://download.openmmlab.com/mmcv/dist/cu117/torch1.13/index.html", "device_type", "removal",
        False, None, "CUDA 11.7 / torch 1.13 mmcv wheel index"),
      C("- mmcv-full==1.7.1", "unsupported_op_workaround", "replace", False, "- mmcv==1.7.1",
        "mmcv-full ships CUDA ops; only mmcv.Config is used, so the op-less package is enough (whether the "
        "cu117 wheel would still import on NPU is unconfirmed)"),
  ])

E("demo_app", "app.py", "device_branch_or_abstraction",
  "BiRefNet HuggingFace-Space style gradio app.py: --device default picked by torch.cuda.is_available(), optional "
  "fp16, weights switch at runtime",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("parser.add_argument('--device', default='cuda:0' if torch.cuda.is_available() else 'cpu')", "torch_cuda_api",
        "add_branch", True,
        "parser.add_argument('--device', default='npu:0' if torch.npu.is_available() else ('cuda:0' if torch.cuda.is_available() else 'cpu'))",
        "without an NPU branch the default silently serves on CPU (the Dockerfile passes --device explicitly)"),
      C("if args.half and device.type == 'cuda':", "device_type", "add_branch", False,
        "if args.half and device.type in ('cuda', 'npu'):",
        "inference-only fp16: on NPU --half is silently ignored, output still correct"),
      C("with torch.autocast(device_type='cuda', dtype=torch.float16, enabled=args.half):", "amp", "replace", False,
        "with torch.autocast(device_type=device.type, dtype=torch.float16, enabled=args.half):",
        "cuda autocast is disabled without CUDA; inference fp16 only, correct in fp32"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA"),
  ])
