# Labels for probe304: human parsing / pose-guided person image synthesis (CUDA -> Ascend NPU).
# One entry per upstream file; one C(...) per line a careful porter would edit.
# kinds / change types / styles: see bench/probe_build.py.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu"
NO_CUDNN = "cudnn flags are accepted on NPU but do nothing there (silent no-op); drop or keep"
DP_DEAD = ("only reached when a DataParallel-derived wrapper drives >=2 devices; torch.cuda.comm scatter/"
           "reduce/broadcast have no NPU path (✘ in Ascend's list) - dead once the trainer drops DataParallel")

# ------------------------------------------------------------------ SCHP
E("schp_train", "train.py", "explicit_replacement",
  "Self-Correction-Human-Parsing train.py (DataParallelModel, --gpu, inplace_abn)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "entry script: registers the npu device and torch.npu used by the replaced lines (mandatory before torch_npu 2.5.1)"),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu',
        "CANN ignores CUDA_VISIBLE_DEVICES: --gpu would silently stop selecting devices"),
      C("=cudnn.enabled = True", "torch_cuda_api", "removal", False, None, NO_CUDNN),
      C("=cudnn.benchmark = True", "torch_cuda_api", "removal", False, None, NO_CUDNN),
      C("model = DataParallelModel(AugmentCE2P)", "distributed_framework", "replace", True,
        "model = AugmentCE2P  # one NPU per process; DDP under torchrun for several",
        "DataParallelModel subclasses nn.DataParallel (✘ on Ascend: scatter/replicate go through torch.cuda.comm)"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()",
        "Module.cuda() raises without CUDA"),
      C("checkpoint = torch.load(restore_from)", "tensor_to_device", "replace", True,
        "checkpoint = torch.load(restore_from, map_location='cpu')",
        "resume checkpoints written by the GPU runs hold cuda storages; deserialising them without map_location fails when CUDA is unavailable"),
      C("model.load_state_dict(checkpoint['state_dict'])", "distributed_framework", "replace", True,
        "model.load_state_dict({k[7:] if k.startswith('module.') else k: v for k, v in checkpoint['state_dict'].items()})",
        "GPU-era checkpoints were saved from the DataParallel wrapper ('module.' keys); the bare model rejects them"),
      C("schp_model = DataParallelModel(SCHP_AugmentCE2P)", "distributed_framework", "replace", True,
        "schp_model = SCHP_AugmentCE2P", "same nn.DataParallel wrapper as the main model"),
      C("=schp_model.cuda()", "tensor_to_device", "replace", True, "schp_model.npu()",
        "Module.cuda() raises without CUDA"),
      C("schp_model.load_state_dict(schp_model_state_dict)", "distributed_framework", "replace", True,
        "schp_model.load_state_dict({k[7:] if k.startswith('module.') else k: v for k, v in schp_model_state_dict.items()})",
        "same 'module.' prefix issue for the SCHP checkpoint"),
      C("criterion = DataParallelCriterion(criterion)", "distributed_framework", "removal", True, None,
        "DataParallelCriterion scatters targets with torch.cuda.comm; with a bare model the plain CriterionAll takes the raw outputs"),
      C("=criterion.cuda()", "tensor_to_device", "replace", False, "criterion.npu()",
        "CriterionAll owns no parameters or buffers, so Module.cuda() never touches a tensor and does not raise; edit for consistency only"),
      C("num_workers=args.num_workers, shuffle=True, pin_memory=True, drop_last=True", "pin_memory", "replace", False,
        "num_workers=args.num_workers, shuffle=True, pin_memory=True, pin_memory_device='npu', drop_last=True",
        "older DataLoaders only pin when torch.cuda.is_available(), i.e. pinning is silently skipped on NPU hosts (performance; unconfirmed for the torch version used)"),
      C("images, labels, _ = batch", "tensor_to_device", "npu_only_addition", True,
        "images = images.npu(non_blocking=True)",
        "DataParallelModel used to scatter the CPU batch to the GPUs; without it the images must be moved explicitly"),
      C("labels = labels.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "labels = labels.npu(non_blocking=True)", "Tensor.cuda() raises without CUDA"),
      C("labels = labels.type(torch.cuda.LongTensor)", "tensor_to_device", "replace", True,
        "labels = labels.long()", "torch.cuda.LongTensor type cast needs CUDA; dtype-only cast keeps the NPU placement"),
      C("edges = edges.type(torch.cuda.LongTensor)", "tensor_to_device", "replace", True,
        "edges = edges.long()", "as above"),
      C("soft_preds = schp_model(images)", "distributed_framework", "replace", True,
        "soft_preds = [schp_model(images)]",
        "the loop below iterates over the per-device output list DataParallelModel.gather returned; the bare model returns one output"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "torch.cuda.empty_cache returns silently when CUDA was never initialised, so nothing is freed on NPU; memory hygiene only"),
  ])

E("schp_evaluate", "evaluate.py", "explicit_replacement",
  "Self-Correction-Human-Parsing evaluate.py (multi-scale + flip, --gpu, speed test)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu', "CANN ignores CUDA_VISIBLE_DEVICES"),
      C("=cudnn.benchmark = True", "torch_cuda_api", "removal", False, None, NO_CUDNN),
      C("=cudnn.enabled = True", "torch_cuda_api", "removal", False, None, NO_CUDNN),
      C("testloader = data.DataLoader(lip_test_dataset, batch_size=args.batch_size, shuffle=False, pin_memory=True)",
        "pin_memory", "replace", False,
        "testloader = data.DataLoader(lip_test_dataset, batch_size=args.batch_size, shuffle=False, pin_memory=True, pin_memory_device='npu')",
        "pinning silently skipped without CUDA on older DataLoaders; performance only, unconfirmed"),
      C("state_dict = torch.load(args.model_restore)['state_dict']", "tensor_to_device", "replace", True,
        "state_dict = torch.load(args.model_restore, map_location='cpu')['state_dict']",
        "checkpoints saved by GPU training hold cuda storages"),
      C("name = k[7:]  # remove `module.`", "distributed_framework", "replace", True,
        "name = k[7:] if k.startswith('module.') else k  # ported trainer saves the bare model",
        "checkpoints from the ported trainer (no DataParallel wrapper) have no 'module.' prefix; blind k[7:] truncates every key"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "Module.cuda() raises without CUDA"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA (reached with --speed-test)"),
      C("parsing, logits = multi_scale_testing(model, image.cuda(), crop_size=input_size, flip=args.flip,",
        "tensor_to_device", "replace", True,
        "parsing, logits = multi_scale_testing(model, image.npu(), crop_size=input_size, flip=args.flip,",
        "Tensor.cuda() raises without CUDA"),
      C("torch.cuda.synchronize(device=None)", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA (reached with --speed-test)"),
  ])

E("schp_extractor", "simple_extractor.py", "transfer_to_npu",
  "Self-Correction-Human-Parsing simple_extractor.py (quick inference over a folder)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu; from torch_npu.contrib import transfer_to_npu",
        "quick port of an inference script: transfer_to_npu redirects .cuda()/torch.cuda.* here, so those lines stay unedited"),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu',
        "transfer_to_npu does not touch environment variables; CANN ignores CUDA_VISIBLE_DEVICES"),
      C("state_dict = torch.load(args.model_restore)['state_dict']", "tensor_to_device", "replace", False,
        "state_dict = torch.load(args.model_restore, map_location='cpu')['state_dict']",
        "released SCHP checkpoints come from GPU training; transfer_to_npu rewrites an explicit map_location only - unconfirmed whether cuda-tagged storages load without one"),
      C("name = k[7:]  # remove `module.`", "distributed_framework", "replace", False,
        "name = k[7:] if k.startswith('module.') else k",
        "only for checkpoints produced by the ported, wrapper-less trainer; the released GPU checkpoints keep the prefix"),
  ])

E("schp_abn_functions", "modules/functions.py", "kernel_rewrite",
  "inplace_abn autograd functions as vendored in SCHP (JIT load() of inplace_abn_cuda.cu)", [
      C('_backend = load(name="inplace_abn",', "custom_cuda_extension", "replace", True,
        "_backend = None  # no nvcc on Ascend: the kernels are re-expressed with torch ops (_torch_* helpers)",
        "torch.utils.cpp_extension.load JIT-builds .cu sources with nvcc (✘ on Ascend) at import time, so `import modules` fails"),
      C("_backend.leaky_relu_forward(x, ctx.slope)", "custom_cuda_extension", "replace", True,
        "F.leaky_relu_(x, ctx.slope)", "call into the CUDA extension"),
      C("_backend.elu_forward(x)", "custom_cuda_extension", "replace", True, "F.elu_(x)",
        "call into the CUDA extension"),
      C("_backend.leaky_relu_backward(x, dx, ctx.slope)", "custom_cuda_extension", "replace", True,
        "_torch_leaky_relu_backward(x, dx, ctx.slope)", "call into the CUDA extension (undoes the in-place activation)"),
      C("_backend.elu_backward(x, dx)", "custom_cuda_extension", "replace", True,
        "_torch_elu_backward(x, dx)", "call into the CUDA extension"),
      C("=mean, var = _backend.mean_var(x)", "custom_cuda_extension", "replace", True,
        "mean, var = _torch_mean_var(x)", "call into the CUDA extension"),
      C("=_backend.forward(x, mean, var, weight, bias, ctx.affine, ctx.eps)", "custom_cuda_extension", "replace", True,
        "_torch_bn_forward_(x, mean, var, weight, bias, ctx.affine, ctx.eps)", "call into the CUDA extension"),
      C("=edz, eydz = _backend.edz_eta(z, dz, weight, bias, ctx.affine, ctx.eps)", "custom_cuda_extension", "replace", True,
        "edz, eydz = _torch_edz_eta(z, dz, weight, bias, ctx.affine, ctx.eps)", "call into the CUDA extension"),
      C("=dx = _backend.backward(z, dz, var, weight, bias, edz, eydz, ctx.affine, ctx.eps)", "custom_cuda_extension",
        "replace", True, "dx = _torch_bn_backward(z, dz, var, weight, bias, edz, eydz, ctx.affine, ctx.eps)",
        "call into the CUDA extension"),
      C("local_mean, local_var = _backend.mean_var(x)", "custom_cuda_extension", "replace", True,
        "local_mean, local_var = _torch_mean_var(x)", "call into the CUDA extension (sync variant)"),
      C("_backend.forward(x, mean, var, weight, bias, ctx.affine, ctx.eps)  # sync", "custom_cuda_extension", "replace",
        True, "_torch_bn_forward_(x, mean, var, weight, bias, ctx.affine, ctx.eps)  # sync",
        "call into the CUDA extension (sync variant)"),
      C("edz, eydz = _backend.edz_eta(z, dz, weight, bias, ctx.affine, ctx.eps)  # sync", "custom_cuda_extension",
        "replace", True, "edz, eydz = _torch_edz_eta(z, dz, weight, bias, ctx.affine, ctx.eps)  # sync",
        "call into the CUDA extension (sync variant)"),
      C("dx = _backend.backward(z, dz, var, weight, bias, edz, eydz, ctx.affine, ctx.eps)  # sync",
        "custom_cuda_extension", "replace", True,
        "dx = _torch_bn_backward(z, dz, var, weight, bias, edz, eydz, ctx.affine, ctx.eps)  # sync",
        "call into the CUDA extension (sync variant)"),
  ])

E("schp_abn_bn", "modules/bn.py", "kernel_rewrite",
  "inplace_abn nn.Module wrappers (ABN / InPlaceABN / InPlaceABNSync) as vendored in SCHP", [])

E("schp_encoding", "utils/encoding.py", "explicit_replacement",
  "PyTorch-Encoding parallel.py as vendored in SCHP/CE2P (DataParallelModel / DataParallelCriterion)", [
      C("=results = comm.reduce_add_coalesced(inputs, ctx.target_gpus[0])", "distributed_framework", "replace", False,
        "results = _dist_all_reduce(inputs)  # torch.distributed (HCCL) instead of torch.cuda.comm", DP_DEAD),
      C("=outputs = comm.broadcast_coalesced(results, ctx.target_gpus)", "distributed_framework", "replace", False,
        "outputs = [results]", DP_DEAD),
      C("grad_results = comm.reduce_add_coalesced(inputs, ctx.target_gpus[0])", "distributed_framework", "replace",
        False, "grad_results = _dist_all_reduce(inputs)", DP_DEAD),
      C("grad_outputs = comm.broadcast_coalesced(grad_results, ctx.target_gpus)", "distributed_framework", "replace",
        False, "grad_outputs = [grad_results]", DP_DEAD),
      C("return comm.reduce_add(inputs)", "distributed_framework", "replace", False,
        "return torch.stack([i.to(inputs[0].device) for i in inputs]).sum(0)", DP_DEAD),
      C("return Broadcast.apply(ctx.target_gpus, gradOutput)", "distributed_framework", "replace", False,
        "return tuple(gradOutput for _ in ctx.target_gpus)", DP_DEAD),
      C("with torch.cuda.device(device):", "torch_cuda_api", "replace", False, "with torch.npu.device(device):",
        DP_DEAD + " (threaded criterion apply)"),
  ])

E("schp_criterion", "utils/criterion.py", "explicit_replacement",
  "Self-Correction-Human-Parsing utils/criterion.py (CriterionAll, consistency loss)", [
      C("v_edge_pre = v_edge_pre.type(torch.cuda.FloatTensor)", "tensor_to_device", "replace", True,
        "v_edge_pre = v_edge_pre.float()", "torch.cuda.FloatTensor cast needs CUDA"),
      C("weights.cuda(), ignore_index=self.ignore_index)", "tensor_to_device", "replace", True,
        "weights.to(scale_pred.device), ignore_index=self.ignore_index)", "Tensor.cuda() raises without CUDA"),
      C("onehot_tensor = torch.zeros(b, num_cls, h, w).cuda()", "tensor_to_device", "replace", True,
        "onehot_tensor = torch.zeros(b, num_cls, h, w, device=tensor.device)", "Tensor.cuda() raises without CUDA"),
  ])

E("schp_target_generation", "datasets/target_generation.py", "explicit_replacement",
  "Self-Correction-Human-Parsing datasets/target_generation.py (edge maps on the GPU)", [
      C("label = label.type(torch.cuda.FloatTensor)", "tensor_to_device", "replace", True,
        "label = label.float()", "torch.cuda.FloatTensor cast needs CUDA"),
      C("edge = torch.zeros(label.shape, dtype=torch.float).cuda()", "tensor_to_device", "replace", True,
        "edge = torch.zeros(label.shape, dtype=torch.float, device=label.device)", "Tensor.cuda() raises without CUDA"),
      C("kernel = torch.ones((1, 1, edge_width, edge_width), dtype=torch.float).cuda()", "tensor_to_device", "replace",
        True, "kernel = torch.ones((1, 1, edge_width, edge_width), dtype=torch.float, device=label.device)",
        "Tensor.cuda() raises without CUDA"),
  ])

E("schp_utils", "utils/schp.py", "explicit_replacement",
  "Self-Correction-Human-Parsing utils/schp.py (moving average + BN re-estimation)", [
      C("images, labels, _ = batch", "tensor_to_device", "npu_only_addition", True,
        "images = images.npu(non_blocking=True)",
        "the BN re-estimation pass relied on DataParallelModel scattering CPU batches; the bare NPU model needs device inputs"),
  ])

E("schp_train_sh", "scripts/train_lip.sh", "explicit_replacement",
  "SCHP-style LIP training/eval launcher (--gpu 0,1,2, TORCH_CUDA_ARCH_LIST for the JIT build)", [
      C("=set -e", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment (LD_LIBRARY_PATH, ASCEND_OPP_PATH, ...) must be sourced before python imports torch_npu"),
      C('export TORCH_CUDA_ARCH_LIST="6.1;7.0;7.5"', "env_var", "removal", False, None,
        "only steers nvcc for the inplace_abn JIT build, which the port removes"),
      C("nvidia-smi --query-gpu=index,name,memory.total --format=csv", "torch_cuda_api", "replace", True,
        "npu-smi info", "nvidia-smi does not exist on Ascend hosts; under `set -e` the script aborts here"),
      C("CUDA_LAUNCH_BLOCKING=0 python train.py", "env_var", "replace", False,
        "ASCEND_LAUNCH_BLOCKING=0 python train.py \\",
        "CUDA_LAUNCH_BLOCKING is ignored by CANN (0 is the default anyway)"),
  ])

E("schp_env", "environment.yml", "explicit_replacement",
  "SCHP conda environment.yml (cudatoolkit + pytorch channel build)", [
      C("- cudatoolkit=10.1", "import_torch_npu", "removal", True, None,
        "pulls the CUDA runtime and makes conda pick the CUDA build of pytorch; Ascend uses the host CANN toolkit"),
      C("- pytorch=1.5.1", "import_torch_npu", "removal", True, None,
        "pytorch-channel CUDA build; torch must come from pip in the exact version of the torch_npu wheel"),
      C("- torchvision=0.6.1", "import_torch_npu", "removal", True, None,
        "tied to torch 1.5.1 (CUDA build); installed from pip next to the new torch"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True,
        "    - torch-npu==2.1.0.post12  # with torch==2.1.0 and torchvision==0.16.0 (CPU wheels)",
        "torch_npu wheel version must equal the torch version (+.postN); 2.1.0.post12 pairs with CANN 8.1.RC1"),
  ])

# ------------------------------------------------------------------ CIHP-PGN port
E("pgn_train", "train_pgn.py", "explicit_replacement",
  "CIHP Part Grouping Network PyTorch port: DDP launcher with native AMP / optional apex", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "lazy no-op without CUDA; torch.manual_seed above should already seed the npu generator (unconfirmed)"),
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.local_rank)", "raises without CUDA"),
      C("dist.init_process_group(backend='nccl', init_method='env://')", "dist_backend", "replace", True,
        "dist.init_process_group(backend='hccl', init_method='env://')", "NCCL is not available on Ascend; HCCL is"),
      C("device = torch.device('cuda', args.local_rank)", "device_type", "replace", True,
        "device = torch.device('npu', args.local_rank)", "every .to(device) in the file follows this"),
      C("=cudnn.benchmark = True", "torch_cuda_api", "removal", False, None, NO_CUDNN),
      C("major, _ = torch.cuda.get_device_capability(device)", "device_capability_check", "replace", True,
        "major = 8 if torch.npu.is_bf16_supported() else 0",
        "SM capability query raises without CUDA (reached with --amp-dtype bf16); Ascend exposes is_bf16_supported instead"),
      C("sampler=train_sampler, num_workers=args.workers, pin_memory=True,", "pin_memory", "replace", False,
        "sampler=train_sampler, num_workers=args.workers, pin_memory=True, pin_memory_device='npu',",
        "pinning silently skipped without CUDA on older DataLoaders; performance only, unconfirmed"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=(args.amp == 'native' and args.amp_dtype == 'fp16'))", "amp",
        "replace", True,
        "scaler = torch.npu.amp.GradScaler(enabled=(args.amp == 'native' and args.amp_dtype == 'fp16'))",
        "torch.cuda.amp.GradScaler disables itself with a warning when CUDA is unavailable: fp16 loss scaling silently off"),
      C("ckpt = torch.load(args.resume, map_location=lambda storage, loc: storage.cuda(args.local_rank))",
        "tensor_to_device", "replace", True, "ckpt = torch.load(args.resume, map_location='cpu')",
        "map_location calls storage.cuda(), which raises without CUDA"),
      C("with torch.cuda.amp.autocast(enabled=(args.amp == 'native'), dtype=amp_dtype):", "amp", "replace", True,
        "with torch.autocast(device_type='npu', enabled=(args.amp == 'native'), dtype=amp_dtype):",
        "cuda autocast warns and disables itself without CUDA: the run silently trains in fp32"),
      C("mem = torch.cuda.max_memory_allocated() / 1024.0 ** 3", "torch_cuda_api", "replace", False,
        "mem = torch.npu.max_memory_allocated() / 1024.0 ** 3",
        "returns 0 when CUDA was never initialised; log value only"),
      C("inst_labels[k] = votes.mode()[0]", "unsupported_op_workaround", "replace", False,
        "inst_labels[k] = torch.bincount(votes).argmax()",
        "torch.Tensor.mode is in msFmkTransplt's unsupported list and has no NPU kernel (CPU fallback, per-instance host round trip); unconfirmed whether it errors"),
      C("hist = hist.to(device)", "unsupported_op_workaround", "replace", True,
        "hist = hist.to(device=device, dtype=torch.int64)",
        "the fp64 confusion matrix is all_reduced next; Ascend restricts dist.all_reduce to bf16/fp16/fp32/int32/int64/bool (int64 keeps the pixel counts exact)"),
  ])

# ------------------------------------------------------------------ PISE / GFLA / DPTN
E("pise_base_model", "model/base_model.py", "explicit_replacement",
  "PISE / GFLA model/base_model.py (gpu_ids, save/load_networks)", [
      C("self.device = torch.device('cuda:{}'.format(self.gpu_ids[0])) if self.gpu_ids else torch.device('cpu')",
        "device_type", "replace", True,
        "self.device = torch.device('npu:{}'.format(self.gpu_ids[0])) if self.gpu_ids else torch.device('cpu')",
        "cuda device object; every .to(self.device) follows it"),
      C("=if len(self.gpu_ids) > 0 and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if len(self.gpu_ids) > 0 and torch.npu.is_available():",
        "False on an NPU host: the else branch moves the live network to CPU and never back, the next step fails on mixed devices"),
      C("torch.save(net.module.cpu().state_dict(), save_path)", "distributed_framework", "replace", True,
        "torch.save(getattr(net, 'module', net).cpu().state_dict(), save_path)",
        "init_net no longer wraps the nets in nn.DataParallel (✘ on NPU), so .module does not exist"),
      C("net.cuda(self.gpu_ids[0])", "tensor_to_device", "replace", True, "net.to(self.device)",
        "Module.cuda() raises without CUDA"),
      C("if len(self.gpu_ids) > 0 and torch.cuda.is_available() and not self.isTrain:", "torch_cuda_api", "replace",
        False, "if len(self.gpu_ids) > 0 and torch.npu.is_available() and not self.isTrain:",
        "False on NPU so the .to() is skipped, but init_net already placed the net and load_state_dict copies in place: silent no-op"),
  ])

E("pise_model", "model/painet_model.py", "explicit_replacement",
  "PISE model/painet_model.py (set_input moves pose heatmaps / parsing maps with .cuda(gpu_ids[0]))", [
      C("self.FloatTensor = torch.cuda.FloatTensor if len(self.gpu_ids) > 0", "torch_cuda_api", "replace", False,
        "self.FloatTensor = torch.npu.FloatTensor if len(self.gpu_ids) > 0 \\",
        "attribute lookup works on a CPU build and this model never instantiates the alias; hygiene only"),
      C("self.input_P1 = input_P1.cuda(self.gpu_ids[0], non_blocking=True)", "tensor_to_device", "replace", True,
        "self.input_P1 = input_P1.to(self.device, non_blocking=True)", "Tensor.cuda() raises without CUDA"),
      C("self.input_BP1 = input_BP1.cuda(self.gpu_ids[0], non_blocking=True)", "tensor_to_device", "replace", True,
        "self.input_BP1 = input_BP1.to(self.device, non_blocking=True)   # 18-channel pose heatmap",
        "Tensor.cuda() raises without CUDA"),
      C("self.input_SPL1 = input_SPL1.cuda(self.gpu_ids[0], non_blocking=True)", "tensor_to_device", "replace", True,
        "self.input_SPL1 = input_SPL1.to(self.device, non_blocking=True)  # 8-class parsing map",
        "Tensor.cuda() raises without CUDA"),
      C("self.input_P2 = input_P2.cuda(self.gpu_ids[0], non_blocking=True)", "tensor_to_device", "replace", True,
        "self.input_P2 = input_P2.to(self.device, non_blocking=True)", "Tensor.cuda() raises without CUDA"),
      C("self.input_BP2 = input_BP2.cuda(self.gpu_ids[0], non_blocking=True)", "tensor_to_device", "replace", True,
        "self.input_BP2 = input_BP2.to(self.device, non_blocking=True)", "Tensor.cuda() raises without CUDA"),
      C("self.input_SPL2 = input_SPL2.cuda(self.gpu_ids[0], non_blocking=True)", "tensor_to_device", "replace", True,
        "self.input_SPL2 = input_SPL2.to(self.device, non_blocking=True)", "Tensor.cuda() raises without CUDA"),
      C("self.label_P2 = label_P2.cuda(self.gpu_ids[0], non_blocking=True)", "tensor_to_device", "replace", True,
        "self.label_P2 = label_P2.to(self.device, non_blocking=True)", "Tensor.cuda() raises without CUDA"),
  ])

E("pise_base_function", "model/networks/base_function.py", "explicit_replacement",
  "GFLA / PISE model/networks/base_function.py (init_net with nn.DataParallel, local attention block)", [
      C("assert(torch.cuda.is_available())", "torch_cuda_api", "replace", True, "assert(torch.npu.is_available())",
        "is False on an NPU host, so every network construction asserts"),
      C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "Module.cuda() raises without CUDA"),
      C("net = torch.nn.DataParallel(net, gpu_ids)", "distributed_framework", "removal", True, None,
        "nn.DataParallel is ✘ on Ascend; keep the bare module on one NPU (DDP + torchrun for several)"),
  ])

E("pise_external_function", "model/networks/external_function.py", "explicit_replacement",
  "GFLA / PISE external_function.py (VGG losses, WGAN-GP, Sampling Correctness with Resample2d)", [
      C("from util.resample2d_package.resample2d import Resample2d", "custom_cuda_extension", "removal", True, None,
        "resample2d_package wraps the nvcc-built resample2d_cuda op (flownet2); the import fails without the compiled extension"),
      C("self.resample = Resample2d(4, 1, sigma=2)", "custom_cuda_extension", "removal", True, None,
        "construction of the CUDA-only sampler"),
      C("input_sample = self.resample(source_vgg, flow).view(b, c, -1)", "custom_cuda_extension", "replace", True,
        "input_sample = self.bilinear_warp(source_vgg, flow).view(b, c, -1)",
        "use the file's own grid_sample path; sampling kernel changes from 4x4 Gaussian to bilinear, so the loss is close but not bit-identical"),
      C("grad_outputs=torch.ones(disc_interpolates.size()).cuda(),", "tensor_to_device", "replace", True,
        "grad_outputs=torch.ones_like(disc_interpolates),", "Tensor.cuda() raises without CUDA (wgangp mode)"),
  ])

E("gfla_block_extractor", "util/block_extractor/block_extractor.py", "kernel_rewrite",
  "GFLA util/block_extractor/block_extractor.py (autograd wrapper over block_extractor_cuda)", [
      C("=import block_extractor_cuda", "custom_cuda_extension", "replace", True, "import block_extractor_npu",
        "nvcc-built module; re-implemented as an Ascend C kernel bound with NpuExtension (see setup.py)"),
      C("if not source.is_cuda:", "device_type", "replace", True, "if source.device.type != 'npu':",
        "NPU tensors are not is_cuda, so the guard raises NotImplementedError"),
      C("block_extractor_cuda.forward(source, flow_field, output, kernel_size)", "custom_cuda_extension", "replace",
        True, "block_extractor_npu.forward(source, flow_field, output, kernel_size)", "call into the CUDA extension"),
      C("if not grad_output.is_cuda:", "device_type", "replace", True, "if grad_output.device.type != 'npu':",
        "same is_cuda guard in backward"),
      C("block_extractor_cuda.backward(source, flow_field, grad_output.data,", "custom_cuda_extension", "replace", True,
        "block_extractor_npu.backward(source, flow_field, grad_output.data,", "call into the CUDA extension"),
  ])

E("gfla_block_setup", "util/block_extractor/setup.py", "kernel_rewrite",
  "GFLA util/block_extractor/setup.py (CUDAExtension with -gencode flags)", [
      C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", True,
        "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
        "NpuExtension adds the torch_npu / CANN include and library paths"),
      C("nvcc_args = [", "custom_cuda_extension", "removal", False, None,
        "nvcc -gencode flags are meaningless for the Ascend C build; harmless if left (ignored for non-.cu sources)"),
      C("nvcc_args += ['-G', '-lineinfo']", "custom_cuda_extension", "removal", False, None, "nvcc debug flags"),
      C("name='block_extractor_cuda',", "custom_cuda_extension", "replace", False, "name='block_extractor_npu',",
        "distribution name only; the importable module name comes from the extension below"),
      C("CUDAExtension('block_extractor_cuda', [", "custom_cuda_extension", "replace", True,
        "NpuExtension('block_extractor_npu', [", "CUDAExtension needs nvcc / CUDA_HOME and fails to build on Ascend"),
      C("'block_extractor_cuda.cc',", "custom_cuda_extension", "replace", True, "'block_extractor_npu.cpp',",
        "binding checks CUDA tensors and launches the CUDA kernel; rewritten for the Ascend C kernel"),
      C("'block_extractor_kernel.cu'", "custom_cuda_extension", "replace", True,
        "'block_extractor_kernel.cpp'  # Ascend C", ".cu source cannot be compiled without nvcc"),
      C("], extra_compile_args={'cxx': cxx_args, 'nvcc': nvcc_args})", "custom_cuda_extension", "replace", False,
        "], extra_compile_args={'cxx': cxx_args})", "follows the removal of nvcc_args"),
  ])

E("dptn_model", "model/DPTN_model.py", "explicit_replacement",
  "DPTN model/DPTN_model.py (dual-task pose transformer; .cuda() on pose heatmaps, CUDA-event benchmark)", [
      C("self.source_image = source_image.cuda()", "tensor_to_device", "replace", True,
        "self.source_image = source_image.to(self.device)", "Tensor.cuda() raises without CUDA"),
      C("self.source_pose = source_pose.cuda()", "tensor_to_device", "replace", True,
        "self.source_pose = source_pose.to(self.device)", "Tensor.cuda() raises without CUDA (pose heatmap)"),
      C("self.target_image = target_image.cuda()", "tensor_to_device", "replace", True,
        "self.target_image = target_image.to(self.device)", "Tensor.cuda() raises without CUDA"),
      C("self.target_pose = target_pose.cuda()", "tensor_to_device", "replace", True,
        "self.target_pose = target_pose.to(self.device)", "Tensor.cuda() raises without CUDA (pose heatmap)"),
      C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "start = torch.npu.Event(enable_timing=True)", "CUDA events need CUDA"),
      C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "end = torch.npu.Event(enable_timing=True)", "CUDA events need CUDA"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA"),
  ])

# ------------------------------------------------------------------ NTED (imaginaire-style trainer)
E("nted_train", "train.py", "explicit_replacement",
  "NTED train.py (torch.distributed.launch, --local_rank, opt.device = local_rank)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("init_dist(opt.local_rank, backend=getattr(opt, 'dist_backend', 'nccl'))", "dist_backend", "replace", False,
        "init_dist(opt.local_rank, backend=getattr(opt, 'dist_backend', 'hccl'))",
        "the shipped YAML sets dist_backend (labelled there); the 'nccl' default matters only for configs without the key"),
      C("opt.device = opt.local_rank", "device_type", "replace", True,
        "opt.device = 'npu:{}'.format(opt.local_rank)",
        "a bare int in .to(opt.device) means cuda:<n> (transfer_to_npu rewrites exactly this case)"),
      C("opt.device = torch.device('cuda')", "device_type", "replace", True, "opt.device = torch.device('npu')",
        "--single_gpu path"),
  ])

E("nted_distributed", "util/distributed.py", "explicit_replacement",
  "NTED / imaginaire util/distributed.py (init_dist with libcudart L2 fetch limit)", [
      C("def init_dist(local_rank, backend='nccl', **kwargs):", "dist_backend", "replace", True,
        "def init_dist(local_rank, backend='hccl', **kwargs):",
        "default used by callers that do not pass a backend (inference / eval scripts)"),
      C("=return torch.cuda.current_device()", "torch_cuda_api", "replace", True,
        "return torch.npu.current_device()", "raises without CUDA"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
        "raises without CUDA"),
      C("_libcudart = ctypes.CDLL('libcudart.so')", "torch_cuda_api", "removal", True, None,
        "libcudart.so does not exist on Ascend hosts: OSError during init_dist"),
      C("pValue = ctypes.cast((ctypes.c_int * 1)(), ctypes.POINTER(ctypes.c_int))", "torch_cuda_api", "removal", False,
        None, "plain ctypes buffer, harmless but dead once the libcudart calls go"),
      C("_libcudart.cudaDeviceSetLimit(ctypes.c_int(0x05), ctypes.c_int(128))", "torch_cuda_api", "removal", True,
        None, "CUDA runtime call (L2 fetch granularity), no Ascend equivalent"),
      C("_libcudart.cudaDeviceGetLimit(pValue, ctypes.c_int(0x05))", "torch_cuda_api", "removal", True, None,
        "CUDA runtime call"),
      C("return torch.cuda.current_device() == 0", "torch_cuda_api", "replace", True,
        "return torch.npu.current_device() == 0", "raises without CUDA"),
  ])

E("nted_trainer_util", "util/trainer.py", "explicit_replacement",
  "NTED / imaginaire util/trainer.py (seeding, cudnn init, optimizer factory, DDP wrap)", [
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
        "lazy no-op without CUDA; torch.manual_seed above should already seed the npu generator (unconfirmed)"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "as above"),
      C("torch.backends.cudnn.deterministic = deterministic", "torch_cuda_api", "replace", False,
        "torch.use_deterministic_algorithms(deterministic)",
        "cudnn flag has no effect on NPU; use the framework switch (plus HCCL_DETERMINISTIC) if determinism matters"),
      C("torch.backends.cudnn.benchmark = benchmark", "torch_cuda_api", "removal", False, None, NO_CUDNN),
      C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", False,
        "from torch_npu.optim import NpuFusedAdam as FusedAdam",
        "only for `type: fused_adam` (the shipped config uses adam); NVIDIA apex FusedAdam needs its CUDA kernels"),
  ])

E("nted_base_trainer", "trainers/base.py", "explicit_replacement",
  "NTED / imaginaire trainers/base.py (AMP GradScaler, to_cuda, synchronized timing)", [
      C("from torch.cuda.amp import GradScaler, autocast", "amp", "replace", True,
        "from torch_npu.npu.amp import GradScaler, autocast",
        "cuda GradScaler/autocast disable themselves without CUDA: amp_config.enabled silently trains in fp32 without loss scaling"),
      C("data = data.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "data = data.npu(non_blocking=True)", "Tensor.cuda() raises without CUDA (every batch goes through to_cuda)"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA; _cuda_timestamp runs in end_of_iteration every step"),
      C("self.criteria[loss_name].to('cuda')", "device_type", "replace", True, "self.criteria[loss_name].to('npu')",
        "'cuda' device string fails without CUDA (the VGG perceptual loss holds weights)"),
      C("'mem/max_allocated_MB': torch.cuda.max_memory_allocated() / 2 ** 20},", "torch_cuda_api", "replace", False,
        "'mem/max_allocated_MB': torch.npu.max_memory_allocated() / 2 ** 20},",
        "returns 0 when CUDA was never initialised; tensorboard value only"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA; memory hygiene only"),
      C("cal_data = to_device(cal_data, 'cuda')", "device_type", "replace", True,
        "cal_data = to_device(cal_data, 'npu')", "'cuda' device string (model_average BN recalibration)"),
  ])

E("nted_fused_act", "third_part/op/fused_act.py", "device_branch_or_abstraction",
  "rosinality StyleGAN2 op/fused_act.py as vendored by NTED (JIT load() + cpu fallback branch)", [
      C("fused = load(", "custom_cuda_extension", "replace", True,
        "fused = None  # nvcc-only op; NPU tensors take the native PyTorch branch below",
        "load() JIT-compiles fused_bias_act_kernel.cu with nvcc at import time (✘ on Ascend)"),
      C('if input.device.type == "cpu":', "device_type", "replace", True,
        'if input.device.type in ("cpu", "npu"):',
        "NPU tensors would fall into the CUDA-kernel branch; the F.leaky_relu path is numerically equivalent"),
  ])

E("nted_config", "config/fashion_512.yaml", "explicit_replacement",
  "NTED config/fashion_512.yaml (imaginaire-style YAML)", [
      C("dist_backend: nccl", "dist_backend", "replace", True, "dist_backend: hccl",
        "read by train.py and passed to init_process_group"),
  ])

E("nted_train_sh", "scripts/train_fashion_512.sh", "explicit_replacement",
  "NTED launcher script (torch.distributed.launch, NCCL env)", [
      C("# usage: bash scripts/train_fashion_512.sh <experiment_name> [nproc]", "import_torch_npu",
        "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "source CANN before `set -u`: newer set_env.sh references unset variables and aborts under nounset"),
      C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
        "CANN ignores CUDA_VISIBLE_DEVICES; the device subset would silently not apply"),
      C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None,
        "NCCL-only logging knob; HCCL logs through CANN plog (ASCEND_GLOBAL_LOG_LEVEL)"),
      C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None,
        "no HCCL counterpart; HCCL chooses HCCS/RoCE itself"),
  ])

E("nted_requirements", "requirements.txt", "explicit_replacement",
  "NTED-style requirements.txt (cu111 wheel index, ninja for the JIT ops)", [
      C("--extra-index-url https://download.pytorch.org/whl/cu111", "import_torch_npu", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheel index; x86 Ascend hosts take CPU torch from the cpu index (aarch64: plain PyPI)"),
      C("torch==1.9.0+cu111", "import_torch_npu", "replace", True, "torch==2.1.0",
        "CUDA wheel; torch must equal the torch_npu wheel version (no torch_npu exists for 1.9)"),
      C("torchvision==0.10.0+cu111", "import_torch_npu", "replace", True, "torchvision==0.16.0",
        "CUDA wheel tied to torch 1.9"),
      C("numpy==1.21.6", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
        "the torch_npu pin, next to the torch pins"),
  ])

# ------------------------------------------------------------------ CoCosNet
E("cocosnet_train", "train.py", "explicit_replacement",
  "CoCosNet train.py (SPADE-style loop, optional synchronized step timing)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
        "profiling helper only: False on NPU, so --profile_steps silently times kernel launches instead of execution"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", False, "torch.npu.synchronize()",
        "unreachable on NPU behind the is_available guard"),
      C("torch.cuda.max_memory_allocated() / 1024 ** 2))", "torch_cuda_api", "replace", False,
        "torch.npu.max_memory_allocated() / 1024 ** 2))", "returns 0 without CUDA init; log only"),
  ])

E("cocosnet_trainer", "trainers/pix2pix_trainer.py", "explicit_replacement",
  "CoCosNet trainers/pix2pix_trainer.py (DataParallelWithCallback, EMA, torch.cuda.amp)", [
      C("self.pix2pix_model = DataParallelWithCallback(self.pix2pix_model,", "distributed_framework", "replace", True,
        "self.pix2pix_model = self.pix2pix_model.to('npu:{}'.format(opt.gpu_ids[0]))  # no nn.DataParallel on NPU",
        "DataParallelWithCallback subclasses nn.DataParallel (✘ on Ascend)"),
      C("self.pix2pix_model_on_one_gpu = self.pix2pix_model.module", "distributed_framework", "replace", True,
        "self.pix2pix_model_on_one_gpu = self.pix2pix_model", "no wrapper, no .module"),
      C("self.pix2pix_model.to(opt.gpu_ids[0])", "device_type", "replace", True,
        "self.pix2pix_model.to('npu:{}'.format(opt.gpu_ids[0]))", "a bare int device in .to() means cuda:<n>"),
      C("checkpoint = torch.load(os.path.join(opt.checkpoints_dir, opt.name, 'optimizer.pth'))", "tensor_to_device",
        "replace", True,
        "checkpoint = torch.load(os.path.join(opt.checkpoints_dir, opt.name, 'optimizer.pth'), map_location='cpu')",
        "Adam state saved on the GPU holds cuda storages; optimizer.load_state_dict moves it to the parameter device afterwards"),
      C("self.scaler = torch.cuda.amp.GradScaler(enabled=opt.amp)", "amp", "replace", True,
        "self.scaler = torch.npu.amp.GradScaler(enabled=opt.amp)",
        "with --amp the cuda GradScaler disables itself without CUDA (no loss scaling)"),
      C("return torch.cuda.amp.autocast(enabled=self.opt.amp)", "amp", "replace", True,
        "return torch.npu.amp.autocast(enabled=self.opt.amp)",
        "with --amp, cuda autocast silently disables itself: fp32 run"),
  ])

E("cocosnet_sync_bn", "models/networks/sync_batchnorm/batchnorm.py", "explicit_replacement",
  "Synchronized-BatchNorm-PyTorch batchnorm.py as vendored by CoCosNet / SPADE", [
      C("sum_, ssum = ReduceAddCoalesced.apply(target_gpus[0], 2, *to_reduce)", "distributed_framework", "replace",
        False, "sum_, ssum = _all_reduce_sum(to_reduce)  # dist.all_reduce (HCCL) instead of torch.cuda.comm", DP_DEAD),
      C("broadcasted = Broadcast.apply(target_gpus, mean, inv_std)", "distributed_framework", "replace", False,
        "broadcasted = (mean, inv_std)", DP_DEAD),
      C("mod = DataParallelWithCallback(mod, device_ids=module.device_ids)", "distributed_framework", "replace", False,
        "mod = torch.nn.SyncBatchNorm.convert_sync_batchnorm(mod)",
        "only when handed an nn.DataParallel model, which the NPU port no longer builds"),
  ])

E("cocosnet_options", "options/base_options.py", "explicit_replacement",
  "CoCosNet / SPADE options/base_options.py (--gpu_ids parsing, set_device)", [
      C("torch.cuda.set_device(opt.gpu_ids[0])", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(opt.gpu_ids[0])", "raises without CUDA"),
      C("torch.backends.cudnn.benchmark = True", "torch_cuda_api", "removal", False, None, NO_CUDNN),
  ])

# ------------------------------------------------------------------ container
E("pise_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "PISE / GFLA training Dockerfile (nvidia/cuda devel base, cu113 wheels, CUDA op builds)", [
      C("FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04", "import_torch_npu", "replace", True,
        "FROM ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
        "CUDA base image; Ascend needs a CANN toolkit image (driver mounted from the host by Ascend Docker Runtime)"),
      C('ENV TORCH_CUDA_ARCH_LIST="6.1 7.0 7.5 8.0 8.6+PTX"', "env_var", "removal", False, None,
        "nvcc arch list; nothing is built with nvcc any more"),
      C('ENV FORCE_CUDA="1"', "env_var", "removal", False, None, "forces CUDA builds of extensions; no effect without nvcc"),
      C("ENV CUDA_HOME=/usr/local/cuda", "env_var", "removal", False, None,
        "points at a CUDA toolkit that is not in the image"),
      C("RUN pip install --no-cache-dir torch==1.10.1+cu113 torchvision==0.11.2+cu113 -f https://download.pytorch.org/whl/cu113/torch_stable.html",
        "import_torch_npu", "replace", True,
        "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12",
        "CUDA wheels; torch must match the torch_npu wheel"),
      C("RUN cd /workspace/util/resample2d_package && python setup.py install", "custom_cuda_extension", "replace", True,
        "RUN cd /workspace/util/block_extractor && python setup.py install  # NpuExtension; resample2d dropped, local_attn_reshape is PyTorch",
        "CUDAExtension builds fail without nvcc (the RUN continues over two more lines)"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
        "NVIDIA container runtime knob; Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES (device exposure can also come from run flags - unconfirmed which the deployment uses)"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "NVIDIA container runtime knob"),
  ])
