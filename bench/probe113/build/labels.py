"""Labels for probe113 (semantic segmentation research code, CUDA -> Ascend NPU).

Format: see bench/probe_build.py. One C(...) per upstream line a careful porter would edit.
Target of the port: torch 2.1.0 + torch_npu 2.1.0.postX (CANN 8.x), because most of this code is
torch 1.x-era (apex, mmcv 1.x, torch.distributed.launch) and 2.1 is the oldest still-maintained pairing.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# ---------------------------------------------------------------------------------------------
# hszhao/semseg (PSPNet / PSANet)
# ---------------------------------------------------------------------------------------------
E("semseg_train", "tool/train.py", "explicit_replacement",
  "hszhao/semseg tool/train.py (mp.spawn workers, apex SyncBN/amp/DDP, DataParallel fallback)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; torch 2.1 needs the explicit import to register the npu device"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = ', "env_var", "replace", True,
      "os.environ[\"ASCEND_RT_VISIBLE_DEVICES\"] = ','.join(str(x) for x in args.train_gpu)",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; train_gpu selection would silently be lost"),
    C("torch.cuda.manual_seed(args.manual_seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(args.manual_seed)",
      "silent no-op without CUDA; torch.manual_seed two lines up already seeds the npu generator in torch>=2.1 (unconfirmed in knowledge)"),
    C("torch.cuda.manual_seed_all(args.manual_seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.manual_seed)", "same as manual_seed (unconfirmed)"),
    C("BatchNorm = apex.parallel.SyncBatchNorm", "distributed_framework", "replace", False,
      "BatchNorm = nn.SyncBatchNorm",
      "apex SyncBN falls back to its python path without the syncbn CUDA ext; nn.SyncBatchNorm is supported on NPU (unconfirmed that the apex fallback fails)"),
    C("from lib.sync_bn.modules import BatchNorm2d", "custom_cuda_extension", "replace", False,
      "from torch.nn import BatchNorm2d  # lib.sync_bn is an nvcc-built extension",
      "semseg's lib/sync_bn JIT-compiles .cu sources on import; only reached with sync_bn and multiprocessing_distributed: False "
      "(the shipped config uses multiprocessing), so config-dependent"),
    C("torch.cuda.set_device(gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu)",
      "torch.cuda.set_device fails without CUDA"),
    C("apex.amp.initialize(model.cuda()", "tensor_to_device", "replace", True,
      "model, optimizer = apex.amp.initialize(model.npu(), optimizer, opt_level=args.opt_level, keep_batchnorm_fp32=args.keep_batchnorm_fp32, loss_scale=args.loss_scale, combine_grad=True)",
      ".cuda() fails; amp itself works with Ascend's apex patch (combine_grad is a perf option)"),
    C("model = apex.parallel.DistributedDataParallel(model)", "distributed_framework", "replace", False,
      "model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[gpu])",
      "apex DDP relies on CUDA streams/flatten helpers; Ascend apex ships its own DDP patch, so failure unconfirmed"),
    C("DistributedDataParallel(model.cuda(), device_ids=[gpu])", "tensor_to_device", "replace", True,
      "model = torch.nn.parallel.DistributedDataParallel(model.npu(), device_ids=[gpu])", ".cuda() fails"),
    C("model = torch.nn.DataParallel(model.cuda())", "distributed_framework", "replace", True,
      "model = model.npu()",
      "nn.DataParallel is unsupported on NPU; single-card path (or launch with multiprocessing_distributed)"),
    C("checkpoint = torch.load(args.weight)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(args.weight, map_location='cpu')",
      "released semseg weights were serialized from CUDA tensors; loading them without map_location raises on a CUDA-less host"),
    C("map_location=lambda storage, loc: storage.cuda()", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(args.resume, map_location=lambda storage, loc: storage.npu())",
      "storage.cuda() fails"),
    C("input = input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "input = input.npu(non_blocking=True)", ".cuda() fails"),
    C("target = target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "target = target.npu(non_blocking=True)", ".cuda() fails"),
    C("torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "logger.info('Peak NPU memory: {:.1f} MB'.format(torch.npu.max_memory_allocated() / 1024. / 1024.))",
      "returns 0 without CUDA initialised; log-only"),
    C("input, target = input.cuda(non_blocking=True), target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "input, target = input.npu(non_blocking=True), target.npu(non_blocking=True)", ".cuda() fails"),
])

E("semseg_test", "tool/test.py", "explicit_replacement",
  "hszhao/semseg tool/test.py (sliding-window multi-scale inference behind nn.DataParallel)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; registers the npu device on torch 2.1"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = ', "env_var", "replace", True,
      "os.environ[\"ASCEND_RT_VISIBLE_DEVICES\"] = ','.join(str(x) for x in args.test_gpu)",
      "ignored by the Ascend runtime; test_gpu selection silently lost"),
    C("model = torch.nn.DataParallel(model).cuda()", "distributed_framework", "replace", True,
      "model = model.npu()", "nn.DataParallel is unsupported on NPU (Ascend API list); test runs on one card"),
    C("checkpoint = torch.load(args.model_path)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(args.model_path, map_location='cpu')",
      "released/trained-on-GPU checkpoints hold CUDA storages; deserializing them raises without CUDA"),
    C("model.load_state_dict(checkpoint['state_dict'], strict=False)", "distributed_framework", "replace", True,
      "model.load_state_dict({k.replace('module.', '', 1): v for k, v in checkpoint['state_dict'].items()}, strict=False)",
      "follows from dropping DataParallel: keys carry 'module.' and strict=False would silently load nothing"),
    C("input = input.unsqueeze(0).cuda()", "tensor_to_device", "replace", True,
      "input = input.unsqueeze(0).npu()", ".cuda() fails"),
])

E("semseg_config", "config/cityscapes/cityscapes_pspnet101.yaml", "explicit_replacement",
  "hszhao/semseg config/*.yaml (train_gpu list, dist_backend, apex switches)", [
    C("dist_backend: 'nccl'", "dist_backend", "replace", True, "  dist_backend: 'hccl'",
      "passed verbatim to init_process_group; NCCL is not available on NPU"),
])

E("semseg_pspnet", "model/pspnet.py", "explicit_replacement",
  "hszhao/semseg model/pspnet.py (PPM head; __main__ smoke test)", [
    C("=import os", "import_torch_npu", "npu_only_addition", True, "    import torch_npu",
      "the __main__ smoke test is run directly and needs the npu device registered"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = \'0, 1\'', "env_var", "replace", False,
      "    os.environ[\"ASCEND_RT_VISIBLE_DEVICES\"] = '0,1'",
      "ignored on NPU; the smoke test only uses the default device, so nothing breaks"),
    C("input = torch.rand(4, 3, 473, 473).cuda()", "tensor_to_device", "replace", True,
      "    input = torch.rand(4, 3, 473, 473).npu()", ".cuda() fails"),
    C("use_ppm=True, pretrained=True).cuda()", "tensor_to_device", "replace", True,
      "    model = PSPNet(layers=50, bins=(1, 2, 3, 6), dropout=0.1, classes=21, zoom_factor=1, use_ppm=True, pretrained=True).npu()",
      ".cuda() fails"),
])

E("semseg_util", "util/util.py", "explicit_replacement",
  "hszhao/semseg util/util.py (metrics, intersectionAndUnionGPU, misc logging helpers)", [
    C("return area_intersection.cuda(), area_union.cuda(), area_target.cuda()", "tensor_to_device", "replace", True,
      "return area_intersection.to(output.device), area_union.to(output.device), area_target.to(output.device)",
      ".cuda() fails; results are all_reduced on the compute device afterwards"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if not torch.npu.is_available():", "log helper reports 'cpu' on NPU hosts; cosmetic"),
    C("allocated = torch.cuda.memory_allocated(device)", "torch_cuda_api", "replace", False,
      "allocated = torch.npu.memory_allocated(device) / 1024. ** 3", "log-only"),
    C("reserved = torch.cuda.memory_reserved(device)", "torch_cuda_api", "replace", False,
      "reserved = torch.npu.memory_reserved(device) / 1024. ** 3", "log-only"),
    C("'num_gpus': torch.cuda.device_count(),", "torch_cuda_api", "replace", False,
      "'num_npus': torch.npu.device_count(),", "env report shows 0 devices; log-only"),
    C("info['gpu_name'] = torch.cuda.get_device_name(0)", "torch_cuda_api", "replace", False,
      "info['npu_name'] = torch.npu.get_device_name(0)", "unreachable on NPU until the count above is fixed; log-only"),
])

E("semseg_trainsh", "tool/train.sh", "explicit_replacement",
  "hszhao/semseg tool/train.sh (experiment launcher)", [
    C("export PYTHONPATH=./", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "without the CANN environment import torch_npu fails (libhccl.so / ASCEND_OPP_PATH)"),
    C("nvidia-smi > ${exp_dir}/gpu_info-$now.txt", "torch_cuda_api", "replace", False,
      "npu-smi info > ${exp_dir}/npu_info-$now.txt",
      "nvidia-smi does not exist on Ascend hosts; the script carries on (no set -e), only the info file is empty"),
])

# ---------------------------------------------------------------------------------------------
# zhanghang1989/PyTorch-Encoding, jfzhang95/pytorch-deeplab-xception, vacancy/Synchronized-BatchNorm
# ---------------------------------------------------------------------------------------------
E("encoding_parallel", "encoding/parallel.py", "explicit_replacement",
  "zhanghang1989/PyTorch-Encoding encoding/parallel.py (DataParallelModel / DataParallelCriterion, comm-based allreduce)", [
    C("results = comm.reduce_add_coalesced(inputs, ctx.target_gpus[0])", "unsupported_op_workaround", "replace", True,
      "results = [dist.all_reduce(t) or t for t in inputs[0]]",
      "torch.cuda.comm reductions are CUDA-only (comm.scatter/gather are listed unsupported); one process per NPU -> all_reduce"),
    C("outputs = comm.broadcast_coalesced(results, ctx.target_gpus)", "unsupported_op_workaround", "replace", True,
      "outputs = [results]", "no cross-device broadcast inside one process on NPU"),
    C("results = comm.reduce_add_coalesced(inputs, destination=ctx.target_gpus[0])", "unsupported_op_workaround", "replace", True,
      "results = [dist.all_reduce(t) or t for t in inputs[0]]", "same as forward"),
    C("outputs = comm.broadcast_coalesced(results, devices=ctx.target_gpus)", "unsupported_op_workaround", "replace", True,
      "outputs = [results]", "same as forward"),
    C("return comm.reduce_add(inputs)", "unsupported_op_workaround", "replace", True,
      "return sum(inputs)", "torch.cuda.comm.reduce_add is CUDA-only"),
    C("return Broadcast.apply(ctx.target_gpus, gradOutput)", "unsupported_op_workaround", "replace", True,
      "return tuple(gradOutput for _ in ctx.target_gpus)",
      "torch.nn.parallel Broadcast uses torch.cuda.comm.broadcast_coalesced"),
    C("class DataParallelModel(DataParallel):", "distributed_framework", "replace", True,
      "class DataParallelModel(nn.Module):  # pass-through on NPU; multi-card via DDP",
      "nn.DataParallel is unsupported on NPU"),
    C("class DataParallelCriterion(DataParallel):", "distributed_framework", "replace", True,
      "class DataParallelCriterion(nn.Module):  # pass-through on NPU", "nn.DataParallel is unsupported on NPU"),
    C("with torch.cuda.device(device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(device):", "torch.cuda.device fails without CUDA"),
])

E("encoding_syncbn", "encoding/functions/syncbn.py", "kernel_rewrite",
  "zhanghang1989/PyTorch-Encoding encoding/functions/syncbn.py (SyncBN autograd functions over the enclib_gpu CUDA extension)", [
    C("if input.is_cuda:", "device_type", "replace", True, "if input.is_cuda or input.is_npu:",
      "NPU tensors are not is_cuda, so the function raises NotImplementedError"),
    C("ex, ex2 = gpu.expectation_forward(input)", "custom_cuda_extension", "replace", True,
      "ex, ex2 = input.mean(dim=(0, 2, 3)), input.pow(2).mean(dim=(0, 2, 3))",
      "enclib_gpu is nvcc-built; express E[x], E[x^2] with torch ops"),
    C("if grad_ex.is_cuda:", "device_type", "replace", True, "if grad_ex.is_cuda or grad_ex.is_npu:",
      "same dispatch problem in backward"),
    C("grad_input = gpu.expectation_backward(input, grad_ex, grad_ex2)", "custom_cuda_extension", "replace", True,
      "grad_input = (grad_ex.view(1, -1, 1, 1) + 2 * grad_ex2.view(1, -1, 1, 1) * input) / (input.numel() / input.size(1))",
      "CUDA extension call"),
    C("if not x.is_cuda:", "device_type", "replace", True, "if not (x.is_cuda or x.is_npu):",
      "training path rejects NPU tensors"),
    C("_ex, _exs = gpu.expectation_forward(x)", "custom_cuda_extension", "replace", True,
      "_ex, _exs = x.mean(dim=(0, 2, 3)), x.pow(2).mean(dim=(0, 2, 3))", "CUDA extension call"),
    C("_ex = comm.gather(_ex).mean(0)", "unsupported_op_workaround", "replace", True,
      "_ex = torch.cat(_ex).mean(0)", "torch.cuda.comm.gather is unsupported on NPU (Ascend API list)"),
    C("_exs = comm.gather(_exs).mean(0)", "unsupported_op_workaround", "replace", True,
      "_exs = torch.cat(_exs).mean(0)", "torch.cuda.comm.gather is unsupported on NPU"),
    C("tensors = comm.broadcast_coalesced((_ex, _exs)", "unsupported_op_workaround", "replace", True,
      "tensors = [(_ex, _exs)] * (len(ctx.worker_ids) + 1)", "torch.cuda.comm broadcast is CUDA-only"),
    C("if x.is_cuda:", "device_type", "replace", True, "if x.is_cuda or x.is_npu:",
      "otherwise NPU tensors are handed to the CPU extension"),
    C("y = gpu.batchnorm_forward(x, _ex, _exs, gamma, beta, ctx.eps)", "custom_cuda_extension", "replace", True,
      "y = (x - _ex.view(1, -1, 1, 1)) / (_exs - _ex ** 2 + ctx.eps).sqrt().view(1, -1, 1, 1) * gamma.view(1, -1, 1, 1) + beta.view(1, -1, 1, 1)",
      "CUDA extension call"),
    C("if dz.is_cuda:", "device_type", "replace", True, "if dz.is_cuda or dz.is_npu:", "backward dispatch"),
    C("gpu.batchnorm_backward(dz, x, _ex, _exs, gamma, beta, ctx.eps)", "custom_cuda_extension", "replace", True,
      "_batchnorm_backward_torch(dz, x, _ex, _exs, gamma, beta, ctx.eps)",
      "CUDA extension call; needs a torch-op helper"),
    C("_dex = comm.gather(_dex).mean(0)", "unsupported_op_workaround", "replace", True,
      "_dex = torch.cat(_dex).mean(0)", "torch.cuda.comm.gather is unsupported on NPU"),
    C("_dexs = comm.gather(_dexs).mean(0)", "unsupported_op_workaround", "replace", True,
      "_dexs = torch.cat(_dexs).mean(0)", "torch.cuda.comm.gather is unsupported on NPU"),
    C("tensors = comm.broadcast_coalesced((_dex, _dexs)", "unsupported_op_workaround", "replace", True,
      "tensors = [(_dex, _dexs)] * (len(ctx.worker_ids) + 1)", "torch.cuda.comm broadcast is CUDA-only"),
    C("dx_ = gpu.expectation_backward(x, _dex, _dexs)", "custom_cuda_extension", "replace", True,
      "dx_ = (_dex.view(1, -1, 1, 1) + 2 * _dexs.view(1, -1, 1, 1) * x) / (x.numel() / x.size(1))",
      "CUDA extension call"),
])

E("encoding_seg_train", "experiments/segmentation/train.py", "explicit_replacement",
  "zhanghang1989/PyTorch-Encoding experiments/segmentation/train.py (EncNet/DeepLab trainer on DataParallelModel)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("args.cuda = not args.no_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "args.cuda = not args.no_cuda and torch.npu.is_available()",
      "False on NPU hosts -> the whole run silently falls back to CPU"),
    C("se_loss=args.se_loss, norm_layer=SyncBatchNorm,", "custom_cuda_extension", "replace", True,
      "se_loss=args.se_loss, norm_layer=torch.nn.BatchNorm2d,",
      "encoding.nn.SyncBatchNorm needs the enclib_gpu CUDA extension and DataParallel replicas"),
    C("self.model = DataParallelModel(self.model).cuda()", "distributed_framework", "replace", True,
      "self.model = self.model.npu()", "DataParallel-based wrapper; unsupported on NPU"),
    C("self.criterion = DataParallelCriterion(self.criterion).cuda()", "distributed_framework", "replace", True,
      "self.criterion = self.criterion.npu()", "DataParallel-based wrapper; unsupported on NPU"),
    C("checkpoint = torch.load(args.resume)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(args.resume, map_location='cpu')",
      "--ft fine-tunes from released (CUDA-saved) checkpoints, which fail to deserialize without CUDA"),
    C("self.model.module.load_state_dict(checkpoint['state_dict'])", "distributed_framework", "replace", True,
      "self.model.load_state_dict(checkpoint['state_dict'])", "no .module once the DataParallel wrapper is gone"),
    C("self.optimizer.zero_grad()", "tensor_to_device", "npu_only_addition", True,
      "image, target = image.npu(non_blocking=True), target.npu(non_blocking=True)",
      "inputs were scattered to the GPUs by DataParallelModel; without it they must be moved explicitly"),
    C("='state_dict': self.model.module.state_dict(),", "distributed_framework", "replace", True,
      "'state_dict': self.model.state_dict(),", "no .module without the wrapper"),
    C("def eval_batch(model, image, target):", "tensor_to_device", "npu_only_addition", True,
      "image = image.npu()", "input no longer scattered by DataParallelModel"),
    C("outputs = gather(outputs, 0, dim=0)", "unsupported_op_workaround", "removal", True, None,
      "Gather to device 0 goes through torch.cuda.comm.gather; a plain model already returns a tuple"),
    C("target = target.cuda()", "tensor_to_device", "replace", True, "target = target.npu()", ".cuda() fails"),
    C("'state_dict': self.model.module.state_dict(),  # DataParallelModel wrapper", "distributed_framework", "replace", True,
      "'state_dict': self.model.state_dict(),", "no .module without the wrapper"),
])

E("deeplab_train", "train.py", "explicit_replacement",
  "jfzhang95/pytorch-deeplab-xception train.py (Trainer with DataParallel + patch_replication_callback)", [
    C("from modeling.deeplab import *", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; torch itself only arrives through this star import"),
    C("self.model = torch.nn.DataParallel(self.model, device_ids=self.args.gpu_ids)", "distributed_framework", "replace", True,
      "torch.npu.set_device(self.args.gpu_ids[0])", "nn.DataParallel is unsupported on NPU; single card"),
    C("patch_replication_callback(self.model)", "distributed_framework", "removal", True, None,
      "asserts the model is a DataParallel; meaningless without replicas"),
    C("self.model = self.model.cuda()", "tensor_to_device", "replace", True, "self.model = self.model.npu()", ".cuda() fails"),
    C("checkpoint = torch.load(args.resume)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(args.resume, map_location='cpu')",
      "--ft starts from released CUDA-saved DeepLab checkpoints"),
    C("self.model.module.load_state_dict(checkpoint['state_dict'])", "distributed_framework", "replace", True,
      "self.model.load_state_dict(checkpoint['state_dict'])", "no .module without DataParallel"),
    C("'state_dict': self.model.module.state_dict(),", "distributed_framework", "replace", True,
      "'state_dict': self.model.state_dict(),", "no .module without DataParallel"),
    C("image, target = image.cuda(), target.cuda()", "tensor_to_device", "replace", True,
      "image, target = image.npu(), target.npu()", ".cuda() fails"),
    C("image, target = image.cuda(non_blocking=True), target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "image, target = image.npu(non_blocking=True), target.npu(non_blocking=True)", ".cuda() fails"),
    C("args.cuda = not args.no_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "args.cuda = not args.no_cuda and torch.npu.is_available()",
      "False on NPU hosts -> silently trains on CPU"),
])

E("deeplab_loss", "utils/loss.py", "explicit_replacement",
  "jfzhang95/pytorch-deeplab-xception utils/loss.py (SegmentationLosses with a cuda flag)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "only for the __main__ self-test, which is run directly"),
    C("criterion = criterion.cuda()", "tensor_to_device", "replace", True, "criterion = criterion.npu()",
      "moves the class-weight buffer; .cuda() fails"),
    C("=criterion.cuda()", "tensor_to_device", "replace", True, "criterion.npu()", ".cuda() fails"),
    C("a = torch.rand(1, 3, 7, 7).cuda()", "tensor_to_device", "replace", True, "a = torch.rand(1, 3, 7, 7).npu()", ".cuda() fails"),
    C("b = torch.rand(1, 7, 7).cuda()", "tensor_to_device", "replace", True, "b = torch.rand(1, 7, 7).npu()", ".cuda() fails"),
])

E("deeplab_sync_batchnorm", "modeling/sync_batchnorm/batchnorm.py", "device_branch_or_abstraction",
  "vacancy/Synchronized-BatchNorm-PyTorch batchnorm.py as vendored in pytorch-deeplab-xception (no change needed)", [
])

# ---------------------------------------------------------------------------------------------
# mapillary/inplace_abn
# ---------------------------------------------------------------------------------------------
E("iabn_functions", "modules/functions.py", "kernel_rewrite",
  "mapillary/inplace_abn (v0.x) modules/functions.py (JIT-loaded CUDA backend, InPlaceABN / InPlaceABNSync)", [
    C('_backend = load(name="inplace_abn",', "custom_cuda_extension", "replace", True,
      "_backend = _TorchABNBackend()  # torch-op implementation, no nvcc on NPU",
      "load() compiles .cu sources with nvcc at import time; fails on an NPU host"),
    C("_backend.leaky_relu_forward(x, ctx.slope)", "custom_cuda_extension", "replace", True,
      "x.copy_(torch.nn.functional.leaky_relu(x, ctx.slope))", "CUDA extension call site"),
    C("_backend.elu_forward(x)", "custom_cuda_extension", "replace", True,
      "x.copy_(torch.nn.functional.elu(x))", "CUDA extension call site"),
    C("_backend.leaky_relu_backward(x, dx, ctx.slope)", "custom_cuda_extension", "replace", True,
      "dx.mul_(torch.where(x > 0, torch.ones_like(x), torch.full_like(x, ctx.slope))); x.copy_(torch.where(x > 0, x, x / ctx.slope))",
      "CUDA extension call site (undoes the in-place activation)"),
    C("_backend.elu_backward(x, dx)", "custom_cuda_extension", "replace", True,
      "dx.mul_(torch.where(x > 0, torch.ones_like(x), x + 1)); x.copy_(torch.where(x > 0, x, torch.log1p(x)))",
      "CUDA extension call site"),
    C("mean, var = _backend.mean_var(x)", "custom_cuda_extension", "replace", True,
      "var, mean = torch.var_mean(x.transpose(0, 1).reshape(x.size(1), -1), dim=1, unbiased=False)",
      "CUDA extension call site"),
    C("_backend.forward(x, mean, var, weight, bias, ctx.affine, ctx.eps)", "custom_cuda_extension", "replace", True,
      "x.copy_(torch.nn.functional.batch_norm(x, mean, var, weight if ctx.affine else None, bias if ctx.affine else None, False, 0.0, ctx.eps))",
      "CUDA extension call site"),
    C("edz, eydz = _backend.edz_eydz(z, dz, weight, bias, ctx.affine, ctx.eps)", "custom_cuda_extension", "replace", True,
      "edz, eydz = _edz_eydz_torch(z, dz, weight, bias, ctx.affine, ctx.eps)", "CUDA extension call site"),
    C("dx = _backend.backward(z, dz, var, weight, bias, edz, eydz, ctx.affine, ctx.eps)", "custom_cuda_extension", "replace", True,
      "dx = _abn_backward_torch(z, dz, var, weight, bias, edz, eydz, ctx.affine, ctx.eps)", "CUDA extension call site"),
    C("local_mean, local_var = _backend.mean_var(x)", "custom_cuda_extension", "replace", True,
      "local_var, local_mean = torch.var_mean(x.transpose(0, 1).reshape(x.size(1), -1), dim=1, unbiased=False)",
      "CUDA extension call site"),
    C("_backend.forward(x, mean_all, var_all, weight, bias, ctx.affine, ctx.eps)", "custom_cuda_extension", "replace", True,
      "x.copy_(torch.nn.functional.batch_norm(x, mean_all, var_all, weight if ctx.affine else None, bias if ctx.affine else None, False, 0.0, ctx.eps))",
      "CUDA extension call site"),
    C("edz_local, eydz_local = _backend.edz_eydz(z, dz, weight, bias, ctx.affine, ctx.eps)", "custom_cuda_extension", "replace", True,
      "edz_local, eydz_local = _edz_eydz_torch(z, dz, weight, bias, ctx.affine, ctx.eps)", "CUDA extension call site"),
    C("dx = _backend.backward(z, dz, var_all, weight, bias, edz, eydz, ctx.affine, ctx.eps)", "custom_cuda_extension", "replace", True,
      "dx = _abn_backward_torch(z, dz, var_all, weight, bias, edz, eydz, ctx.affine, ctx.eps)", "CUDA extension call site"),
])

E("iabn_setup", "setup.py", "kernel_rewrite",
  "mapillary/inplace_abn setup.py (CUDAExtension with CPU-only fallback)", [
    C('if (torch.cuda.is_available() and CUDA_HOME is not None) or os.getenv("FORCE_CUDA", "0") == "1":',
      "custom_cuda_extension", "add_branch", False,
      "elif os.getenv(\"FORCE_NPU\", \"0\") == \"1\":  ext = NpuExtension(name=\"inplace_abn._backend\", sources=find_sources(\"src_npu\", with_cuda=False))",
      "on an NPU host this already falls back to the CPU-only build (installs fine); an NPU build would need Ascend C kernels + torch_npu NpuExtension"),
])

# ---------------------------------------------------------------------------------------------
# HRNet-Semantic-Segmentation / openseg.pytorch (OCRNet)
# ---------------------------------------------------------------------------------------------
E("hrnet_train", "tools/train.py", "explicit_replacement",
  "HRNet/HRNet-Semantic-Segmentation (pytorch-v1.1) tools/train.py (torch.distributed.launch, FullModel, DDP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("device = torch.device('cuda:{}'.format(args.local_rank))", "device_type", "replace", True,
      "device = torch.device('npu:{}'.format(args.local_rank))", "cuda device object; used for set_device and model.to"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)",
      "torch.cuda.set_device fails without CUDA"),
    C('backend="nccl", init_method="env://",', "dist_backend", "replace", True,
      'backend="hccl", init_method="env://",', "NCCL is not available on NPU; HCCL is"),
    C("checkpoint = torch.load(model_state_file, map_location={'cuda:0': 'cpu'})", "tensor_to_device", "replace", False,
      "checkpoint = torch.load(model_state_file, map_location='cpu')",
      "checkpoints written on NPU carry 'npu:0' storages, so the cuda:0->cpu map no longer applies and every rank "
      "materialises the checkpoint on card 0 (memory only; loads correctly)"),
    C("model = nn.DataParallel(model, device_ids=gpus).cuda()", "distributed_framework", "replace", True,
      "raise RuntimeError('nn.DataParallel is unsupported on NPU; launch with torch.distributed.launch (nproc_per_node>=1)')",
      "DataParallel unsupported; forcing the DDP path keeps the later model.module accesses valid"),
])

E("hrnet_function", "lib/core/function.py", "explicit_replacement",
  "HRNet/HRNet-Semantic-Segmentation lib/core/function.py (train / validate / testval loops)", [
    C("images = images.cuda()", "tensor_to_device", "replace", True, "images = images.npu()", ".cuda() fails"),
    C("labels = labels.long().cuda()", "tensor_to_device", "replace", True, "labels = labels.long().npu()", ".cuda() fails"),
    C("image = image.cuda()", "tensor_to_device", "replace", True, "image = image.npu()", ".cuda() fails"),
    C("label = label.long().cuda()", "tensor_to_device", "replace", True, "label = label.long().npu()", ".cuda() fails"),
    C("confusion_matrix = torch.from_numpy(confusion_matrix).cuda()", "tensor_to_device", "replace", True,
      "confusion_matrix = torch.from_numpy(confusion_matrix).long().npu()",
      ".cuda() fails; also the numpy matrix is float64 and HCCL reduce has no fp64 (Ascend list: bf16/fp16/fp32/int8/int32/int64/...); "
      "counts are integers, int64 keeps them exact where fp32 would not"),
    C("dummy = torch.randn(*size).cuda()", "tensor_to_device", "replace", True,
      "dummy = torch.randn(*size).npu()", ".cuda() fails"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "torch.cuda.synchronize initialises CUDA and fails"),
    C("torch.cuda.synchronize()  # make sure all kernels finished", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # make sure all kernels finished before stopping the clock", "same"),
    C("fps, 1000.0 / fps, torch.cuda.get_device_name(torch.cuda.current_device())))", "torch_cuda_api", "replace", True,
      "fps, 1000.0 / fps, torch.npu.get_device_name(torch.npu.current_device())))",
      "torch.cuda.current_device() raises without CUDA, so the log line crashes the benchmark"),
])

E("hrnet_utils", "lib/utils/utils.py", "explicit_replacement",
  "HRNet/HRNet-Semantic-Segmentation lib/utils/utils.py (FullModel, dist helpers, a CUDA-stream data prefetcher)", [
    C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "self.stream = torch.npu.Stream()",
      "CUDA stream creation fails without CUDA"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True, "with torch.npu.stream(self.stream):",
      "CUDA stream context"),
    C("self.next_images = self.next_images.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "self.next_images = self.next_images.npu(non_blocking=True)", ".cuda() fails"),
    C("self.next_labels = self.next_labels.long().cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "self.next_labels = self.next_labels.long().npu(non_blocking=True)", ".cuda() fails"),
    C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().wait_stream(self.stream)", "CUDA stream API"),
    C("images.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
      "images.record_stream(torch.npu.current_stream())", "CUDA stream API"),
    C("labels.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
      "labels.record_stream(torch.npu.current_stream())", "CUDA stream API"),
])

E("hrnet_ocr_model", "lib/models/modules/spatial_ocr_block.py", "explicit_replacement",
  "openseg-group/openseg.pytorch lib/models/modules/spatial_ocr_block.py + ModuleHelper (OCR head, bn_type switch)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the module's __main__ benchmark is run directly"),
    C("onehot = torch.zeros(N, x.size(1), x.size(2), num_classes + 1).cuda()", "tensor_to_device", "replace", True,
      "onehot = torch.zeros(N, x.size(1), x.size(2), num_classes + 1, device=gt.device)", ".cuda() fails"),
    C("gt_probs = label_to_onehot(gt_probs.squeeze(1).type(torch.cuda.LongTensor), probs.size(1))", "torch_cuda_api", "replace", True,
      "gt_probs = label_to_onehot(gt_probs.squeeze(1).long(), probs.size(1))",
      "casting to torch.cuda.LongTensor needs CUDA"),
    C("gt_label = label_to_onehot(gt_label.squeeze(1).type(torch.cuda.LongTensor), proxy.size(2)-1)", "torch_cuda_api", "replace", True,
      "gt_label = label_to_onehot(gt_label.squeeze(1).long(), proxy.size(2)-1)", "casting to torch.cuda.LongTensor needs CUDA"),
    C("os.environ[\"CUDA_VISIBLE_DEVICES\"] = '0'", "env_var", "replace", False,
      "    os.environ[\"ASCEND_RT_VISIBLE_DEVICES\"] = '0'", "ignored on NPU but device 0 is the default anyway"),
    C("ocp_gather_infer.cuda()", "tensor_to_device", "replace", True, "    ocp_gather_infer.npu()", ".cuda() fails"),
    C("bn_type='inplace_abn')", "custom_cuda_extension", "replace", True,
      "                                        bn_type='torchbn')",
      "the benchmark hard-wires InPlaceABNSync, whose kernels are CUDA/CPU only"),
    C("ocp_distr_infer.cuda()", "tensor_to_device", "replace", True, "    ocp_distr_infer.npu()", ".cuda() fails"),
    C("proxy_feats = ocp_gather_infer(feats.cuda(), probs.cuda())", "tensor_to_device", "replace", True,
      "            proxy_feats = ocp_gather_infer(feats.npu(), probs.npu())", ".cuda() fails"),
    C("outputs = ocp_distr_infer(feats.cuda(), proxy_feats)", "tensor_to_device", "replace", True,
      "            outputs = ocp_distr_infer(feats.npu(), proxy_feats)", ".cuda() fails"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "            torch.npu.synchronize()",
      "fails without CUDA"),
    C("avg_mem += torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "            avg_mem += torch.npu.max_memory_allocated()-feats.element_size() * feats.nelement()",
      "returns 0 without CUDA; benchmark printout only"),
])

E("hrnet_dist_sh", "scripts/train_cityscapes_ocr.sh", "explicit_replacement",
  "HRNet-Semantic-Segmentation / openseg style distributed launch script", [
    C("=set -x", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment needed before import torch_npu"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}",
      "ignored by the Ascend runtime: the chosen cards would not be the ones used"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "NCCL-only variable, silently ignored; log verbosity only"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
      "HCCL picks the host NIC itself; matters for multi-node root-info setup only"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "no HCCL counterpart; silently ignored"),
    C("CUDA_VISIBLE_DEVICES=0 $PYTHON tools/test.py \\", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0 $PYTHON tools/test.py \\",
      "ignored on NPU, but the test then runs on device 0 anyway"),
])

# ---------------------------------------------------------------------------------------------
# open-mmlab/mmsegmentation 0.x (SegFormer is built on it)
# ---------------------------------------------------------------------------------------------
E("mmseg_apis_train", "mmseg/apis/train.py", "explicit_replacement",
  "open-mmlab/mmsegmentation v0.2x mmseg/apis/train.py (seed helpers, MMDataParallel / MMDistributedDataParallel)", [
    C("def init_random_seed(seed=None, device='cuda'):", "device_type", "replace", True,
      "def init_random_seed(seed=None, device='npu'):",
      "in distributed runs the seed tensor is created on this device before the broadcast; 'cuda' fails"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "silent no-op without CUDA; torch.manual_seed just above covers the npu generator in torch>=2.1 (unconfirmed)"),
    C("model = MMDistributedDataParallel(", "distributed_framework", "replace", False,
      "model = NPUDistributedDataParallel(",
      "mmcv's MMDDP scatters inputs with CUDA device ids; mmcv>=1.7 ships an NPU variant (not in knowledge, unconfirmed)"),
    C("model.cuda(),", "tensor_to_device", "replace", True, "model.npu(),", ".cuda() fails"),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
      "device_ids=[torch.npu.current_device()],", "torch.cuda.current_device() raises without CUDA"),
    C("model = MMDataParallel(", "distributed_framework", "replace", True, "model = NPUDataParallel(",
      "MMDataParallel subclasses nn.DataParallel, which is unsupported on NPU"),
    C("model.cuda(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "tensor_to_device", "replace", True,
      "model.npu(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", ".cuda() fails"),
])

E("mmseg_tools_train", "tools/train.py", "explicit_replacement",
  "open-mmlab/mmsegmentation v0.2x tools/train.py (--gpu-ids, init_dist launcher)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("init_dist(args.launcher, **cfg.dist_params)", "distributed_framework", "replace", False,
      "init_dist(args.launcher, **cfg.dist_params)  # needs mmcv>=1.7 (npu set_device + hccl)",
      "mmcv<1.7 _init_dist_pytorch calls torch.cuda.set_device(rank % torch.cuda.device_count()); fixed by upgrading mmcv, not this line (unconfirmed)"),
])

E("mmseg_tools_test", "tools/test.py", "explicit_replacement",
  "open-mmlab/mmsegmentation v0.2x tools/test.py (single_gpu_test / multi_gpu_test)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("init_dist(args.launcher, **cfg.dist_params)", "distributed_framework", "replace", False,
      "init_dist(args.launcher, **cfg.dist_params)  # needs mmcv>=1.7 (npu set_device + hccl)",
      "same as tools/train.py (unconfirmed)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if not torch.npu.is_available():",
      "only guards a version assert for CPU runs; passes with a recent mmcv"),
    C("model = MMDataParallel(model, device_ids=cfg.gpu_ids)", "distributed_framework", "replace", True,
      "model = NPUDataParallel(model.npu(), device_ids=cfg.gpu_ids)",
      "nn.DataParallel-based; without CUDA it degrades to a CPU pass-through, so testing silently runs on the host"),
    C("model.cuda(),", "tensor_to_device", "replace", True, "model.npu(),", ".cuda() fails"),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
      "device_ids=[torch.npu.current_device()],", "raises without CUDA"),
    C("model = MMDistributedDataParallel(", "distributed_framework", "replace", False,
      "model = NPUDistributedDataParallel(", "see mmseg/apis/train.py (unconfirmed)"),
])

E("mmseg_runtime_cfg", "configs/_base_/default_runtime.py", "explicit_replacement",
  "open-mmlab/mmsegmentation 0.x configs/_base_/default_runtime.py (inherited by SegFormer configs)", [
    C("dist_params = dict(backend='nccl')", "dist_backend", "replace", True, "dist_params = dict(backend='hccl')",
      "forwarded to init_process_group by init_dist"),
])

# ---------------------------------------------------------------------------------------------
# Weakly supervised segmentation: jiwoon-ahn/irn and jiwoon-ahn/psa (AffinityNet)
# ---------------------------------------------------------------------------------------------
E("irn_make_cam", "step/make_cam.py", "explicit_replacement",
  "jiwoon-ahn/irn step/make_cam.py (dataset split over torch.cuda.device_count() spawned workers)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "spawned workers unpickle _work from this module, so the npu backend must be registered here"),
    C("with torch.no_grad(), cuda.device(process_id):", "torch_cuda_api", "replace", True,
      "with torch.no_grad(), torch.npu.device(process_id):", "torch.cuda.device fails without CUDA"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", ".cuda() fails"),
    C("outputs = [model(img[0].cuda(non_blocking=True))", "tensor_to_device", "replace", True,
      "outputs = [model(img[0].npu(non_blocking=True))", ".cuda() fails"),
    C("strided_cam /= F.adaptive_max_pool2d(strided_cam, (1, 1)) + 1e-5", "unsupported_op_workaround", "replace", False,
      "strided_cam /= torch.amax(strided_cam, dim=(-2, -1), keepdim=True) + 1e-5",
      "F.adaptive_max_pool2d is ✘ in Ascend's 2.7.1 API table and msFmkTransplt's list, although op-plugin registers the aten op; "
      "a global max via amax is the safe form (unconfirmed which source is right)"),
    C("highres_cam /= F.adaptive_max_pool2d(highres_cam, (1, 1)) + 1e-5", "unsupported_op_workaround", "replace", False,
      "highres_cam /= torch.amax(highres_cam, dim=(-2, -1), keepdim=True) + 1e-5", "same as above"),
    C("n_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "n_gpus = torch.npu.device_count()",
      "returns 0 on NPU: the dataset is split into 0 bins and spawn starts no workers, so no CAMs are written"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "silent no-op"),
])

E("irn_train_cam", "step/train_cam.py", "explicit_replacement",
  "jiwoon-ahn/irn step/train_cam.py (ResNet-50 CAM classifier under nn.DataParallel)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "run_sample.py imports the steps; registering the backend here keeps each step runnable"),
    C("=imgs = pack['img']", "tensor_to_device", "npu_only_addition", True,
      "imgs = imgs.npu(non_blocking=True)", "images were scattered by DataParallel; now moved explicitly"),
    C("labels = pack['label'].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "labels = pack['label'].npu(non_blocking=True)", ".cuda() fails"),
    C("model = torch.nn.DataParallel(model).cuda()", "distributed_framework", "replace", True,
      "model = model.npu()", "nn.DataParallel is unsupported on NPU"),
    C("=img = pack['img']", "tensor_to_device", "npu_only_addition", True,
      "img = img.npu(non_blocking=True)", "images were scattered by DataParallel; now moved explicitly"),
    C("label = pack['label'].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "label = pack['label'].npu(non_blocking=True)", ".cuda() fails"),
    C("torch.save(model.module.state_dict(), args.cam_weights_name + '.pth')", "distributed_framework", "replace", True,
      "torch.save(model.state_dict(), args.cam_weights_name + '.pth')", "no .module without DataParallel"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "silent no-op"),
])

E("irn_indexing", "misc/indexing.py", "explicit_replacement",
  "jiwoon-ahn/irn misc/indexing.py (path indices, sparse-to-dense affinity, random walk)", [
    C("paths_indices[i] = paths_indices[i].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "paths_indices[i] = paths_indices[i].to(edge.device, non_blocking=True)", ".cuda() fails"),
    C(".to_dense().cuda()", "tensor_to_device", "replace", True,
      "                                              torch.cat([affinity_sparse, torch.ones([n_vertices]), affinity_sparse])).to_dense().npu()",
      ".cuda() fails; the sparse tensor itself stays on the CPU, which is fine"),
])

E("psa_infer_cls", "infer_cls.py", "explicit_replacement",
  "jiwoon-ahn/psa infer_cls.py (threaded multi-GPU CAM inference via nn.parallel.replicate, pydensecrf)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("model.load_state_dict(torch.load(args.weights))", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(args.weights, map_location='cpu'))",
      "the released res38/vgg16 classification weights were saved from CUDA tensors"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", ".cuda() fails"),
    C("n_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "n_gpus = torch.npu.device_count()",
      "0 on NPU -> replicate onto no devices and i % 0 in the workers"),
    C("model_replicas = torch.nn.parallel.replicate(model, list(range(n_gpus)))", "distributed_framework", "replace", True,
      "model_replicas = [copy.deepcopy(model).npu(d) for d in range(n_gpus)]",
      "replicate() broadcasts parameters through torch.cuda.comm, which has no NPU path"),
    C("with torch.cuda.device(i%n_gpus):", "torch_cuda_api", "replace", True, "with torch.npu.device(i%n_gpus):",
      "torch.cuda.device fails without CUDA"),
    C("cam = model_replicas[i%n_gpus].forward_cam(img.cuda())", "tensor_to_device", "replace", True,
      "cam = model_replicas[i%n_gpus].forward_cam(img.npu())", ".cuda() fails"),
])

# ---------------------------------------------------------------------------------------------
# CRF-as-RNN (sadeepj/crfasrnn_pytorch style, with a CUDA permutohedral lattice)
# ---------------------------------------------------------------------------------------------
E("crfasrnn_filters", "crfasrnn/filters.py", "kernel_rewrite",
  "sadeepj/crfasrnn_pytorch crfasrnn/filters.py, GPU fork with a JIT-built CUDA permutohedral lattice", [
    C("=if torch.cuda.is_available():", "custom_cuda_extension", "add_branch", False,
      "elif getattr(torch, 'npu', None) is not None and torch.npu.is_available():  permuto_gpu = None  # no Ascend lattice yet; host fallback below",
      "the CUDA build is skipped on NPU hosts anyway; a native Ascend C lattice would slot in here"),
    C('_DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", False,
      '_DEVICE = torch.device("cpu")  # lattice features live on the host when there is no CUDA kernel',
      "already evaluates to cpu on NPU hosts, which the host fallback needs; made explicit"),
    C("q_out = permuto_cpp.forward(q_in, features)[0]", "unsupported_op_workaround", "replace", True,
      "q_out = permuto_cpp.forward(q_in.cpu(), features.cpu())[0].to(q_in.device)",
      "NPU tensors are not is_cuda and land in the CPU extension, which cannot read device memory; round-trip through the host"),
    C("grad_q_back = permuto_cpp.backward(", "unsupported_op_workaround", "replace", True,
      "grad_q_back = permuto_cpp.backward(grad_q_out.contiguous().cpu(), feature_saved.contiguous())[0].to(grad_q_out.device)",
      "same for the backward pass"),
    C("return output * self.norm", "tensor_to_device", "replace", True, "return output * self.norm.to(output.device)",
      "norm is computed on the host lattice, output is on the NPU"),
    C("return torch.cat([xy, rgb], dim=2)", "tensor_to_device", "replace", True,
      "return torch.cat([xy, rgb.to(xy.device)], dim=2)",
      "xy is built on _DEVICE (cpu on NPU hosts) while the image is on the NPU"),
])

E("crfasrnn_crfrnn", "crfasrnn/crfrnn.py", "device_branch_or_abstraction",
  "sadeepj/crfasrnn_pytorch crfasrnn/crfrnn.py (mean-field CRF-RNN layer + GPU demo/timing entry point)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point of the demo"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on NPU hosts -> the demo silently runs on the CPU"),
    C('return torch.device("cuda:{}".format(gpu_id))', "device_type", "replace", True,
      'return torch.device("npu:{}".format(gpu_id))', "cuda device"),
    C('if device.type == "cuda":', "device_type", "replace", False, 'if device.type == "npu":',
      "without it the timing skips the sync and measures launch time only; results unaffected"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", False, "torch.npu.synchronize(device)",
      "reached only once the check above is ported; timing only"),
])

# ---------------------------------------------------------------------------------------------
# Packaging: conda env, Dockerfile, requirements
# ---------------------------------------------------------------------------------------------
E("wsss_env", "environment.yml", "explicit_replacement",
  "conda environment.yml of a 2020-era weakly-supervised segmentation repo (IRN/PSA-based)", [
    C("- pytorch=1.7.1", "import_torch_npu", "replace", True, "  - pytorch=2.1.0",
      "torch_npu wheels exist only for specific torch versions (2.1.0 here); no torch_npu for 1.7.1"),
    C("- torchvision=0.8.2", "import_torch_npu", "replace", True, "  - torchvision=0.16.0",
      "must match torch 2.1.0"),
    C("- cudatoolkit=10.2", "import_torch_npu", "replace", True, "  - cpuonly",
      "cudatoolkit makes conda resolve the CUDA build of pytorch; NPU hosts use the CPU/aarch64 build plus torch_npu"),
    C("- cudnn=7.6.5", "import_torch_npu", "removal", False, None,
      "unused CUDA library; may not even resolve on aarch64 hosts (unconfirmed)"),
    C("- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post10",
      "the Ascend adapter itself (needs CANN installed on the host)"),
])

E("docker", "docker/Dockerfile", "explicit_replacement",
  "mmsegmentation/semseg-style docker/Dockerfile (pytorch CUDA devel base, mmcv-full cu wheel, NVIDIA apex)", [
    C("FROM pytorch/pytorch:${PYTORCH}-cuda${CUDA}-cudnn${CUDNN}-devel", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "CUDA base image has no CANN toolkit/driver libraries; use an Ascend CANN image (tag approximate)"),
    C('ENV TORCH_CUDA_ARCH_LIST="6.0 6.1 7.0 7.5 8.0+PTX"', "env_var", "removal", False, None,
      "nvcc-only; dead on NPU"),
    C('ENV TORCH_NVCC_FLAGS="-Xfatbin -compress-all"', "env_var", "removal", False, None, "nvcc-only; dead on NPU"),
    C('ENV CMAKE_PREFIX_PATH="$(dirname $(which conda))/../"', "import_torch_npu", "npu_only_addition", True,
      "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post10",
      "the CANN base image carries no torch; install torch + torch_npu"),
    C('ENV FORCE_CUDA="1"', "env_var", "removal", True, None,
      "forces CUDA builds of mmcv/inplace_abn even without nvcc, so pip install fails"),
    C("RUN pip install --no-cache-dir mmcv-full==1.3.13 -f https://download.openmmlab.com/mmcv/dist/cu110/torch1.7.0/index.html",
      "custom_cuda_extension", "replace", True,
      "RUN MMCV_WITH_OPS=1 FORCE_NPU=1 pip install --no-cache-dir mmcv-full==1.7.2",
      "cu110 wheel links libcudart; mmcv.ops (imported by mmseg heads) fails to load (NPU build flags unconfirmed)"),
    C("RUN git clone https://github.com/NVIDIA/apex /tmp/apex && cd /tmp/apex \\", "custom_cuda_extension", "replace", True,
      "RUN git clone https://gitee.com/ascend/apex /tmp/apex && cd /tmp/apex \\",
      "NVIDIA apex has no NPU support; Ascend's apex patch provides amp/DDP/fused optimizers"),
    C('&& pip install -v --disable-pip-version-check --no-cache-dir --global-option="--cpp_ext" --global-option="--cuda_ext" ./ \\',
      "custom_cuda_extension", "replace", True,
      "    && bash scripts/build.sh --python=3.11 && pip install apex/dist/apex-*.whl \\",
      "--cuda_ext needs nvcc"),
    C("RUN cd lib/psa && python setup.py build_ext --inplace && cd ../sync_bn && python setup.py build_ext --inplace",
      "custom_cuda_extension", "removal", True, None,
      "lib/psa and lib/sync_bn are CUDAExtension-only builds; the NPU port uses nn.SyncBatchNorm and a torch-op PSA"),
])

E("requirements", "requirements.txt", "explicit_replacement",
  "requirements.txt of a semseg-style code base", [
    C("torch>=1.7.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "Ascend adapter; pins torch to 2.1.0 in practice"),
    C("inplace-abn>=1.1.0", "custom_cuda_extension", "removal", False, None,
      "installs as a CPU-only build on NPU hosts; only used when bn_type=inplace_abn"),
    C("pynvml>=8.0.4", "torch_cuda_api", "removal", False, None,
      "NVML has no Ascend equivalent (knowledge: use torch.npu.utilization / mem_get_info); installs fine, fails only when queried"),
])
