"""Labels for probe384: facial attribute, age and expression recognition (CUDA -> Ascend NPU).

One entry per upstream file; one C(...) per line a careful porter would edit for an explicit
torch_npu port (torch.npu.*, 'npu', hccl; no transfer_to_npu). `required` uses the complete-port
counterfactual described in README.md.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: torch.npu / 'npu' device strings need torch_npu registered; autoload only exists "
               "from torch_npu 2.5.1 and the project pins no torch version")

# ---------------------------------------------------------------------------------------------
# yu4u/age-estimation-pytorch (APPA-REAL apparent age, se_resnext50 via pretrainedmodels)
# ---------------------------------------------------------------------------------------------
E("agepy_train", "train.py", "device_branch_or_abstraction",
  "yu4u/age-estimation-pytorch train.py (yacs config, module-local device string, optional nn.DataParallel)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "torch.cuda.is_available() is False on an Ascend host, so training silently falls back to CPU; every "
      "later .to(device) follows this one variable"),
    C("model = nn.DataParallel(model)", "unsupported_op_workaround", "replace", True,
      'raise SystemExit("--multi_gpu: nn.DataParallel is not supported on Ascend NPU; launch one process per NPU with torchrun + DDP")',
      "torch.nn.DataParallel is ✘ on A2/A3 in Ascend's 2.7.1 API list; the --multi_gpu path is documented by the "
      "project, so it is a broken feature rather than a perf issue (flag-gated paths count as required)"),
])

E("agepy_dataset", "dataset.py", "device_branch_or_abstraction",
  "yu4u/age-estimation-pytorch dataset.py (imgaug FaceDataset)", [])

E("agepy_defaults", "defaults.py", "device_branch_or_abstraction",
  "yu4u/age-estimation-pytorch defaults.py (yacs defaults)", [])

E("agepy_demo", "demo.py", "device_branch_or_abstraction",
  "yu4u/age-estimation-pytorch demo.py (dlib detector + webcam/image-dir age demo)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "without it the demo silently runs on CPU; the checkpoint is already loaded with map_location='cpu'"),
])

E("agepy_test", "test.py", "device_branch_or_abstraction",
  "yu4u/age-estimation-pytorch test.py (APPA-REAL test MAE, reuses train.validate)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "silent CPU fallback otherwise; validate() moves batches with .to(device)"),
])

E("agepy_reqs", "requirements.txt", "explicit_replacement",
  "yu4u/age-estimation-pytorch requirements.txt", [
    C("torch>=1.4.0", "import_torch_npu", "npu_only_addition", False, "torch-npu  # must match the torch version and the installed CANN",
      "environment file; torch_npu is normally installed by hand against a given CANN/torch pair, so the line "
      "itself is not what makes the port work"),
])

# ---------------------------------------------------------------------------------------------
# WuJie1010/Facial-Expression-Recognition.Pytorch (FER2013 / CK+, VGG19 with ten-crop testing)
# ---------------------------------------------------------------------------------------------
E("fer_main", "mainpro_FER.py", "explicit_replacement",
  "WuJie1010/Facial-Expression-Recognition.Pytorch mainpro_FER.py (use_cuda flag + .cuda() chains, Variable)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_cuda = torch.npu.is_available()",
      "module-level flag gates every device move; left as is the whole script trains on CPU silently"),
    C("checkpoint = torch.load(os.path.join(path,'PrivateTest_model.t7'))", "device_type", "replace", False,
      "checkpoint = torch.load(os.path.join(path,'PrivateTest_model.t7'), map_location='cpu')",
      "--resume reloads this script's own checkpoint; once ported it is written from NPU tensors and reloads "
      "fine. Only a checkpoint carried over from a CUDA host would fail, hence not required"),
    C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "model to the NPU"),
    C("inputs, targets = inputs.cuda(), targets.cuda()", "tensor_to_device", "replace", True,
      "inputs, targets = inputs.npu(), targets.npu()", "training batch"),
    C("inputs, targets = inputs.cuda(), targets.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "inputs, targets = inputs.npu(), targets.npu(non_blocking=True)", "PublicTest batch"),
    C("inputs, targets = inputs.cuda(non_blocking=True), targets.cuda(non_blocking=True)", "tensor_to_device",
      "replace", True, "inputs, targets = inputs.npu(non_blocking=True), targets.npu(non_blocking=True)",
      "PrivateTest batch"),
])

E("fer_visualize", "visualize.py", "explicit_replacement",
  "WuJie1010/Facial-Expression-Recognition.Pytorch visualize.py (released VGG19 checkpoint, ten-crop, emoji plot)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("checkpoint = torch.load(os.path.join('FER2013_VGG19', 'PrivateTest_model.t7'))", "device_type", "replace", True,
      "checkpoint = torch.load(os.path.join('FER2013_VGG19', 'PrivateTest_model.t7'), map_location='cpu')",
      "the demo loads the released model, which mainpro_FER.py wrote from net.state_dict() after net.cuda(): its "
      "tensors are CUDA-tagged and torch.load without map_location fails on a host without CUDA"),
    C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "model to the NPU"),
    C("inputs = inputs.cuda()", "tensor_to_device", "replace", True, "inputs = inputs.npu()", "ten-crop batch"),
])

E("fer_utils", "utils.py", "explicit_replacement",
  "WuJie1010/Facial-Expression-Recognition.Pytorch utils.py (progress_bar, set_lr, clip_gradient)", [])

E("fer_vgg", "models/vgg.py", "explicit_replacement",
  "WuJie1010/Facial-Expression-Recognition.Pytorch models/vgg.py", [])

E("fer_dataset", "fer.py", "explicit_replacement",
  "WuJie1010/Facial-Expression-Recognition.Pytorch fer.py (h5py FER2013 dataset)", [])

# ---------------------------------------------------------------------------------------------
# yaoing/DAN (Distract your Attention: RAF-DB / AffectNet expression recognition)
# ---------------------------------------------------------------------------------------------
E("dan_net", "networks/dan.py", "device_branch_or_abstraction",
  "yaoing/DAN networks/dan.py (ResNet-18 MS-Celeb backbone + cross-attention heads)", [
    C("checkpoint = torch.load('./models/resnet18_msceleb.pth')", "device_type", "replace", False,
      "checkpoint = torch.load('./models/resnet18_msceleb.pth', map_location='cpu')",
      "third-party MS-Celeb weights: fails on an NPU host only if the file stores CUDA tensors, which is "
      "unconfirmed; map_location='cpu' is the safe edit"),
])

E("dan_train_raf", "train_rafdb.py", "device_branch_or_abstraction",
  "yaoing/DAN train_rafdb.py (torch.device('cuda:0') global, AffinityLoss centers on device)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "single device variable feeds the model, the AffinityLoss centers and every batch; otherwise silent CPU run"),
])

E("dan_train_affectnet", "train_affectnet8class.py", "explicit_replacement",
  "yaoing/DAN train_affectnet8class.py (--gpu via CUDA_VISIBLE_DEVICES, .cuda() chains; AMP added as in common forks)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("from torch.cuda.amp import autocast, GradScaler", "amp", "replace", True,
      "from torch_npu.npu.amp import autocast, GradScaler",
      "with --amp the CUDA autocast/GradScaler disable themselves (with a warning) when CUDA is absent, so the "
      "run silently trains in fp32; torch_npu.npu.amp.* is the documented NPU form"),
    C('self.centers = nn.Parameter(torch.randn(self.num_class, self.feat_dim).cuda())', "tensor_to_device",
      "replace", True, "self.centers = nn.Parameter(torch.randn(self.num_class, self.feat_dim).npu())",
      "class centers are created on the device inside the loss"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu',
      "--gpu is the script's device selector; the Ascend runtime ignores CUDA_VISIBLE_DEVICES, so --gpu 3 would "
      "silently train on NPU 0"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "model to the NPU"),
    C("criterion_cls = torch.nn.CrossEntropyLoss().cuda()", "tensor_to_device", "replace", False,
      "criterion_cls = torch.nn.CrossEntropyLoss().npu()",
      "CrossEntropyLoss without a class weight holds no parameters or buffers, so Module.cuda() applies to "
      "nothing and does not touch CUDA; edited only for consistency"),
    C("imgs = imgs.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "imgs = imgs.npu(non_blocking=True)", "training batch"),
    C("targets = targets.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "targets = targets.npu(non_blocking=True)", "training labels"),
    C("imgs = imgs.cuda()", "tensor_to_device", "replace", True, "imgs = imgs.npu()", "validation batch"),
    C("targets = targets.cuda()", "tensor_to_device", "replace", True, "targets = targets.npu()",
      "validation labels"),
    C("torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      'tqdm.write("NPU memory peak: %.1f MB" % (torch.npu.max_memory_allocated() / 1024 ** 2))',
      "log line only: torch.cuda memory stats return {} when CUDA was never initialised, so this prints 0 "
      "instead of failing; training is unaffected"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "torch.cuda.empty_cache() is a no-op when CUDA is not initialised; the NPU cache is simply not released "
      "(memory headroom only)"),
])

E("dan_demo", "demo.py", "device_branch_or_abstraction",
  "yaoing/DAN demo.py (Haar-cascade face + AffectNet-8 checkpoint, map_location=self.device)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "self.device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "checkpoint map_location, model and input all follow self.device; silent CPU run otherwise"),
])

# ---------------------------------------------------------------------------------------------
# WildChildren/MiVOLO (age & gender from face + person crops, YOLOv8 detector, timm VOLO backbone)
# ---------------------------------------------------------------------------------------------
E("mivolo_demo", "demo.py", "device_branch_or_abstraction",
  "WildChildren/MiVOLO demo.py (--device flag, image/video/YouTube input)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('parser.add_argument("--device", default="cuda"', "device_type", "replace", True,
      'parser.add_argument("--device", default="npu", type=str, help="Device (accelerator) to use.")',
      "the default device string is handed to MiVOLO and Detector; 'cuda' fails on torch.device use / .to()"),
])

E("mivolo_predictor", "mivolo/predictor.py", "device_branch_or_abstraction",
  "WildChildren/MiVOLO mivolo/predictor.py (Predictor wiring detector + MiVOLO)", [])

E("mivolo_model", "mivolo/model/mi_volo.py", "device_branch_or_abstraction",
  "WildChildren/MiVOLO mivolo/model/mi_volo.py (Meta from checkpoint, half precision, warmup)", [
    C('device: str = "cuda",', "device_type", "replace", False, 'device: str = "npu",',
      "default argument only; every caller in the project passes the device explicitly"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "guard around the warm-up synchronize: left as is it is False on an NPU host and the sync is skipped, "
      "which only makes warm-up timing asynchronous"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "once the guard is ported this call runs; torch.cuda.synchronize() raises on a torch build without CUDA"),
])

E("mivolo_detector", "mivolo/model/yolo_detector.py", "device_branch_or_abstraction",
  "WildChildren/MiVOLO mivolo/model/yolo_detector.py (ultralytics YOLOv8 face/person detector)", [
    C('device: str = "cuda",', "device_type", "replace", False, 'device: str = "npu",',
      "default argument only; Predictor always passes config.device"),
])

E("mivolo_timm", "mivolo/model/create_timm_model.py", "device_branch_or_abstraction",
  "WildChildren/MiVOLO mivolo/model/create_timm_model.py (timm factory + filtered checkpoint loading)", [])

E("mivolo_misc", "mivolo/data/misc.py", "device_branch_or_abstraction",
  "WildChildren/MiVOLO mivolo/data/misc.py (letterbox, IoU, face-person assignment, crop batching)", [])

E("mivolo_loss", "mivolo/loss.py", "device_branch_or_abstraction",
  "WildChildren/MiVOLO-style training loss (weighted age MSE + gender CE with a weight buffer)", [])

E("mivolo_train", "train.py", "explicit_replacement",
  "WildChildren/MiVOLO train.py (timm train.py derivative: torchrun/NCCL, native or apex AMP, prefetcher)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('if getattr(torch.cuda.amp, "autocast") is not None:', "amp", "replace", False,
      'if getattr(torch.npu.amp, "autocast") is not None:',
      "feature probe only: torch.cuda.amp.autocast exists on CPU-only torch builds too, so has_native_amp "
      "stays True either way"),
    C('args.device = "cuda:0"', "device_type", "replace", True, 'args.device = "npu:0"',
      "args.device is saved into args.yaml and used by helpers; wrong device type otherwise"),
    C('args.device = "cuda:%d" % args.local_rank', "device_type", "replace", True,
      'args.device = "npu:%d" % args.local_rank', "per-rank device string"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "binds each torchrun rank to its NPU; raises without CUDA"),
    C('torch.distributed.init_process_group(backend="nccl", init_method="env://")', "dist_backend", "replace", True,
      'torch.distributed.init_process_group(backend="hccl", init_method="env://")',
      "NCCL does not exist on Ascend; HCCL is the collective backend"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "model to the NPU"),
    C("model = model.to(memory_format=torch.channels_last)", "unsupported_op_workaround", "removal", False, None,
      "msFmkTransplt's README lists channels_last as not supported on NPU; behind --channels-last (off by "
      "default) and whether it errors or only slows down is unconfirmed"),
    C("amp_autocast = torch.cuda.amp.autocast", "amp", "replace", True,
      "amp_autocast = torch_npu.npu.amp.autocast",
      "with --amp (used by the project's launcher) CUDA autocast disables itself without CUDA and the run "
      "silently stays fp32"),
    C("loss_scaler = NativeScaler()", "amp", "replace", False, 'loss_scaler = NativeScaler(device="npu")',
      "timm's NativeScaler builds a CUDA GradScaler by default in the versions I remember; a device kwarg exists "
      "only in newer timm - unconfirmed from the knowledge base, so not marked required"),
    C("train_loss_fn = WeightedMSE(with_gender=args.num_classes == 3).cuda()", "tensor_to_device", "replace", True,
      "train_loss_fn = WeightedMSE(with_gender=args.num_classes == 3).npu()",
      "WeightedMSE registers a bin_weights buffer: left on CPU it is indexed with NPU tensors -> device mismatch"),
    C("validate_loss_fn = WeightedMSE(with_gender=args.num_classes == 3).cuda()", "tensor_to_device", "replace",
      True, "validate_loss_fn = WeightedMSE(with_gender=args.num_classes == 3).npu()", "same buffer as above"),
    C("input, target = input.cuda(), target.cuda()", "tensor_to_device", "replace", True,
      "input, target = input.npu(), target.npu()", "--no-prefetcher training path"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "per-step sync for batch timing; torch.cuda.synchronize() raises on a torch build without CUDA"),
    C("input = input.cuda()", "tensor_to_device", "replace", True, "input = input.npu()",
      "--no-prefetcher validation path"),
    C("target = target.cuda()", "tensor_to_device", "replace", True, "target = target.npu()",
      "--no-prefetcher validation path"),
    C("torch.cuda.synchronize()  # for accurate batch timing", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # for accurate batch timing", "validation loop sync; raises without CUDA"),
])

E("mivolo_loader", "mivolo/data/loader.py", "explicit_replacement",
  "WildChildren/MiVOLO mivolo/data/loader.py (timm PrefetchLoader: side CUDA stream, fast_collate)", [
    C("self.mean = torch.tensor([x * 255 for x in mean]).cuda()", "tensor_to_device", "replace", True,
      "self.mean = torch.tensor([x * 255 for x in mean]).npu().view(normalization_shape)",
      "normalisation constants live on the device"),
    C("self.std = torch.tensor([x * 255 for x in std]).cuda()", "tensor_to_device", "replace", True,
      "self.std = torch.tensor([x * 255 for x in std]).npu().view(normalization_shape)", "same"),
    C('num_splits=re_num_splits, device="cuda"', "device_type", "replace", True,
      'probability=re_prob, mode=re_mode, max_count=re_count, num_splits=re_num_splits, device="npu"',
      "timm RandomErasing draws its noise on this device and writes it into NPU batches; only built when "
      "re_prob > 0 (training with --reprob)"),
    C("stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "stream = torch.npu.Stream()",
      "side stream for host-to-device prefetch; torch.cuda.Stream cannot be created without CUDA"),
    C("with torch.cuda.stream(stream):", "torch_cuda_api", "replace", True, "with torch.npu.stream(stream):",
      "stream context"),
    C("next_input = next_input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "next_input = next_input.npu(non_blocking=True)", "async copy of the uint8 batch"),
    C("next_target = next_target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "next_target = next_target.npu(non_blocking=True)", "async copy of the targets"),
    C("torch.cuda.current_stream().wait_stream(stream)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().wait_stream(stream)",
      "compute stream must wait for the copy stream, otherwise the batch can be read before it lands"),
])

E("mivolo_eval", "eval_pretrained.py", "explicit_replacement",
  "WildChildren/MiVOLO eval_pretrained.py (benchmark mode with CUDA events and peak-memory report)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('parser.add_argument("--device", default="cuda"', "device_type", "replace", True,
      'parser.add_argument("--device", default="npu", type=str, help="Device (accelerator) to use.")',
      "default device string handed to MiVOLO"),
    C("torch.cuda.get_device_name(0)", "torch_cuda_api", "replace", True,
      '_logger.info(f"Benchmarking on {torch.npu.get_device_name(0)} with batch size {batch_size}")',
      "get_device_name initialises CUDA and raises on a build without it"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()", "resolves the current CUDA device and raises without CUDA"),
    C("start_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start_event = torch.npu.Event(enable_timing=True)",
      "torch.cuda.Event is a dummy class on builds without CUDA and cannot be instantiated"),
    C("end_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end_event = torch.npu.Event(enable_timing=True)", "same"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "needed before elapsed_time; raises without CUDA"),
    C("peak_mem = torch.cuda.max_memory_allocated() / 2 ** 20", "torch_cuda_api", "replace", True,
      "peak_mem = torch.npu.max_memory_allocated() / 2 ** 20",
      "does not raise (CUDA stats are {} when uninitialised) but the benchmark's reported peak_mem_mb would "
      "silently be 0 - it is one of the three numbers the mode exists to report"),
])

E("mivolo_script", "scripts/train_lagenda.sh", "explicit_replacement",
  "WildChildren/MiVOLO-style torchrun launcher (GPU selection, nvidia-smi check)", [
    C("=set -e", "env_var", "npu_only_addition", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; often already sourced by the container entrypoint or .bashrc, so not required here"),
    C("nvidia-smi --query-gpu", "torch_cuda_api", "replace", True, "npu-smi info",
      "nvidia-smi is absent on an Ascend host; with `set -e` the 'command not found' aborts the launcher"),
    C("export CUDA_VISIBLE_DEVICES=${GPUS}", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=${GPUS}",
      "default GPUS=4,5,6,7: the Ascend runtime ignores CUDA_VISIBLE_DEVICES, so local ranks 0-3 would land on "
      "NPUs 0-3 instead"),
])

E("mivolo_reqs", "requirements.txt", "explicit_replacement", "WildChildren/MiVOLO requirements.txt", [
    C("torch>=1.13", "import_torch_npu", "npu_only_addition", False,
      "torch-npu  # must match the torch version and the installed CANN",
      "environment file; torch_npu is installed against a given CANN/torch pair"),
])

# ---------------------------------------------------------------------------------------------
# d-li14/face-attribute-prediction (CelebA 40 binary attributes, ResNet with 40 heads)
# ---------------------------------------------------------------------------------------------
E("faceattr_main", "main.py", "explicit_replacement",
  "d-li14/face-attribute-prediction main.py (ImageNet-example style: --gpu-id env, DataParallel, nccl)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("parser.add_argument('--dist-backend', default='nccl'", "dist_backend", "replace", True,
      "parser.add_argument('--dist-backend', default='hccl', type=str,",
      "multi-process path (--world-size > 1) needs HCCL on Ascend"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu_id", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu_id",
      "--gpu-id is the card selector; ignored by the Ascend runtime, so e.g. --gpu-id 2 silently uses NPU 0"),
    C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "use_cuda = torch.npu.is_available()",
      "only gates the torch.cuda.manual_seed_all call below; nothing device-related depends on it"),
    C("torch.cuda.manual_seed_all(args.manual_seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.manual_seed)",
      "torch.manual_seed two lines above already seeds the registered NPU backend; the CUDA call is queued "
      "lazily and never errors"),
    C("model.features = torch.nn.DataParallel(model.features)", "unsupported_op_workaround", "removal", False, None,
      "DataParallel is ✘ on NPU, but this alexnet/vgg branch is dead: the local models package only has resnets"),
    C("model = torch.nn.DataParallel(model).cuda()", "unsupported_op_workaround", "replace", True,
      "model = model.npu()",
      "default (non-distributed) path wraps the model in DataParallel, which is ✘ on A2/A3; single-NPU model"),
    C("criterion = nn.CrossEntropyLoss().cuda()", "tensor_to_device", "replace", False,
      "criterion = nn.CrossEntropyLoss().npu()",
      "unweighted CrossEntropyLoss has no tensors, so .cuda() is a no-op that never touches CUDA"),
    C("checkpoint = torch.load(args.resume)", "device_type", "replace", False,
      "checkpoint = torch.load(args.resume, map_location='cpu')",
      "resume of the script's own checkpoint: after the port it is written from NPU tensors; only a "
      "checkpoint brought over from a CUDA host would fail (also note its 'module.' keys, see README)"),
    C("=model.cuda()", "tensor_to_device", "replace", False, "model.npu()",
      "dead alexnet/vgg branch (see the DataParallel removal above); ported for consistency"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
      "distributed path: model to the NPU before DDP"),
    C("target = target.cuda(non_blocking=True)  # input is scattered by DataParallel", "tensor_to_device",
      "replace", True, "input, target = input.npu(non_blocking=True), target.npu(non_blocking=True)",
      "upstream never moves `input` in train() because DataParallel scatters it; once DataParallel is gone the "
      "CPU input meets an NPU model, so the same line must also move input"),
    C("input = input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "input = input.npu(non_blocking=True)", "validation batch"),
    C("=target = target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "target = target.npu(non_blocking=True)", "validation labels"),
])

E("faceattr_celeba", "celeba.py", "explicit_replacement",
  "d-li14/face-attribute-prediction celeba.py (40-attribute list-file dataset)", [])

E("faceattr_resnet", "models/resnet.py", "explicit_replacement",
  "d-li14/face-attribute-prediction models/resnet.py (ResNet trunk + 40 FC heads)", [])

E("faceattr_misc", "utils/misc.py", "explicit_replacement",
  "d-li14/face-attribute-prediction utils/misc.py (AverageMeter, accuracy, mkdir_p)", [])

E("faceattr_logger", "utils/logger.py", "explicit_replacement",
  "d-li14/face-attribute-prediction utils/logger.py (bearpaw-style tab logger)", [])

# ---------------------------------------------------------------------------------------------
# HSE-asavchenko/face-emotion-recognition (hsemotion package + video demo)
# ---------------------------------------------------------------------------------------------
E("hse_recognizer", "hsemotion/facial_emotions.py", "device_branch_or_abstraction",
  "HSE-asavchenko/face-emotion-recognition hsemotion/facial_emotions.py (pickled EfficientNet, device arg)", [
    C("=model = torch.load(path)", "device_type", "replace", True,
      "model = torch.load(path, map_location='cpu')",
      "for any non-'cpu' device the whole pickled model is loaded without map_location; the branch for 'cpu' "
      "exists precisely because the published .pt files were saved from CUDA, so device='npu' fails here. "
      "model.to(device) two lines later moves it to the NPU"),
])

E("hse_video", "demo/video_emotions.py", "explicit_replacement",
  "HSE-asavchenko/face-emotion-recognition video demo (facenet-pytorch MTCNN + HSEmotionRecognizer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("from facenet_pytorch import MTCNN", "unsupported_op_workaround", "npu_only_addition", False,
      "import torchvision_npu  # NPU kernels for torchvision.ops.nms used by MTCNN",
      "MTCNN calls torchvision batched_nms; without torchvision_npu the op has no NPU kernel and (per torch_npu's "
      "PrivateUse1 CPU fallback) runs on the host - perf only; that the fallback covers torchvision::nms is "
      "unconfirmed"),
    C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_cuda = torch.npu.is_available()", "otherwise detector and classifier silently run on CPU"),
    C("device = 'cuda' if use_cuda else 'cpu'", "device_type", "replace", True,
      "device = 'npu' if use_cuda else 'cpu'", "device string passed to MTCNN and HSEmotionRecognizer"),
    C("torch.cuda.get_device_name(0)", "torch_cuda_api", "replace", True,
      "print('Running on', torch.npu.get_device_name(0) if use_cuda else 'CPU')",
      "once use_cuda is True on the NPU host this call runs and raises without CUDA"),
])

E("hse_setup", "setup.py", "device_branch_or_abstraction",
  "HSE-asavchenko/face-emotion-recognition setup.py (device-agnostic library package)", [])
