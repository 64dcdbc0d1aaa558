# Labels for probe301 (remote-sensing change detection, CUDA -> Ascend NPU).
# One entry per upstream file; one C(...) per line a careful porter would edit.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ---------------------------------------------------------------------------------------------
# ChangeFormer (wgcban/ChangeFormer, itself derived from BIT_CD)
# ---------------------------------------------------------------------------------------------
E("cf_main_cd", "main_cd.py", "explicit_replacement",
  "ChangeFormer main_cd.py (argparse --gpu_ids, train then test)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "entry script; the repo's torch pins predate torch_npu 2.5.1 autoload, so torch.npu must be registered explicitly"),
    C("print(torch.cuda.is_available())", "torch_cuda_api", "replace", False,
      "print(torch.npu.is_available())",
      "startup sanity print; prints False on an NPU host but changes nothing else"),
])

E("cf_utils", "utils.py", "explicit_replacement",
  "ChangeFormer/BIT_CD utils.py (get_loaders, get_device parsing --gpu_ids)", [
    C("torch.cuda.set_device(args.gpu_ids[0])", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu_ids[0])",
      "torch.cuda.set_device raises on a torch build without CUDA"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "no-op without CUDA; torch.manual_seed on the line above already seeds registered backends (unconfirmed for the torch_npu version in use)"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if not torch.npu.is_available():",
      "memory string only used in the epoch log; on NPU it would always say 'n/a (cpu)'"),
    C("alloc = torch.cuda.memory_allocated(device)", "torch_cuda_api", "replace", False,
      "alloc = torch.npu.memory_allocated(device) / 1024 ** 3",
      "logging only; reached once the guard above is ported"),
    C("peak = torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated(device) / 1024 ** 3",
      "logging only; reached once the guard above is ported"),
])

E("cf_trainer", "models/trainer.py", "explicit_replacement",
  "ChangeFormer models/trainer.py (CDTrainer with device string built from gpu_ids)", [
    C('self.device = torch.device("cuda:%s" % args.gpu_ids[0]', "device_type", "replace", True,
      'self.device = torch.device("npu:%s" % args.gpu_ids[0] if torch.npu.is_available() and len(args.gpu_ids) > 0',
      "torch.cuda.is_available() is False on NPU, so every .to(self.device) silently lands on CPU while the net is on NPU"),
    C("weights = 1 - torch.from_numpy(alpha).cuda()", "tensor_to_device", "replace", True,
      "weights = 1 - torch.from_numpy(alpha).to(self.device)",
      "Tensor.cuda() raises without CUDA (miou loss path)"),
    C("self._pxl_loss = mIoULoss(weight=weights, size_average=True, n_classes=args.n_class).cuda()", "tensor_to_device", "replace", False,
      "self._pxl_loss = mIoULoss(weight=weights, size_average=True, n_classes=args.n_class).to(self.device)",
      "mIoULoss registers no parameters/buffers, so Module.cuda() touches no tensor and does not fail; edited for clarity"),
    C("self._pxl_loss = mmIoULoss(n_classes=args.n_class).cuda()", "tensor_to_device", "replace", False,
      "self._pxl_loss = mmIoULoss(n_classes=args.n_class).to(self.device)",
      "parameter-less module: .cuda() is a no-op, not a failure"),
    C("self.net_G.load_state_dict(torch.load(self.args.pretrain), strict=False)", "tensor_to_device", "replace", False,
      "self.net_G.load_state_dict(torch.load(self.args.pretrain, map_location='cpu'), strict=False)",
      "only fails if the pretrain file holds CUDA tensors; the mmseg-exported SegFormer weights the run script passes are saved as CPU tensors (unconfirmed)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "silent no-op on NPU (CUDA never initialised); NPU cache simply not released"),
])

E("cf_networks", "models/networks.py", "explicit_replacement",
  "ChangeFormer/BIT_CD models/networks.py (init_net, define_G, BASE_Transformer)", [
    C("assert (torch.cuda.is_available())", "torch_cuda_api", "replace", True,
      "assert (torch.npu.is_available())",
      "assertion fails on every NPU host when gpu_ids is non-empty"),
    C("net.to(gpu_ids[0])", "tensor_to_device", "replace", True,
      "net.to(f'npu:{gpu_ids[0]}')",
      "an integer device index means cuda:N to Module.to"),
    C("net = torch.nn.DataParallel(net, gpu_ids)  # multi-GPUs", "distributed_framework", "removal", True,
      None,
      "nn.DataParallel is unsupported on Ascend (scatter goes through CUDA comm); single NPU here, DDP for multi-card"),
])

E("cf_evaluator", "models/evaluator.py", "explicit_replacement",
  "ChangeFormer models/evaluator.py (CDEvaluator) with an added CUDA-event latency probe", [
    C('self.device = torch.device("cuda:%s" % args.gpu_ids[0]', "device_type", "replace", True,
      'self.device = torch.device("npu:%s" % args.gpu_ids[0] if torch.npu.is_available() and len(args.gpu_ids) > 0',
      "otherwise evaluation inputs go to CPU while the model sits on the NPU"),
    C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "starter = torch.npu.Event(enable_timing=True)",
      "CUDA events cannot be created without CUDA (only on --report_latency)"),
    C("=ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "ender = torch.npu.Event(enable_timing=True)",
      "same as starter"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "torch.cuda.synchronize raises without CUDA"),
])

E("cf_eval_cd", "eval_cd.py", "explicit_replacement",
  "ChangeFormer eval_cd.py (stand-alone evaluation entry point)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "entry script; registers the npu device"),
    C("print(torch.cuda.is_available())", "torch_cuda_api", "replace", False,
      "print(torch.npu.is_available())",
      "sanity print only"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():",
      "guards a peak-memory print; on NPU the print is just skipped"),
    C("print('peak device memory: %.1f MB' % (torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "print('peak device memory: %.1f MB' % (torch.npu.max_memory_allocated() / 2 ** 20))",
      "logging only"),
])

E("cf_run_script", "scripts/run_ChangeFormer_LEVIR.sh", "explicit_replacement",
  "ChangeFormer scripts/run_ChangeFormer_LEVIR.sh (hyper-parameters + CUDA_VISIBLE_DEVICES)", [
    C("=#!/usr/bin/env bash", "import_torch_npu", "npu_only_addition", True,
      SET_ENV,
      "CANN libraries must be on LD_LIBRARY_PATH before torch_npu imports (unless the shell profile or container ENV already provides them)"),
    C("CUDA_VISIBLE_DEVICES=1 python main_cd.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=1 python main_cd.py --img_size ${img_size} ... (rest unchanged)",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime, so --gpu_ids 0 would silently land on card 0 instead of card 1"),
])

E("cf_requirements", "requirements.txt", "explicit_replacement",
  "ChangeFormer requirements (pip, torch 1.8.1+cu111 from the torch_stable find-links page)", [
    C("--find-links https://download.pytorch.org/whl/torch_stable.html", "torch_cuda_api", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "only matters on x86 where the CPU build of torch is wanted; harmless once the +cu pins are gone"),
    C("torch==1.8.1+cu111", "torch_cuda_api", "replace", True,
      "torch==2.1.0",
      "+cu111 wheels exist only for x86 CUDA; torch_npu pairs with the plain/CPU build of the same torch version"),
    C("torchvision==0.9.1+cu111", "torch_cuda_api", "replace", True,
      "torchvision==0.16.0",
      "CUDA torchvision build pins torch==1.8.1+cu111 and conflicts with the CPU torch"),
    C("# ---- everything below comes from plain PyPI ----", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post12",
      "torch_npu wheel matching torch 2.1.0 (version must equal torch's x.y.z)"),
])

E("cf_losses", "models/losses.py", "explicit_replacement",
  "ChangeFormer models/losses.py (CE, FocalLoss, mIoU losses) plus a boundary-weighted BCE", [
    C("self.register_buffer('pos_weight', torch.cuda.FloatTensor([pos_weight]))", "torch_cuda_api", "replace", True,
      "self.register_buffer('pos_weight', torch.tensor([pos_weight], dtype=torch.float32))",
      "torch.cuda.FloatTensor cannot be constructed without CUDA; a plain buffer follows the module to the NPU"),
])

E("cf_model", "models/ChangeFormer.py", "explicit_replacement",
  "ChangeFormer models/ChangeFormer.py (SegFormer-style encoder, difference decoder) - pure model code", [])

# ---------------------------------------------------------------------------------------------
# BIT_CD (justchenhao/BIT_CD)
# ---------------------------------------------------------------------------------------------
E("bit_env", "environment.yml", "explicit_replacement",
  "BIT_CD conda environment (pytorch 1.6 / cudatoolkit 10.1 builds)", [
    C("- python=3.6.12", "import_torch_npu", "replace", True,
      "- python=3.9",
      "no torch_npu wheel exists for Python 3.6; torch 2.1 + torch_npu need 3.8-3.11"),
    C("- pytorch=1.6.0=py3.6_cuda10.1.243_cudnn7.6.3_0", "torch_cuda_api", "replace", True,
      "- pytorch=2.1.0=*cpu*",
      "CUDA build of torch 1.6.0; torch_npu has no 1.6 release at all"),
    C("- torchvision=0.7.0=py36_cu101", "torch_cuda_api", "replace", True,
      "- torchvision=0.16.0=*cpu*",
      "CUDA torchvision build tied to the CUDA pytorch"),
    C("- cudatoolkit=10.1.243", "torch_cuda_api", "removal", False,
      None,
      "CUDA runtime not needed; may not even resolve on aarch64 hosts (unconfirmed)"),
    C("- pip:", "import_torch_npu", "npu_only_addition", True,
      "    - torch-npu==2.1.0.post12",
      "torch_npu comes from PyPI"),
    C("- pynvml==8.0.4", "torch_cuda_api", "removal", False,
      None,
      "NVML bindings are useless on Ascend (npu-smi / torch.npu.mem_get_info instead); not imported by the code shown"),
])

E("bit_demo", "demo.py", "explicit_replacement",
  "BIT_CD demo.py (quick-start prediction on sample pairs)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "entry script"),
    C('device = torch.device("cuda:%s" % args.gpu_ids[0]', "device_type", "replace", False,
      'device = torch.device("npu:%s" % args.gpu_ids[0]',
      "dead variable in this script (CDEvaluator builds its own device); edited for consistency"),
    C("if torch.cuda.is_available() and len(args.gpu_ids) > 0", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available() and len(args.gpu_ids) > 0",
      "same dead variable"),
])

E("bit_basic_model", "models/basic_model.py", "explicit_replacement",
  "BIT_CD models/basic_model.py (CDEvaluator for demo) with a sliding-window large-scene helper", [
    C('self.device = torch.device("cuda:%s" % args.gpu_ids[0]', "device_type", "replace", True,
      'self.device = torch.device("npu:%s" % args.gpu_ids[0]',
      "inputs and checkpoint map_location follow self.device"),
    C("if torch.cuda.is_available() and len(args.gpu_ids) > 0", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available() and len(args.gpu_ids) > 0",
      "False on NPU -> device falls back to CPU while net_G is on the NPU"),
    C("pa = img_a[:, y:y + tile, x:x + tile].unsqueeze(0).cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "pa = img_a[:, y:y + tile, x:x + tile].unsqueeze(0).to(self.device, non_blocking=True)",
      "Tensor.cuda() raises without CUDA"),
    C("pb = img_b[:, y:y + tile, x:x + tile].unsqueeze(0).cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "pb = img_b[:, y:y + tile, x:x + tile].unsqueeze(0).to(self.device, non_blocking=True)",
      "Tensor.cuda() raises without CUDA"),
])

E("bit_help_funcs", "models/help_funcs.py", "explicit_replacement",
  "BIT_CD models/help_funcs.py (token transformer encoder/decoder) plus an SDPA variant", [])

# ---------------------------------------------------------------------------------------------
# Open-CD (likyoo/open-cd, MMSegmentation 1.x / MMEngine)
# ---------------------------------------------------------------------------------------------
E("ocd_dist_train", "tools/dist_train.sh", "explicit_replacement",
  "Open-CD tools/dist_train.sh (torch.distributed.launch wrapper)", [
    C("=#!/usr/bin/env bash", "import_torch_npu", "npu_only_addition", True,
      SET_ENV,
      "CANN environment for every rank spawned by the launcher"),
])

E("ocd_runtime", "configs/_base_/default_runtime.py", "device_branch_or_abstraction",
  "Open-CD configs/_base_/default_runtime.py (env_cfg with dist_cfg backend)", [
    C("dist_cfg=dict(backend='nccl'),", "dist_backend", "replace", False,
      "dist_cfg=dict(backend='hccl'),",
      "MMEngine's init_dist picks hccl itself when an NPU is detected (from memory of mmengine.dist.utils; unconfirmed in the knowledge base)"),
])

E("ocd_changer_cfg", "configs/changer/changer_ex_r18_512x512_40k_levircd.py", "device_branch_or_abstraction",
  "Open-CD Changer-r18 LEVIR-CD config (SyncBN, AmpOptimWrapper)", [])

E("ocd_benchmark", "tools/analysis_tools/benchmark.py", "explicit_replacement",
  "Open-CD/MMSeg tools/analysis_tools/benchmark.py (FPS with cuda.synchronize)", [
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if not torch.npu.is_available():",
      "on NPU the sync is skipped, so FPS measures only async kernel launch - silently wrong numbers"),
    C("    torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "    torch.npu.synchronize()",
      "raises once the guard above is ported"),
    C("model = model.cuda() if torch.cuda.is_available() else model", "tensor_to_device", "replace", True,
      "model = model.npu() if torch.npu.is_available() else model",
      "benchmark would silently run on CPU"),
    C("with torch.no_grad(), torch.cuda.amp.autocast(enabled=args.fp16):", "amp", "replace", True,
      "with torch.no_grad(), torch.npu.amp.autocast(enabled=args.fp16):",
      "with --fp16 the CUDA autocast disables itself on NPU, so the 'fp16' numbers are fp32"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():",
      "only adds device name / memory to the json"),
    C("benchmark_dict['device'] = torch.cuda.get_device_name(torch.cuda.current_device())", "torch_cuda_api", "replace", False,
      "benchmark_dict['device'] = torch.npu.get_device_name(torch.npu.current_device())",
      "report field only"),
    C("benchmark_dict['max_memory_mb'] = round(torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "benchmark_dict['max_memory_mb'] = round(torch.npu.max_memory_allocated() / 2 ** 20, 1)",
      "report field only"),
])

E("ocd_train", "tools/train.py", "device_branch_or_abstraction",
  "Open-CD tools/train.py (MMEngine Runner, --amp, --launcher)", [])

E("ocd_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "Open-CD/MMSeg docker/Dockerfile (pytorch CUDA devel image + prebuilt mmcv CUDA wheel)", [
    C('ARG CUDA="11.3"', "torch_cuda_api", "removal", False,
      None,
      "only feeds the CUDA image tag and the mmcv CUDA wheel URL"),
    C('ARG CUDNN="8"', "torch_cuda_api", "removal", False,
      None,
      "only feeds the CUDA image tag"),
    C("FROM pytorch/pytorch:${PYTORCH}-cuda${CUDA}-cudnn${CUDNN}-devel", "torch_cuda_api", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "CUDA base image has no CANN toolkit; Ascend/cann-container-image builds bake the set_env.sh exports into ENV (image tag unconfirmed)"),
    C('ENV TORCH_CUDA_ARCH_LIST="6.0 6.1 7.0 7.5 8.0 8.6+PTX"', "env_var", "removal", False,
      None,
      "nvcc arch list; ignored without nvcc"),
    C('ENV TORCH_NVCC_FLAGS="-Xfatbin -compress-all"', "env_var", "removal", False,
      None,
      "nvcc flags; ignored without nvcc"),
    C("3bf863cc.pub", "torch_cuda_api", "removal", False,
      None,
      "NVIDIA apt key; useless but harmless on a CANN image"),
    C("7fa2af80.pub", "torch_cuda_api", "removal", False,
      None,
      "NVIDIA apt key; useless but harmless on a CANN image"),
    C("RUN conda clean --all", "torch_cuda_api", "removal", False,
      None,
      "the pytorch/pytorch image ships conda; the CANN image probably does not, in which case this step fails (unconfirmed)"),
    C("=ARG CUDA", "torch_cuda_api", "removal", False,
      None,
      "unused after the mmcv line is rebuilt from source"),
    C('RUN ["/bin/bash", "-c", "pip install openmim"]', "import_torch_npu", "npu_only_addition", True,
      'RUN ["/bin/bash", "-c", "pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post17"]',
      "the CANN image has no torch / torch_npu; 2.1.0.post17 is the torch_npu build paired with CANN 8.3.RC1"),
    C("pip install mmcv==${MMCV} -f https://download.openmmlab.com/mmcv/dist/cu", "custom_cuda_extension", "replace", True,
      'RUN ["/bin/bash", "-c", "git clone -b v2.1.0 https://github.com/open-mmlab/mmcv.git /mmcv && cd /mmcv && MMCV_WITH_OPS=1 FORCE_NPU=1 pip install -v -e ."]',
      "prebuilt mmcv._ext is compiled against CUDA and fails to load; mmcv ops must be built with its NPU backend (FORCE_NPU switch from memory of mmcv setup.py, unconfirmed)"),
    C('ENV FORCE_CUDA="1"', "env_var", "removal", False,
      None,
      "only affects CUDA extension builds; open-cd itself builds none"),
])

# ---------------------------------------------------------------------------------------------
# SNUNet-CD (likyoo/Siam-NestedUNet)
# ---------------------------------------------------------------------------------------------
E("snu_train", "train.py", "explicit_replacement",
  "SNUNet-CD train.py (module-level script, dev = torch.device('cuda'...))", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "entry script"),
    C("dev = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "dev = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "training silently runs on CPU otherwise"),
    C("logging.info('GPU AVAILABLE? ' + str(torch.cuda.is_available()))", "torch_cuda_api", "replace", False,
      "logging.info('NPU AVAILABLE? ' + str(torch.npu.is_available()))",
      "log line only"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(seed)",
      "no-op without CUDA; torch.manual_seed above covers the NPU generator (unconfirmed)"),
])

E("snu_helpers", "utils/helpers.py", "explicit_replacement",
  "SNUNet-CD utils/helpers.py (loaders, criterion, load_model with nn.DataParallel)", [
    C("model = nn.DataParallel(model, device_ids=device_ids)", "distributed_framework", "removal", True,
      None,
      "nn.DataParallel is unsupported on Ascend; the model is already on `device`"),
])

E("snu_eval", "eval.py", "explicit_replacement",
  "SNUNet-CD eval.py + visualization.py (whole pickled model loaded with torch.load)", [
    C("=import torch.utils.data", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "entry script (it only imports torch via torch.utils.data)"),
    C("dev = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "dev = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "inputs would go to CPU"),
    C("model = torch.load(path)", "tensor_to_device", "replace", True,
      "model = torch.load(path, map_location=dev); model = getattr(model, 'module', model)",
      "train.py saves the whole CUDA DataParallel model with torch.save(model, ...): unpickling CUDA storages fails without CUDA, and the wrapper must go"),
])

# ---------------------------------------------------------------------------------------------
# STANet (justchenhao/STANet, pix2pix-style framework)
# ---------------------------------------------------------------------------------------------
E("sta_base_options", "options/base_options.py", "explicit_replacement",
  "STANet options/base_options.py (pix2pix-style option parsing with set_device)", [
    C("torch.cuda.set_device(opt.gpu_ids[0])", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(opt.gpu_ids[0])",
      "raises without CUDA"),
])

E("sta_base_model", "models/base_model.py", "explicit_replacement",
  "STANet models/base_model.py (pix2pix BaseModel: device, save/load networks)", [
    C("self.device = torch.device('cuda:{}'.format(self.gpu_ids[0]))", "device_type", "replace", True,
      "self.device = torch.device('npu:{}'.format(self.gpu_ids[0])) if self.gpu_ids else torch.device('cpu')",
      "cuda:N device is unusable on NPU"),
    C("if len(self.gpu_ids) > 0 and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if len(self.gpu_ids) > 0 and torch.npu.is_available():",
      "takes the CPU branch on NPU: the net is moved to CPU at the first save and never moved back"),
    C("torch.save(net.module.cpu().state_dict(), save_path)", "distributed_framework", "replace", True,
      "torch.save(net.cpu().state_dict(), save_path)",
      "follows from dropping nn.DataParallel in networks.init_net: there is no .module any more"),
    C("net.cuda(self.gpu_ids[0])", "tensor_to_device", "replace", True,
      "net.npu(self.gpu_ids[0])",
      "Module.cuda raises without CUDA"),
])

E("sta_networks", "models/networks.py", "explicit_replacement",
  "STANet models/networks.py (init_net with unconditional DataParallel, PAM block, BCL loss)", [
    C("assert(torch.cuda.is_available())", "torch_cuda_api", "replace", True,
      "assert(torch.npu.is_available())",
      "assertion fails on NPU"),
    C("net.to(gpu_ids[0])", "tensor_to_device", "replace", True,
      "net.to(f'npu:{gpu_ids[0]}')",
      "integer index means cuda:N"),
    C("net = torch.nn.DataParallel(net, gpu_ids)  # multi-GPUs", "distributed_framework", "removal", True,
      None,
      "pix2pix wraps even a single GPU in DataParallel; unsupported on Ascend"),
])

E("sta_cdfa", "models/CDFA_model.py", "explicit_replacement",
  "STANet models/CDFA_model.py (feature extractor + spatial-temporal attention, torch.cuda.FloatTensor)", [
    C("self.Tensor = torch.cuda.FloatTensor if self.gpu_ids else torch.FloatTensor", "torch_cuda_api", "replace", True,
      "self.Tensor = torch.npu.FloatTensor if self.gpu_ids else torch.FloatTensor",
      "torch.cuda.FloatTensor(n) raises 'type not available' when change_ratio() runs"),
])

# ---------------------------------------------------------------------------------------------
# ChangeStar (Z-Zheng/ChangeStar, ever-style launcher with apex / torch amp)
# ---------------------------------------------------------------------------------------------
E("cs_train", "train_sup_change.py", "explicit_replacement",
  "ChangeStar train_sup_change.py (torch.distributed.launch, --local_rank, nccl)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "entry script"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "no-op without CUDA; torch.manual_seed above covers it (unconfirmed)"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(local_rank)",
      "raises without CUDA"),
    C('dist.init_process_group(backend="nccl", init_method="env://")', "dist_backend", "replace", True,
      'dist.init_process_group(backend="hccl", init_method="env://")',
      "NCCL backend does not exist on Ascend"),
    C("args.local_rank, torch.cuda.device_count())", "torch_cuda_api", "replace", False,
      "args.local_rank, torch.npu.device_count())",
      "log line only (returns 0 on NPU)"),
    C("logger.info('GPU: %s', torch.cuda.get_device_name(args.local_rank))", "torch_cuda_api", "replace", True,
      "logger.info('NPU: %s', torch.npu.get_device_name(args.local_rank))",
      "get_device_name initialises CUDA and raises"),
])

E("cs_trainer", "core/trainer.py", "explicit_replacement",
  "ChangeStar/ever launcher (apex O1 or torch.cuda.amp, DDP, apex FusedAdam, profiler)", [
    C("from torch.cuda.amp import GradScaler, autocast", "amp", "replace", True,
      "from torch_npu.npu.amp import GradScaler, autocast",
      "CUDA autocast/GradScaler disable themselves without CUDA: th_amp_ddp would silently train in fp32"),
    C("return data.cuda(non_blocking=non_blocking)", "tensor_to_device", "replace", True,
      "return data.npu(non_blocking=non_blocking)",
      "Tensor.cuda raises without CUDA"),
    C("assert FusedAdam is not None, 'fused_adam needs apex built with --cuda_ext'", "fused_optimizer", "removal", False,
      None,
      "goes with the replacement below; whether Ascend apex still exposes the FusedAdam name is unconfirmed"),
    C("return FusedAdam(params, adam_w_mode=True, **opt_params)", "fused_optimizer", "replace", True,
      "return torch.optim.AdamW(params, **opt_params)  # or torch_npu.optim.NpuFusedAdamW",
      "apex FusedAdam needs the amp_C CUDA extension, which does not exist on NPU"),
    C("model = model.cuda()", "tensor_to_device", "replace", True,
      "model = model.npu()",
      "Module.cuda raises without CUDA"),
    C("model, self.optimizer = amp.initialize(model, self.optimizer, opt_level=opt_level)", "amp", "replace", False,
      "model, self.optimizer = amp.initialize(model, self.optimizer, opt_level=opt_level, loss_scale=128.0, combine_grad=True)",
      "Ascend apex supports O1; combine_grad is a performance option"),
    C("model = DistributedDataParallel(model, device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
      "model = DistributedDataParallel(model, device_ids=[torch.npu.current_device()],",
      "torch.cuda.current_device raises without CUDA"),
    C("from torch.profiler import profile, schedule, tensorboard_trace_handler, ProfilerActivity", "torch_cuda_api", "replace", True,
      "from torch_npu.profiler import profile, schedule, tensorboard_trace_handler, ProfilerActivity",
      "torch.profiler records no NPU activity; the trace would silently contain CPU ops only"),
    C("prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],", "torch_cuda_api", "replace", True,
      "prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.NPU],",
      "CUDA activity does not exist for the NPU profiler"),
    C("                torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "                torch.npu.synchronize()",
      "per-step sync for batch timing raises without CUDA"),
    C("mem = torch.cuda.max_memory_allocated() / 1024.0 / 1024.0", "torch_cuda_api", "replace", False,
      "mem = torch.npu.max_memory_allocated() / 1024.0 / 1024.0",
      "log value only; reports 0 on NPU"),
    C("scores = evaluate_cd(self.module, test_data_loader, device=torch.device('cuda'))", "device_type", "replace", True,
      "scores = evaluate_cd(self.module, test_data_loader, device=torch.device('npu'))",
      "'cuda' device cannot be used on NPU"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "silent no-op at the very end of training"),
])

E("cs_script", "scripts/bisup_levircd.sh", "explicit_replacement",
  "ChangeStar scripts/bisup_levircd.sh (4-GPU torch.distributed.launch + eval)", [
    C("=#!/usr/bin/env bash", "import_torch_npu", "npu_only_addition", True,
      SET_ENV,
      "CANN environment for the launched ranks"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "ignored on Ascend, but local ranks 0-3 land on cards 0-3 anyway, so nothing changes in practice"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False,
      None,
      "NCCL-only knob; HCCL ignores it"),
    C("CUDA_VISIBLE_DEVICES=0 python ./eval_sup_change.py", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0 python ./eval_sup_change.py \\",
      "ignored on Ascend; --gpu defaults to 0, the same card"),
])

E("cs_config", "configs/levircd/r50_farseg_changestar_bisup.py", "explicit_replacement",
  "ChangeStar LEVIR-CD config (ever-style dict config, apex SyncBN flag)", [
    C("apex_sync_bn=True,", "distributed_framework", "replace", False,
      "apex_sync_bn=False,",
      "switch to torch SyncBatchNorm; apex SyncBN's CUDA kernels do not exist on NPU, whether its Python fallback works with Ascend apex is unconfirmed"),
    C("=sync_bn=False,", "distributed_framework", "replace", False,
      "sync_bn=True,",
      "nn.SyncBatchNorm is supported on Ascend (fp16/fp32)"),
])

E("cs_eval", "eval_sup_change.py", "explicit_replacement",
  "ChangeStar eval_sup_change.py (single-GPU test with flip TTA and FPS)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "entry script"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize(device)",
      "raises without CUDA"),
    C("with torch.cuda.amp.autocast(enabled=fp16):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=fp16):",
      "--fp16 would silently run fp32 on NPU"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "raises without CUDA"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu)",
      "raises without CUDA"),
    C("device = torch.device('cuda', args.gpu)", "device_type", "replace", True,
      "device = torch.device('npu', args.gpu)",
      "cuda device unusable on NPU"),
])
