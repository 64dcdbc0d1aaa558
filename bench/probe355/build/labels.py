"""Labels for probe355: scene text recognition (deep-text-recognition-benchmark, CRNN, PARSeq, ABINet, MGP-STR).

One label per upstream line a careful porter would edit to run (and run well) on Ascend NPU with torch_npu.
`required` uses a "complete-port counterfactual": with every other labelled line already ported, would leaving
this one line unchanged fail, compute something wrong, or silently do the wrong thing on an NPU host?
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU_ENTRY = "entry script: registers the 'npu' device and torch.npu (mandatory before torch_npu 2.5.1 autoload; the pinned torch is older)"
IMPORT_NPU_LIB = "library module that now references torch.npu itself; the entry scripts import torch_npu first, so this is belt-and-braces"
DEVICE_GLOBAL = "torch.cuda.is_available() is False on an NPU host, so the module-level device silently becomes CPU"
PIN = ("DataLoader pins only for CUDA unless pin_memory_device is given, so on NPU pinning is silently skipped; "
       "perf only (unconfirmed whether newer torch/torch_npu pick the accelerator automatically)")
DP = "torch.nn.DataParallel is marked unsupported on Ascend (torch_api_npu_support 2.7.1 / msFmkTransplt); single NPU per process, DDP for multi-NPU"

# --------------------------------------------------------------------------------------------------
# deep-text-recognition-benchmark (clovaai) style
# --------------------------------------------------------------------------------------------------

E("dtrb_train", "train.py", "explicit_replacement",
  "clovaai/deep-text-recognition-benchmark train.py (DataParallel, CTCLoss(zero_infinity), cudnn toggle around CTC)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
        "device = torch.device('npu' if torch.npu.is_available() else 'cpu')", DEVICE_GLOBAL),
      C("collate_fn=AlignCollate_valid, pin_memory=True)", "pin_memory", "replace", False,
        "collate_fn=AlignCollate_valid, pin_memory=True, pin_memory_device='npu')", PIN),
      C("model = torch.nn.DataParallel(model).to(device)", "distributed_framework", "replace", True,
        "model = model.to(device)  # no DataParallel on NPU; strip 'module.' when loading DP checkpoints", DP),
      C("from warpctc_pytorch import CTCLoss", "custom_cuda_extension", "replace", True,
        "from torch.nn import CTCLoss  # warp-ctc has no NPU build; --baiduCTC path must use log_softmax + reduction='sum'",
        "warp-ctc's binding dispatches on is_cuda and would hand NPU pointers to its CPU kernel; only on the --baiduCTC path"),
      C("torch.cuda.manual_seed(opt.manualSeed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed(opt.manualSeed)",
        "lazy no-op without CUDA; torch.manual_seed above also seeds accelerator generators in recent torch (unconfirmed for old pins)"),
      C("opt.num_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
        "opt.num_gpu = 1  # one NPU per process (DataParallel removed)",
        "returns 0 on an NPU host, which happens to skip the DataParallel batch scaling - correct once DP is gone; make it explicit"),
  ])

E("dtrb_test", "test.py", "explicit_replacement",
  "clovaai/deep-text-recognition-benchmark test.py (benchmark_all_eval, validation with torch.cuda.synchronize timing)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
        "device = torch.device('npu' if torch.npu.is_available() else 'cpu')", DEVICE_GLOBAL),
      C("collate_fn=AlignCollate_evaluation, pin_memory=True, drop_last=False)", "pin_memory", "replace", False,
        "collate_fn=AlignCollate_evaluation, pin_memory=True, pin_memory_device='npu', drop_last=False)", PIN),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "torch.cuda.synchronize initialises CUDA and raises on an NPU host; NPU sync is also needed for honest timing"),
      C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
        "same as the CTC branch: raises without CUDA"),
      C("model = torch.nn.DataParallel(model).to(device)", "distributed_framework", "replace", True,
        "model = model.to(device)  # strip the 'module.' prefix of DP checkpoints before load_state_dict", DP),
      C("collate_fn=AlignCollate_evaluation, pin_memory=True)", "pin_memory", "replace", False,
        "collate_fn=AlignCollate_evaluation, pin_memory=True, pin_memory_device='npu')", PIN),
      C("opt.num_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
        "opt.num_gpu = torch.npu.device_count()", "value is never read in test.py; edited only for consistency"),
  ])

E("dtrb_demo", "demo.py", "explicit_replacement",
  "clovaai/deep-text-recognition-benchmark demo.py (RawDataset inference)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
        "device = torch.device('npu' if torch.npu.is_available() else 'cpu')", DEVICE_GLOBAL),
      C("model = torch.nn.DataParallel(model).to(device)", "distributed_framework", "replace", True,
        "model = model.to(device)  # strip the 'module.' prefix of DP checkpoints before load_state_dict", DP),
      C("collate_fn=AlignCollate_demo, pin_memory=True)", "pin_memory", "replace", False,
        "collate_fn=AlignCollate_demo, pin_memory=True, pin_memory_device='npu')", PIN),
      C("opt.num_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
        "opt.num_gpu = torch.npu.device_count()", "value is never read in demo.py"),
  ])

E("dtrb_utils", "utils.py", "explicit_replacement",
  "clovaai/deep-text-recognition-benchmark utils.py (label converters with a module-level device)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_NPU_LIB),
      C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
        "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
        "encoded targets would stay on CPU while the model runs on NPU (cross-entropy/CTC device mismatch)"),
      C("if t.is_cuda:", "device_type", "replace", True, "if t.device.type != 'cpu':",
        "is_cuda is False for NPU tensors, so .numpy() is called on an NPU tensor and raises"),
  ])

E("dtrb_dataset", "dataset.py", "explicit_replacement",
  "clovaai/deep-text-recognition-benchmark dataset.py (Batch_Balanced_Dataset, LmdbDataset, AlignCollate)", [
      C("collate_fn=_AlignCollate, pin_memory=True)", "pin_memory", "replace", False,
        "collate_fn=_AlignCollate, pin_memory=True, pin_memory_device='npu')", PIN),
  ])

E("dtrb_model", "model.py", "explicit_replacement",
  "clovaai/deep-text-recognition-benchmark model.py (stage composition; device-free)", [])

E("dtrb_prediction", "modules/prediction.py", "explicit_replacement",
  "clovaai/deep-text-recognition-benchmark modules/prediction.py (attention decoder allocating on a global device)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_NPU_LIB),
      C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
        "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
        "decoder state/one-hot buffers are created on this device; CPU buffers against NPU features fail in bmm/LSTMCell"),
  ])

E("dtrb_transformation", "modules/transformation.py", "explicit_replacement",
  "clovaai/deep-text-recognition-benchmark modules/transformation.py (TPS-STN, grid_sample)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_NPU_LIB),
      C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
        "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
        "the zero padding for C' is built on this device and concatenated with NPU tensors -> device mismatch"),
  ])

E("dtrb_scripts", "scripts/train_and_eval.sh", "explicit_replacement",
  "deep-text-recognition-benchmark README command lines wrapped in a launcher script", [
      C("=set -e", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment must be sourced before python imports torch_npu on a bare-metal host"),
      C("nvidia-smi --query-gpu", "device_capability_check", "replace", True, "npu-smi info",
        "nvidia-smi is absent on an Ascend host; with set -e the script aborts here"),
      C("CUDA_VISIBLE_DEVICES=${GPUS} python3 train.py --exp_name None-VGG", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=${GPUS} python3 train.py --exp_name None-VGG-BiLSTM-CTC-Seed${SEED} \\",
        "CUDA_VISIBLE_DEVICES is ignored by CANN, so a user-chosen GPUS list silently lands on NPU 0"),
      C("CUDA_VISIBLE_DEVICES=${GPUS} python3 train.py --exp_name TPS-ResNet", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=${GPUS} python3 train.py --exp_name TPS-ResNet-BiLSTM-Attn-Seed${SEED} \\",
        "same: device selection silently ignored"),
      C("CUDA_VISIBLE_DEVICES=0 python3 test.py", "env_var", "replace", False,
        "    ASCEND_RT_VISIBLE_DEVICES=0 python3 test.py \\",
        "ignored on NPU, but device 0 is what the process uses by default anyway"),
      C("CUDA_VISIBLE_DEVICES=0 python3 demo.py", "env_var", "replace", False,
        "ASCEND_RT_VISIBLE_DEVICES=0 python3 demo.py \\",
        "ignored on NPU, but device 0 is the default anyway"),
  ])

E("dtrb_docker", "Dockerfile", "explicit_replacement",
  "community Dockerfile for deep-text-recognition-benchmark (pytorch/pytorch CUDA base, warp-ctc build)", [
      C("FROM pytorch/pytorch:1.13.1-cuda11.6-cudnn8-devel", "device_type", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "CUDA image has no CANN/driver userspace; an Ascend CANN base image (or ModelZoo image) is needed (image tag illustrative)"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
        "read only by the NVIDIA container runtime; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES at run time"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "NVIDIA container runtime setting, inert on Ascend"),
      C("ENV TORCH_CUDA_ARCH_LIST=", "env_var", "removal", False, None,
        "only steers nvcc builds of extensions; inert once warp-ctc is dropped"),
      C("RUN pip install --no-cache-dir -r requirements.txt", "import_torch_npu", "npu_only_addition", True,
        "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12",
        "the CANN base image carries no torch; torch and the matching torch-npu wheel must be installed"),
      C("ENV CUDA_HOME=/usr/local/cuda", "env_var", "removal", False, None,
        "no CUDA toolkit in the image; harmless once the warp-ctc build is removed"),
      C("RUN git clone https://github.com/SeanNaren/warp-ctc.git", "custom_cuda_extension", "removal", True, None,
        "cmake -DWITH_GPU=ON needs nvcc/CUDA and fails the build; use torch.nn.CTCLoss (native NPU _ctc_loss kernel)"),
      C("RUN cd /opt/warp-ctc/pytorch_binding && python setup.py install", "custom_cuda_extension", "removal", True, None,
        "binding build needs the CUDA libwarpctc built above; fails without it"),
  ])

E("dtrb_export", "tools/export_onnx.py", "explicit_replacement",
  "ONNX export helper commonly added to deep-text-recognition-benchmark forks (onnxruntime-gpu check)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C("model = ExportWrapper(build_model(opt)).cuda()", "tensor_to_device", "replace", True,
        "model = ExportWrapper(build_model(opt)).npu()", ".cuda() raises on an NPU host"),
      C("dummy_image = torch.randn(1, opt.input_channel, opt.imgH, opt.imgW).cuda()", "tensor_to_device", "replace", True,
        "dummy_image = torch.randn(1, opt.input_channel, opt.imgH, opt.imgW).npu()", ".cuda() raises on an NPU host"),
      C("dtype=torch.long, device='cuda')", "device_type", "replace", True,
        "dummy_text = torch.zeros(1, opt.batch_max_length + 1, dtype=torch.long, device='npu')",
        "'cuda' device string raises without CUDA"),
      C("providers=['CUDAExecutionProvider', 'CPUExecutionProvider']", "device_type", "replace", False,
        "sess = ort.InferenceSession(opt.output, providers=['CPUExecutionProvider'])",
        "onnxruntime drops the unavailable CUDA EP with a warning and runs on CPU; a CANN EP build exists but is unconfirmed here"),
  ])

# --------------------------------------------------------------------------------------------------
# crnn.pytorch (meijieru) style
# --------------------------------------------------------------------------------------------------

E("crnn_train", "train.py", "kernel_rewrite",
  "meijieru/crnn.pytorch train.py (warpctc_pytorch CTCLoss, opt.cuda / opt.ngpu, Variable)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C("from warpctc_pytorch import CTCLoss", "custom_cuda_extension", "replace", True,
        "from torch.nn import CTCLoss",
        "warp-ctc is an nvcc-built extension with no NPU path; torch.nn.CTCLoss has a native NPU _ctc_loss kernel"),
      C("if torch.cuda.is_available() and not opt.cuda:", "torch_cuda_api", "replace", False,
        "if torch.npu.is_available() and not opt.cuda:", "only decides whether to print a hint"),
      C("criterion = CTCLoss()", "custom_cuda_extension", "replace", True,
        "criterion = CTCLoss(reduction='sum', zero_infinity=True)",
        "warp-ctc returns the summed loss (divided by batch_size below); nn.CTCLoss defaults to a length-normalised mean"),
      C("crnn.load_state_dict(torch.load(opt.pretrained))", "device_type", "replace", True,
        "crnn.load_state_dict(torch.load(opt.pretrained, map_location='cpu'))",
        "checkpoints written by this script hold cuda tensors; deserialising them without CUDA raises"),
      C("crnn.cuda()", "tensor_to_device", "replace", True, "crnn.npu()", ".cuda() raises on an NPU host"),
      C("crnn = torch.nn.DataParallel(crnn, device_ids=range(opt.ngpu))", "distributed_framework", "removal", True, None, DP),
      C("image = image.cuda()", "tensor_to_device", "replace", True, "image = image.npu()",
        ".cuda() raises on an NPU host"),
      C("criterion = criterion.cuda()", "tensor_to_device", "replace", False, "criterion = criterion.npu()",
        "CTCLoss has no parameters or buffers, so Module.cuda() never touches a tensor and does not fail"),
      C("cost = criterion(preds, text, preds_size, length) / float(batch_size)", "custom_cuda_extension", "replace", True,
        "cost = criterion(preds.log_softmax(2), text, preds_size, length) / float(batch_size)",
        "warp-ctc applies softmax internally; nn.CTCLoss expects log-probabilities"),
      C("cost = criterion(preds, text, preds_size, length) / batch_size", "custom_cuda_extension", "replace", True,
        "cost = criterion(preds.log_softmax(2), text, preds_size, length) / batch_size",
        "same call-site change as in val()"),
  ])

E("crnn_model", "models/crnn.py", "explicit_replacement",
  "meijieru/crnn.pytorch models/crnn.py + models/utils.py data_parallel helper", [
      C("if isinstance(input.data, torch.cuda.FloatTensor) and ngpu > 1:", "distributed_framework", "replace", False,
        "if False:  # nn.parallel.data_parallel is CUDA-only; one NPU per process",
        "on NPU the isinstance check is False, so it already falls through to the single-device path; edit only to make that explicit"),
  ])

E("crnn_demo", "demo.py", "explicit_replacement",
  "meijieru/crnn.pytorch demo.py", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "use_cuda = torch.npu.is_available()  # name kept: True when an NPU is usable", "silently runs on CPU on an NPU host"),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
        ".cuda() raises once the guard above is ported"),
      C("model.load_state_dict(torch.load(args.model_path))", "device_type", "replace", True,
        "model.load_state_dict(torch.load(args.model_path, map_location='cpu'))",
        "checkpoints from train.py hold cuda tensors; torch.load without map_location raises without CUDA"),
      C("image = image.cuda()", "tensor_to_device", "replace", True, "image = image.npu()",
        ".cuda() raises once the guard is ported"),
  ])

# --------------------------------------------------------------------------------------------------
# PARSeq / strhub (baudm) style
# --------------------------------------------------------------------------------------------------

E("parseq_train", "train.py", "device_branch_or_abstraction",
  "baudm/parseq train.py (Hydra + Lightning, accelerator='gpu', DDPStrategy, mixed precision)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C("from pytorch_lightning.strategies import DDPStrategy", "distributed_framework", "npu_only_addition", True,
        "from strhub.npu_accelerator import NPUAccelerator  # registers accelerator='npu' with Lightning",
        "Lightning ships no Ascend accelerator (upstream PR #19308 closed); a small custom Accelerator must be registered (unconfirmed API details)"),
      C("config.trainer.accelerator = 'gpu'", "device_type", "replace", True, "config.trainer.accelerator = 'npu'",
        "legacy trainer.gpus path would select Lightning's CUDA accelerator, which raises when no GPU is present"),
      C("gpu = config.trainer.get('accelerator') == 'gpu'", "device_type", "add_branch", True,
        "gpu = config.trainer.get('accelerator') in ('gpu', 'npu')",
        "string comparison against 'gpu' silently skips mixed precision and DDP tuning for the NPU accelerator"),
      C("devices = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "devices = torch.npu.device_count()",
        "returns 0 on an NPU host: DDP setup and the val_check_interval scaling are silently skipped"),
      C("config.trainer.precision = 'bf16-mixed' if torch.cuda.is_bf16_supported() else '16-mixed'",
        "device_capability_check", "replace", True,
        "config.trainer.precision = 'bf16-mixed' if torch.npu.is_bf16_supported() else '16-mixed'",
        "torch.cuda.is_bf16_supported() raises without CUDA on torch<=2.2 and returns False on newer torch"),
      C("trainer_strategy = DDPStrategy(find_unused_parameters=False, gradient_as_bucket_view=True)", "dist_backend",
        "replace", True,
        "trainer_strategy = DDPStrategy(find_unused_parameters=False, gradient_as_bucket_view=True, process_group_backend='hccl')",
        "DDPStrategy defaults to nccl only for cuda devices and to gloo otherwise; gloo cannot all-reduce NPU tensors"),
      C("trainer: Trainer = hydra.utils.instantiate(", "amp", "replace", False,
        "trainer: Trainer = hydra.utils.instantiate(  # + plugins=[MixedPrecision(config.trainer.precision, 'npu', torch.npu.amp.GradScaler())]",
        "Lightning builds its MixedPrecision plugin with device 'cuda' for non-CPU accelerators, so autocast/GradScaler silently disable (fp32 run); unconfirmed"),
  ])

E("parseq_config", "configs/main.yaml", "device_branch_or_abstraction",
  "baudm/parseq configs/main.yaml (trainer section)", [
      C("accelerator: gpu", "device_type", "replace", True, "accelerator: npu",
        "Lightning's gpu accelerator raises when CUDA is unavailable; 'npu' relies on the accelerator registered in train.py"),
  ])

E("parseq_test", "test.py", "device_branch_or_abstraction",
  "baudm/parseq test.py (benchmark evaluation, --device default cuda)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C("parser.add_argument('--device', default='cuda')", "device_type", "replace", True,
        "parser.add_argument('--device', default='npu')", "default 'cuda' makes .to(args.device) raise on an NPU host"),
      C("with torch.autocast('cuda', dtype=torch.float16, enabled=args.fp16):", "amp", "replace", False,
        "with torch.autocast(torch.device(args.device).type, dtype=torch.float16, enabled=args.fp16):",
        "autocast('cuda') is disabled with a warning when CUDA is absent: --fp16 silently runs fp32"),
  ])

E("parseq_read", "read.py", "device_branch_or_abstraction",
  "baudm/parseq read.py (+ torch.hub path)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C("parser.add_argument('--device', default='cuda')", "device_type", "replace", True,
        "parser.add_argument('--device', default='npu')", "default 'cuda' makes .to(args.device) raise on an NPU host"),
  ])

E("parseq_bench", "bench.py", "device_branch_or_abstraction",
  "baudm/parseq bench.py (fvcore FLOPs + torch.utils.benchmark)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C("os.environ['CUBLAS_WORKSPACE_CONFIG'] = ':4096:8'", "env_var", "removal", False, None,
        "cuBLAS determinism knob; inert on NPU"),
      C("device = config.get('device', 'cuda')", "device_type", "replace", True, "device = config.get('device', 'npu')",
        "default 'cuda' raises in torch.rand(..., device=device)"),
      C("peak = torch.cuda.max_memory_allocated(device) / 2**20", "torch_cuda_api", "replace", True,
        "peak = torch.npu.max_memory_allocated(device) / 2**20",
        "CUDA allocator stats are empty without CUDA: silently reports 0 MiB"),
  ])

E("parseq_datamodule", "strhub/data/module.py", "device_branch_or_abstraction",
  "baudm/parseq strhub/data/module.py (SceneTextDataModule)", [
      C("=pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',", PIN),
      C("pin_memory=True,  # speeds up host->GPU copies", "pin_memory", "replace", False,
        "pin_memory=True, pin_memory_device='npu',  # speeds up host->NPU copies of the validation batches", PIN),
      C("num_workers=self.num_workers, pin_memory=True, collate_fn=self.collate_fn", "pin_memory", "replace", False,
        "v, batch_size=self.batch_size, num_workers=self.num_workers, pin_memory=True, pin_memory_device='npu', collate_fn=self.collate_fn", PIN),
  ])

E("parseq_base", "strhub/models/base.py", "device_branch_or_abstraction",
  "baudm/parseq strhub/models/base.py (BaseSystem / CrossEntropySystem / CTCSystem; device-agnostic)", [])

E("parseq_reqs", "requirements/core.cu116.txt", "explicit_replacement",
  "baudm/parseq requirements/core.*.txt (pip-compile output against the PyTorch CUDA wheel index)", [
      C("--extra-index-url https://download.pytorch.org/whl/cu116", "device_type", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "Ascend docs install CPU torch on x86 (aarch64 uses PyPI); a CUDA index only adds a heavier torch flavour - unconfirmed that it breaks torch_npu"),
      C("torch==1.13.1+cu116", "device_type", "replace", True, "torch==2.1.0",
        "no torch_npu release pairs with torch 1.13, and the +cu116 local version cannot satisfy torch-npu's torch pin"),
      C("#   torchvision", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
        "the torch_npu wheel matching torch 2.1.0 (sorted right after torch's 'via' block)"),
      C("torchvision==0.14.1+cu116", "device_type", "replace", True, "torchvision==0.16.0",
        "CUDA torchvision build pins torch==1.13.1+cu116; must move with torch"),
  ])

E("parseq_ablation", "tools/run_ablation.sh", "device_branch_or_abstraction",
  "baudm/parseq ablation launcher (Hydra overrides on the command line)", [
      C("# usage: GPU_IDS=0,1 ./tools/run_ablation.sh", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment must be sourced; before `set -u` because set_env.sh expands possibly-unset variables"),
      C("export CUDA_VISIBLE_DEVICES=${GPU_IDS}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${GPU_IDS}",
        "ignored by CANN: user-chosen device ids silently map to NPUs 0..N-1"),
      C("export NCCL_P2P_DISABLE=0", "env_var", "removal", False, None, "NCCL-only knob, inert under HCCL"),
      C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
        "HCCL has its own watchdog switch (default 1 per MindCluster docs); NCCL variable is inert"),
      C("trainer.accelerator=gpu trainer.devices=${NUM_GPUS} \\", "device_type", "replace", True,
        "        trainer.accelerator=npu trainer.devices=${NUM_GPUS} \\",
        "command-line override re-selects Lightning's CUDA accelerator, which raises on an NPU host"),
      C("trainer.accelerator=gpu trainer.devices=${NUM_GPUS} trainer.max_epochs=20", "device_type", "replace", True,
        "    trainer.accelerator=npu trainer.devices=${NUM_GPUS} trainer.max_epochs=20 \\", "same override"),
      C("./test.py \"${CKPT}\" --device cuda --batch_size 512", "device_type", "replace", True,
        "    ./test.py \"${CKPT}\" --device npu --batch_size 512", "explicit cuda device raises on an NPU host"),
  ])

# --------------------------------------------------------------------------------------------------
# ABINet (FangShancheng) style - fastai v1
# --------------------------------------------------------------------------------------------------

E("abinet_main", "main.py", "explicit_replacement",
  "FangShancheng/ABINet main.py (fastai v1 Learner, to_distributed, nccl init)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C("from fastai.vision import *", "device_type", "npu_only_addition", True,
        "defaults.device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
        "fastai v1 picks defaults.device from torch.cuda.is_available() at import, so DataBunch/Learner silently run on CPU"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "lazy no-op without CUDA; torch.manual_seed above covers the NPU generator in recent torch (unconfirmed for old pins)"),
      C("elif torch.cuda.device_count() > 1:", "distributed_framework", "removal", False, None,
        "DataParallel branch: dead on NPU (count is 0) and DataParallel is unsupported there; multi-NPU goes through --local_rank"),
      C("logging.info(f'Use {torch.cuda.device_count()} GPUs.')", "distributed_framework", "removal", False, None,
        "part of the removed DataParallel branch"),
      C("learner.model = MyDataParallel(learner.model)", "distributed_framework", "removal", False, None,
        "part of the removed DataParallel branch (DataParallel unsupported on NPU)"),
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.local_rank)",
        "torch.cuda.set_device raises without CUDA"),
      C("torch.distributed.init_process_group(backend='nccl', init_method='env://')", "dist_backend", "replace", True,
        "torch.distributed.init_process_group(backend='hccl', init_method='env://')", "NCCL is not available on Ascend; HCCL is"),
  ])

E("abinet_demo", "demo.py", "explicit_replacement",
  "FangShancheng/ABINet demo.py (--cuda <id> flag)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C("device = torch.device('cuda', device)", "device_type", "replace", False, "device = torch.device('npu', device)",
        "int-device branch of the shared load() helper; this script always passes a string, so it is dead here"),
      C("device = 'cpu' if args.cuda < 0 else f'cuda:{args.cuda}'", "device_type", "replace", True,
        "device = 'cpu' if args.cuda < 0 else f'npu:{args.cuda}'", "'cuda:N' raises in .to(device) on an NPU host"),
  ])

E("abinet_callbacks", "callbacks.py", "explicit_replacement",
  "FangShancheng/ABINet callbacks.py (IterationCallback, TextAccuracy, DumpPrediction)", [
      C("mem = torch.cuda.max_memory_allocated() / 2 ** 20", "torch_cuda_api", "replace", True,
        "mem = torch.npu.max_memory_allocated() / 2 ** 20", "CUDA allocator never initialised: silently logs 0"),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True, "torch.npu.reset_peak_memory_stats()",
        "resolves the current CUDA device and raises without CUDA"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op when CUDA is not initialised; the NPU cache is simply not released (memory only)"),
  ])

# --------------------------------------------------------------------------------------------------
# MGP-STR (AlibabaResearch AdvancedLiterateMachinery) style
# --------------------------------------------------------------------------------------------------

E("mgp_train", "train_final_dist.py", "explicit_replacement",
  "AlibabaResearch MGP-STR train_final_dist.py (DTRB loop + DeiT distributed utils + AMP)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", False,
        "from torch_npu.optim import NpuFusedAdam as FusedAdam",
        "guarded import: NVIDIA apex's FusedAdam has no NPU kernel (Ascend apex patch drops it), so it silently falls back to torch.optim.Adam"),
      C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
        "device = torch.device('npu' if torch.npu.is_available() else 'cpu')", DEVICE_GLOBAL),
      C("collate_fn=AlignCollate_valid, pin_memory=True)", "pin_memory", "replace", False,
        "collate_fn=AlignCollate_valid, pin_memory=True, pin_memory_device='npu')", PIN),
      C("scaler = torch.cuda.amp.GradScaler(enabled=opt.amp)", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler(enabled=opt.amp)",
        "CUDA GradScaler disables itself without CUDA; with NPU autocast on, fp16 gradients then go unscaled"),
      C("with torch.cuda.amp.autocast(enabled=opt.amp):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=opt.amp):",
        "CUDA autocast is disabled with a warning on an NPU host: --amp silently trains in fp32 (perf/memory only)"),
      C("mem_gb = torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", True,
        "mem_gb = torch.npu.max_memory_allocated() / 1024 ** 3", "silently reports 0 without CUDA"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "lazy no-op without CUDA; torch.manual_seed above covers the NPU generator in recent torch (unconfirmed for old pins)"),
      C("opt.num_gpu = torch.cuda.device_count() if not opt.distributed else utils.get_world_size()", "torch_cuda_api",
        "replace", False, "opt.num_gpu = torch.npu.device_count() if not opt.distributed else utils.get_world_size()",
        "only printed here"),
  ])

E("mgp_test", "test_final.py", "explicit_replacement",
  "AlibabaResearch MGP-STR test_final.py (three-head decoding, CUDA-event timing)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
        "device = torch.device('npu' if torch.npu.is_available() else 'cpu')", DEVICE_GLOBAL),
      C("collate_fn=AlignCollate_evaluation, pin_memory=True, drop_last=False)", "pin_memory", "replace", False,
        "collate_fn=AlignCollate_evaluation, pin_memory=True, pin_memory_device='npu', drop_last=False)", PIN),
      C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "starter = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
      C("ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "ender = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA"),
      C("collate_fn=AlignCollate_evaluation, pin_memory=True)", "pin_memory", "replace", False,
        "collate_fn=AlignCollate_evaluation, pin_memory=True, pin_memory_device='npu')", PIN),
      C("opt.num_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
        "opt.num_gpu = torch.npu.device_count()", "value is never read in test_final.py"),
  ])

E("mgp_utils_dist", "utils_dist.py", "explicit_replacement",
  "DeiT/torchvision-references utils.py as vendored by MGP-STR (init_distributed_mode, MetricLogger)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_NPU_LIB),
      C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "device_type", "replace", True,
        "t = torch.tensor([self.count, self.total], dtype=torch.float32, device='npu')",
        "'cuda' raises on an NPU host; also HCCL all_reduce does not list fp64 (bf16/fp16/fp32/int32/int64/bool)"),
      C("has_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", False, "has_cuda = torch.npu.is_available()",
        "only controls whether the 'max mem' column is printed"),
      C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", True,
        "memory=torch.npu.max_memory_allocated() / MB))", "silently reports 0 without CUDA once the column is enabled"),
      C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "args.gpu = args.rank % torch.npu.device_count()", "device_count() is 0 on an NPU host -> ZeroDivisionError under SLURM"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
        "raises without CUDA"),
      C("args.dist_backend = 'nccl'", "dist_backend", "replace", True, "args.dist_backend = 'hccl'",
        "NCCL is not available on Ascend; HCCL is"),
  ])

E("mgp_model", "modules/mgp_str.py", "explicit_replacement",
  "AlibabaResearch MGP-STR ViT backbone + A^3 token learners (timm-based)", [
      C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", True,
        "with torch.autocast('npu', enabled=False):",
        "only switches off CUDA autocast; under NPU autocast the fp32 island silently runs in fp16 again"),
      C("with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=True):",
        "attention_kernel", "replace", False, "if True:  # torch.backends.cuda.sdp_kernel is CUDA-only; NPU SDPA picks its own kernel",
        "CUDA SDPA backend selector, marked unsupported on Ascend; F.scaled_dot_product_attention itself dispatches to the NPU kernel"),
  ])

E("mgp_scripts", "scripts/train_mgp_str_base.sh", "explicit_replacement",
  "MGP-STR README training/eval commands as a launcher script", [
      C("#!/bin/bash", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment must be sourced before torch_npu is imported"),
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", False, "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
        "ignored on NPU, but LOCAL_RANK 0..3 selects NPUs 0..3 anyway"),
      C("export NCCL_DEBUG=INFO", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=1",
        "NCCL logging knob is inert; CANN/HCCL logging is controlled by ASCEND_GLOBAL_LOG_LEVEL"),
      C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL-only, inert under HCCL"),
      C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
        "inert under HCCL; HCCL_SOCKET_IFNAME is the counterpart (matters only multi-node)"),
      C("CUDA_VISIBLE_DEVICES=0 python3 test_final.py", "env_var", "replace", False,
        "ASCEND_RT_VISIBLE_DEVICES=0 python3 test_final.py --eval_data data/evaluation --benchmark_all_eval \\",
        "ignored on NPU, device 0 is the default anyway"),
  ])

E("mgp_env", "environment.yml", "explicit_replacement",
  "conda environment.yml of the MGP-STR era (pytorch + cudatoolkit channels)", [
      C("- nvidia", "device_type", "removal", False, None, "NVIDIA conda channel only serves CUDA packages"),
      C("- pytorch=1.10.0", "device_type", "replace", True, "  - pytorch=2.1.0",
        "no torch_npu release for torch 1.10 (compatibility matrix starts at 1.11 / 2.1)"),
      C("- torchvision=0.11.1", "device_type", "replace", True, "  - torchvision=0.16.0",
        "torchvision 0.11 pins torch 1.10"),
      C("- cudatoolkit=11.3", "device_type", "replace", False, "  - cpuonly",
        "selects the CUDA build of pytorch; Ascend prescribes CPU torch + torch_npu (unconfirmed that the CUDA build breaks torch_npu)"),
      C("- pip:", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.1.0.post12",
        "torch_npu wheel matching torch 2.1.0"),
      C("- gpustat", "device_capability_check", "removal", False, None, "NVML-based GPU monitor; useless on Ascend (npu-smi)"),
  ])
