"""Labels for probe363 (multi-task dense prediction and scene understanding, CUDA -> Ascend NPU).

One entry per upstream file; one C(...) per line a careful porter would edit. See ../README.md
for the label policy and the judgements behind `required`.
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


MTL = "SimonVandenhende/Multi-Task-Learning-PyTorch"
INVPT = "prismformer/InvPT"
LIBMTL = "median-research-group/LibMTL"
M2F = "facebookresearch/Mask2Former"
MTAN = "lorenmt/mtan"
DPT = "isl-org/DPT"

IMPORT_NOTE = ("entry script: explicit port imports torch_npu right after torch so torch.npu / the 'npu' device "
               "exist (autoload makes this optional only from torch_npu 2.5.1 on; these projects pin older torch)")

# ---------------------------------------------------------------------------------------------
# Multi-Task-Learning-PyTorch (MTI-Net / PAD-Net, NYUD + PASCAL-Context)
# ---------------------------------------------------------------------------------------------
E("mtl_main", "main.py", "explicit_replacement", MTL + " main.py (single-node training entry point)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("model = torch.nn.DataParallel(model)", "distributed_framework", "removal", True, None,
      "torch.nn.DataParallel is marked unsupported on Atlas A2/A3 in Ascend's API list and in msFmkTransplt's "
      "unsupported list; single-NPU port drops the wrapper (multi-NPU would use DDP+hccl). Checkpoint keys lose "
      "the 'module.' prefix, which common_config.strip_module_prefix already tolerates"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
      "model must live on the NPU; .cuda() raises on a torch build without CUDA"),
    C("criterion.cuda()", "tensor_to_device", "replace", False, "criterion.npu()",
      "changed for consistency; the loss modules hold no parameters or tensor buffers here, so Module.cuda() "
      "never touches a tensor and is a no-op rather than an error on an NPU host"),
])

E("mtl_train_utils", "train/train_utils.py", "explicit_replacement", MTL + " train/train_utils.py", [
    C("images = batch['image'].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "images = batch['image'].npu(non_blocking=True)", "input batch must be moved to the NPU"),
    C("targets = {task: batch[task].cuda(non_blocking=True) for task in p.ALL_TASKS.NAMES}", "tensor_to_device",
      "replace", True, "targets = {task: batch[task].npu(non_blocking=True) for task in p.ALL_TASKS.NAMES}",
      "per-task targets must be on the same device as the predictions"),
    C("inputs = batch['image'].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "inputs = batch['image'].npu(non_blocking=True)",
      "second training loop; its targets follow inputs.device so only this line changes"),
])

E("mtl_eval_utils", "evaluation/evaluate_utils.py", "explicit_replacement", MTL + " evaluation/evaluate_utils.py", [
    C("images = batch['image'].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "images = batch['image'].npu(non_blocking=True)", "online evaluation input"),
    C("targets = {task: batch[task].cuda(non_blocking=True) for task in tasks}", "tensor_to_device", "replace", True,
      "targets = {task: batch[task].npu(non_blocking=True) for task in tasks}", "online evaluation targets"),
    C("inputs, meta = sample['image'].cuda(non_blocking=True), sample['meta']", "tensor_to_device", "replace", True,
      "inputs, meta = sample['image'].npu(non_blocking=True), sample['meta']",
      "prediction-saving loop feeds inputs to the model"),
])

E("mtl_common_config", "utils/common_config.py", "explicit_replacement", MTL + " utils/common_config.py (model/data/loss getters)", [
    C("num_workers=p['nworkers'], collate_fn=collate_mil, pin_memory=True)", "pin_memory", "replace", False,
      "num_workers=p['nworkers'], collate_fn=collate_mil, pin_memory=True, pin_memory_device='npu')",
      "performance only: without a CUDA device older DataLoaders silently skip pinning; naming the npu pin "
      "device keeps page-locked host buffers for the async H2D copies (unconfirmed which torch versions need it)"),
])

E("mtl_env_yml", "configs/env.yml", "explicit_replacement", MTL + " configs/env.yml", [])
E("mtl_exp_yml", "configs/nyud/hrnet18/mti_net.yml", "explicit_replacement", MTL + " configs/nyud/hrnet18/mti_net.yml", [])
E("mtl_mti_net", "models/mti_net.py", "explicit_replacement", MTL + " models/mti_net.py (device-agnostic model)", [])
E("mtl_loss_schemes", "losses/loss_schemes.py", "explicit_replacement", MTL + " losses/loss_schemes.py", [])

# ---------------------------------------------------------------------------------------------
# InvPT (inverted pyramid multi-task transformer, DDP training)
# ---------------------------------------------------------------------------------------------
E("invpt_main", "main.py", "explicit_replacement", INVPT + " main.py (DDP entry point)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("dist.init_process_group(backend='nccl'", "dist_backend", "replace", True,
      "dist.init_process_group(backend='hccl', init_method='env://', timeout=datetime.timedelta(0, 3600*2))",
      "NCCL does not exist on Ascend; HCCL is the collective backend"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "bind each rank to its NPU"),
    C("torch.cuda.get_device_name(args.local_rank)", "torch_cuda_api", "replace", True,
      "print(colored('Running on %d GPUs, device: %s' % (dist.get_world_size(), torch.npu.get_device_name(args.local_rank)), 'yellow'))",
      "torch.cuda.get_device_name lazily initialises CUDA and raises on rank 0 of an NPU host"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
      "model must be on the rank's NPU before DDP wraps it (device_ids=[local_rank] then refers to the NPU)"),
    C("criterion = get_criterion(p).cuda()", "tensor_to_device", "replace", False,
      "criterion = get_criterion(p).npu()",
      "consistency only: the criterion holds no tensors, so .cuda() is a no-op rather than an error"),
])

E("invpt_train_utils", "utils/train_utils.py", "explicit_replacement", INVPT + " utils/train_utils.py (train loop, optional AMP)", [
    C("scaler = torch.cuda.amp.GradScaler(enabled=use_amp)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=use_amp)",
      "with use_amp: True the CUDA GradScaler disables itself when CUDA is unavailable, so fp16 NPU autocast "
      "would train without loss scaling (silent gradient underflow)"),
    C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=use_amp):",
      "left as is, CUDA autocast warns and disables itself: the run silently becomes fp32 (slower, more memory) "
      "but stays numerically correct, so performance-only"),
    C("torch.cuda.max_memory_allocated() / 1024.0 / 1024.0))", "torch_cuda_api", "replace", False,
      "torch.npu.max_memory_allocated() / 1024.0 / 1024.0))",
      "log-only: the CUDA call returns 0 without a CUDA context instead of raising"),
])

E("invpt_utils", "utils/utils.py", "explicit_replacement", INVPT + " utils/utils.py (to_cuda helper, meters)", [
    C("return batch.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "return batch.npu(non_blocking=True)",
      "the recursive to_cuda helper moves every batch tensor; the function name can stay"),
])

E("invpt_test_utils", "utils/test_utils.py", "explicit_replacement", INVPT + " utils/test_utils.py (eval + timing)", [
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA rather than an error; porting it frees the NPU caching allocator before "
      "full-resolution inference (memory/performance only)"),
    C("images = batch['image'].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "images = batch['image'].npu(non_blocking=True)", "test input"),
    C("targets = {task: batch[task].cuda(non_blocking=True) for task in tasks}", "tensor_to_device", "replace", True,
      "targets = {task: batch[task].npu(non_blocking=True) for task in tasks}", "test targets compared with NPU outputs"),
    C("torch.cuda.synchronize()  # drain", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # drain the host-to-device copies before timing",
      "torch.cuda.synchronize initialises CUDA and raises on an NPU host"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "second sync closes the timed region; NPU kernels are asynchronous too"),
    C("inputs, meta = sample['image'].cuda(non_blocking=True), sample['meta']", "tensor_to_device", "replace", True,
      "inputs, meta = sample['image'].npu(non_blocking=True), sample['meta']",
      "only used for its size, but .cuda() itself raises without CUDA"),
])

E("invpt_run_sh", "run.sh", "explicit_replacement", INVPT + " run.sh (torch.distributed.launch launcher)", [
    C("export OMP_NUM_THREADS=4", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; many hosts/containers already export it, so not counted as required"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "the NPU runtime ignores CUDA_VISIBLE_DEVICES; since the list names devices 0-7 and ranks bind to "
      "local_rank 0-7 anyway, leaving it changes nothing on an 8-NPU host"),
])

E("invpt_model", "models/transformers/invpt.py", "explicit_replacement", INVPT + " models/transformers/invpt.py (decoder, device-agnostic)", [])
E("invpt_config", "configs/pascal/pascal_vitLp16.yml", "explicit_replacement", INVPT + " configs/pascal/pascal_vitLp16.yml", [])

# ---------------------------------------------------------------------------------------------
# LibMTL (library of MTL weighting strategies / architectures)
# ---------------------------------------------------------------------------------------------
E("libmtl_utils", "LibMTL/utils.py", "explicit_replacement", LIBMTL + " LibMTL/utils.py (seed + device helpers)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "guard is simply False on an NPU host; torch.manual_seed just above already seeds accelerator "
      "generators in recent torch (unconfirmed in the knowledge base), so porting is for explicitness"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "see the guard above; torch.cuda.manual_seed_all is lazily queued and never raises"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = gpu_id', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = gpu_id',
      "--gpu_id is the only device selector (the trainer always uses device index 0); without this the "
      "choice is silently ignored and every job lands on NPU 0"),
])

E("libmtl_config", "LibMTL/config.py", "explicit_replacement", LIBMTL + " LibMTL/config.py (argparse)", [])

E("libmtl_trainer", "LibMTL/trainer.py", "explicit_replacement", LIBMTL + " LibMTL/trainer.py", [
    C("self.device = torch.device('cuda:0')", "device_type", "replace", True,
      "self.device = torch.device('npu:0')",
      "single device global passed to the model, the weighting methods and _process_data"),
    C("self.model.load_state_dict(torch.load(self.load_path), strict=False)", "tensor_to_device", "replace", False,
      "self.model.load_state_dict(torch.load(self.load_path, map_location=self.device), strict=False)",
      "only matters for checkpoints saved on a GPU machine (they deserialize to cuda and fail); checkpoints "
      "written by the ported trainer load fine"),
])

E("libmtl_abs_weighting", "LibMTL/weighting/abstract_weighting.py", "explicit_replacement", LIBMTL + " LibMTL/weighting/abstract_weighting.py", [])
E("libmtl_nash_mtl", "LibMTL/weighting/Nash_MTL.py", "explicit_replacement", LIBMTL + " LibMTL/weighting/Nash_MTL.py (cvxpy on host)", [])

E("libmtl_requirements", "requirements.txt", "explicit_replacement", LIBMTL + " requirements.txt", [
    C("torch>=1.8.0", "import_torch_npu", "replace", False, "torch==2.1.0",
      "torch_npu wheels pair with one exact torch version; pinning avoids pip pulling an unmatched torch "
      "(unconfirmed whether the torch-npu wheel pins torch itself)"),
    C("torchvision>=0.9.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post17",
      "the Ascend adapter must be installed; 2.1.0.post17 pairs with torch 2.1.0 / CANN 8.3.RC1"),
])

E("libmtl_nyu_main", "examples/nyu/main.py", "explicit_replacement", LIBMTL + " examples/nyu/main.py", [
    C("import torch, argparse", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',",
      "performance only (pinning is silently skipped without CUDA on older torch)"),
    C("pin_memory=True)", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu')",
      "performance only, test loader"),
])

# ---------------------------------------------------------------------------------------------
# Mask2Former (universal segmentation; MSDeformAttn CUDA op)
# ---------------------------------------------------------------------------------------------
OPS = "mask2former/modeling/pixel_decoder/ops"
E("m2f_setup", OPS + "/setup.py", "device_branch_or_abstraction", M2F + " " + OPS + "/setup.py (CUDAExtension build)", [])
E("m2f_make_sh", OPS + "/make.sh", "device_branch_or_abstraction", M2F + " " + OPS + "/make.sh", [])

E("m2f_msda_func", OPS + "/functions/ms_deform_attn_func.py", "device_branch_or_abstraction",
  M2F + " " + OPS + "/functions/ms_deform_attn_func.py", [
    C("raise ModuleNotFoundError(info_string)", "custom_cuda_extension", "replace", True, "MSDA = None",
      "the CUDA extension cannot be built on Ascend (no nvcc); making the import optional lets "
      "MSDeformAttn fall through to ms_deform_attn_core_pytorch (grid_sample has an NPU kernel)"),
])

E("m2f_msda_module", OPS + "/modules/ms_deform_attn.py", "device_branch_or_abstraction",
  M2F + " " + OPS + "/modules/ms_deform_attn.py (try CUDA op, except -> PyTorch path)", [])

E("m2f_matcher", "mask2former/modeling/matcher.py", "explicit_replacement", M2F + " mask2former/modeling/matcher.py", [
    C("from torch.cuda.amp import autocast", "amp", "replace", True, "from torch.npu.amp import autocast",
      "autocast(enabled=False) must switch off the *NPU* autocast (AMP is on in the base config); a CUDA "
      "autocast context leaves the cost einsums in fp16, where summed BCE costs over the sampled points can "
      "overflow and corrupt the Hungarian matching"),
])

E("m2f_train_net", "train_net.py", "explicit_replacement", M2F + " train_net.py (detectron2 launcher)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("=torch.cuda.device_count() > comm.get_rank()", "torch_cuda_api", "replace", True,
      "torch.npu.device_count() > comm.get_rank()",
      "torch.cuda.device_count() is 0 on an NPU host, so the Cityscapes instance assert always fires"),
    C("assert torch.cuda.device_count() > comm.get_rank(), \\", "torch_cuda_api", "replace", True,
      "assert torch.npu.device_count() > comm.get_rank(), \\", "same for the Cityscapes semantic evaluator"),
    C("cfg.merge_from_list(args.opts)", "device_type", "npu_only_addition", True, 'cfg.MODEL.DEVICE = "npu"',
      "detectron2's MODEL.DEVICE defaults to 'cuda'; set it before cfg.freeze() (detectron2 itself also needs "
      "its NPU port for launch/comm, outside this file)"),
])

E("m2f_base_yaml", "configs/coco/panoptic-segmentation/Base-COCO-PanopticSegmentation.yaml", "explicit_replacement",
  M2F + " configs/coco/panoptic-segmentation/Base-COCO-PanopticSegmentation.yaml", [])

# ---------------------------------------------------------------------------------------------
# MTAN (SegNet-MTAN on NYUv2)
# ---------------------------------------------------------------------------------------------
E("mtan_segnet", "im2im_pred/model_segnet_mtan.py", "explicit_replacement", MTAN + " im2im_pred/model_segnet_mtan.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "unported, the script silently trains on the CPU of an NPU host"),
])

E("mtan_utils", "im2im_pred/utils.py", "explicit_replacement", MTAN + " im2im_pred/utils.py (metrics + trainers, device passed in)", [])

# ---------------------------------------------------------------------------------------------
# DPT (dense prediction transformers: monocular depth + ADE20K segmentation inference)
# ---------------------------------------------------------------------------------------------
E("dpt_run_monodepth", "run_monodepth.py", "explicit_replacement", DPT + " run_monodepth.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "unported, inference silently runs on the host CPU"),
    C('if optimize == True and device == torch.device("cuda"):', "device_type", "replace", False,
      'if optimize == True and device == torch.device("npu"):',
      "keeps the fp16 fast path on the NPU; left alone the model runs in fp32 (correct, slower)"),
    C("model = model.to(memory_format=torch.channels_last)", "unsupported_op_workaround", "removal", True, None,
      "once the fp16 branch is taken on the NPU, channels_last must go: msFmkTransplt documents channel_last "
      "as unsupported on Ascend (use contiguous)"),
    C('if optimize and device.type == "cuda":', "device_type", "replace", False,
      'if optimize and device.type == "npu":', "input half-precision cast must match the model's"),
    C("sample = sample.to(memory_format=torch.channels_last)", "unsupported_op_workaround", "removal", True, None,
      "same channels_last limitation for the input tensor"),
    C('if device.type == "cuda":', "device_type", "replace", False, 'if device.type == "npu":',
      "only the reported ms/image is wrong (async launches) if left; output unaffected"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "with the guard above ported this line runs and torch.cuda.synchronize raises on an NPU host"),
])

E("dpt_run_segmentation", "run_segmentation.py", "explicit_replacement", DPT + " run_segmentation.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "unported, segmentation silently runs on the host CPU"),
    C('=if optimize == True and device == torch.device("cuda"):', "device_type", "replace", False,
      'if optimize == True and device == torch.device("npu"):', "fp16 fast path on the NPU (performance only)"),
    C("model = model.to(memory_format=torch.channels_last)", "unsupported_op_workaround", "removal", True, None,
      "channel_last unsupported on Ascend per msFmkTransplt's documented limitations"),
    C("# fp16 inference path", "device_type", "replace", False,
      'if optimize == True and device == torch.device("npu"):  # fp16 inference path',
      "input cast must follow the model's precision"),
    C("sample = sample.to(memory_format=torch.channels_last)", "unsupported_op_workaround", "removal", True, None,
      "channels_last input"),
])

E("dpt_models", "dpt/models.py", "explicit_replacement", DPT + " dpt/models.py", [])

E("dpt_dockerfile", "Dockerfile", "explicit_replacement", DPT + " Dockerfile (style of the sibling MiDaS image)", [
    C("FROM nvidia/cuda:11.1.1-cudnn8-runtime-ubuntu20.04", "env_var", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "the image must carry the CANN toolkit (set_env exports baked in as ENV); tag layout follows "
      "Ascend/cann-container-image, the exact registry name is unconfirmed"),
    C("RUN pip3 install torch==1.8.1+cu111", "import_torch_npu", "replace", True,
      "RUN pip3 install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post17",
      "CUDA wheels are useless on Ascend; install the CPU/aarch64 torch plus the matching torch-npu"),
])
