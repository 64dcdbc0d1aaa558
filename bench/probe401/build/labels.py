"""Labels for probe401 (indoor 3-D object detection on point clouds: VoteNet, H3DNet, GroupFree3D,
3DETR, ImVoteNet). One C(...) per upstream line a careful porter would edit for Ascend/torch_npu."""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = ("Entry script: torch_npu must be loaded before any torch.npu.* call or 'npu' device string; "
              "the old pinned torch (<2.5) has no device-backend autoload, so the explicit import is needed.")
GPU_CKPT = ("Released/pretrained checkpoints were saved on GPU and hold CUDA tensors; torch.load without "
            "map_location tries to restore them on CUDA and fails on an NPU host.")
CUDA_ALLOC = "Allocates on CUDA; on an NPU host this raises (no CUDA) and the loss would mix devices anyway."

# ----------------------------------------------------------------------------------------- VoteNet
E("votenet_train", "train.py", "explicit_replacement", "facebookresearch/votenet train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "Unported, torch.cuda.is_available() is False on an NPU host and training silently runs on CPU."),
    C("if torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", False,
      "if torch.npu.device_count() > 1:",
      "torch.cuda.device_count() just returns 0 on an NPU host (branch skipped, single device); "
      "ported for consistency once the DataParallel line is fixed."),
    C("log_string(\"Let's use %d GPUs!\"", "torch_cuda_api", "replace", False,
      "log_string(\"Let's use %d NPUs!\" % (torch.npu.device_count()))", "Log line only."),
    C("net = nn.DataParallel(net)", "unsupported_op_workaround", "replace", True,
      "pass  # nn.DataParallel is not supported on NPU; train on one NPU (or switch to DDP + hccl)",
      "torch.nn.DataParallel is marked unsupported on Atlas A2/A3 in Ascend's API list; with device_count "
      "ported, a multi-NPU host would enter this branch and fail."),
    C("checkpoint = torch.load(CHECKPOINT_PATH)", "device_type", "replace", True,
      "checkpoint = torch.load(CHECKPOINT_PATH, map_location='cpu')", GPU_CKPT),
])

E("votenet_demo", "demo.py", "explicit_replacement", "facebookresearch/votenet demo.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "Otherwise the demo silently runs on CPU (and the pointnet2 ops have no CPU kernels)."),
    C("checkpoint = torch.load(checkpoint_path)", "device_type", "replace", True,
      "checkpoint = torch.load(checkpoint_path, map_location=device)",
      "The demo loads the authors' GPU-trained pretrained_votenet_on_*.tar; " + GPU_CKPT),
])

E("votenet_eval", "eval.py", "explicit_replacement", "facebookresearch/votenet eval.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "Silent CPU fallback otherwise."),
    C("checkpoint = torch.load(CHECKPOINT_PATH)", "device_type", "replace", True,
      "checkpoint = torch.load(CHECKPOINT_PATH, map_location='cpu')", GPU_CKPT),
])

E("votenet_loss", "models/loss_helper.py", "explicit_replacement", "facebookresearch/votenet models/loss_helper.py", [
    C("objectness_label = torch.zeros((B,K), dtype=torch.long).cuda()", "tensor_to_device", "replace", True,
      "objectness_label = torch.zeros((B,K), dtype=torch.long).npu()", CUDA_ALLOC),
    C("objectness_mask = torch.zeros((B,K)).cuda()", "tensor_to_device", "replace", True,
      "objectness_mask = torch.zeros((B,K)).npu()", CUDA_ALLOC),
    C("criterion = nn.CrossEntropyLoss(torch.Tensor(OBJECTNESS_CLS_WEIGHTS).cuda()", "tensor_to_device", "replace", True,
      "criterion = nn.CrossEntropyLoss(torch.Tensor(OBJECTNESS_CLS_WEIGHTS).npu(), reduction='none')",
      "Class weights must live on the same device as the logits."),
    C("heading_label_one_hot = torch.cuda.FloatTensor(", "torch_cuda_api", "replace", True,
      "heading_label_one_hot = torch.zeros(batch_size, heading_class_label.shape[1], num_heading_bin, device=heading_class_label.device)",
      "Legacy torch.cuda.FloatTensor constructor; replaced by a device-following torch.zeros."),
    C("size_label_one_hot = torch.cuda.FloatTensor(", "torch_cuda_api", "replace", True,
      "size_label_one_hot = torch.zeros(batch_size, size_class_label.shape[1], num_size_cluster, device=size_class_label.device)",
      "Legacy torch.cuda.FloatTensor constructor."),
    C("mean_size_arr_expanded = torch.from_numpy(mean_size_arr.astype(np.float32)).cuda()", "tensor_to_device", "replace", True,
      "mean_size_arr_expanded = torch.from_numpy(mean_size_arr.astype(np.float32)).npu().unsqueeze(0).unsqueeze(0) # (1,1,num_size_cluster,3) ",
      CUDA_ALLOC),
    C("torch.sum(objectness_label.float().cuda())", "tensor_to_device", "replace", True,
      "torch.sum(objectness_label.float().npu())/float(total_num_proposal)",
      "Tensor.cuda() on an NPU tensor raises on a host without CUDA."),
])

E("votenet_model", "models/votenet.py", "explicit_replacement", "facebookresearch/votenet models/votenet.py", [
    C("model = VoteNet(10,12,10,np.random.random((10,3))).cuda()", "tensor_to_device", "replace", True,
      "model = VoteNet(10,12,10,np.random.random((10,3))).npu()", "Self-test under __main__."),
    C("inputs = {'point_clouds': torch.from_numpy(sample['point_clouds']).unsqueeze(0).cuda()}", "tensor_to_device", "replace", True,
      "inputs = {'point_clouds': torch.from_numpy(sample['point_clouds']).unsqueeze(0).npu()}",
      "Inside a bare try/except: unported it silently falls into the 'dataset not prepared' path."),
    C("inputs = {'point_clouds': torch.rand((20000,3)).unsqueeze(0).cuda()}", "tensor_to_device", "replace", True,
      "inputs = {'point_clouds': torch.rand((20000,3)).unsqueeze(0).npu()}", "Self-test input."),
    C("end_points[key] = torch.from_numpy(sample[key]).unsqueeze(0).cuda()", "tensor_to_device", "replace", True,
      "end_points[key] = torch.from_numpy(sample[key]).unsqueeze(0).npu()",
      "Swallowed by the bare except: unported the loss/dump check is silently skipped."),
])

E("votenet_pn2_utils", "pointnet2/pointnet2_utils.py", "kernel_rewrite",
  "facebookresearch/votenet pointnet2/pointnet2_utils.py (from erikwijmans/Pointnet2_PyTorch)", [])

E("votenet_pn2_setup", "pointnet2/setup.py", "kernel_rewrite", "facebookresearch/votenet pointnet2/setup.py", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", True,
      "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
      "No nvcc on Ascend; the extension is rebuilt with torch_npu's NpuExtension around Ascend C kernels."),
    C('"{}/src/*.cu".format(_ext_src_root)', "custom_cuda_extension", "replace", True,
      '"{}/src/npu/*.cpp".format(_ext_src_root)',
      "The .cu kernels (FPS, ball query, group/gather, three_nn/interpolate) must be re-implemented for NPU."),
    C("CUDAExtension(", "custom_cuda_extension", "replace", True, "NpuExtension(",
      "Same module name pointnet2._ext keeps the Python wrappers unchanged."),
    C('"nvcc": ["-O2"', "custom_cuda_extension", "removal", False, None,
      "nvcc flags are ignored when no .cu sources remain; removal is cleanup."),
])

E("votenet_pn2_modules", "pointnet2/pointnet2_modules.py", "explicit_replacement",
  "facebookresearch/votenet pointnet2/pointnet2_modules.py", [
    C("torch.cuda.manual_seed_all(1)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(1)",
      "torch.cuda.manual_seed_all is a queued no-op without CUDA; test is not seed-sensitive."),
    C("xyz = Variable(torch.randn(2, 9, 3).cuda(), requires_grad=True)", "tensor_to_device", "replace", True,
      "xyz = Variable(torch.randn(2, 9, 3).npu(), requires_grad=True)", "Self-test under __main__."),
    C("xyz_feats = Variable(torch.randn(2, 9, 6).cuda(), requires_grad=True)", "tensor_to_device", "replace", True,
      "xyz_feats = Variable(torch.randn(2, 9, 6).npu(), requires_grad=True)", "Self-test under __main__."),
    C("test_module.cuda()", "tensor_to_device", "replace", True, "test_module.npu()", "Self-test under __main__."),
    C("torch.cuda.FloatTensor(*new_features.size()).fill_(1)", "torch_cuda_api", "replace", True,
      "torch.ones(*new_features.size(), device=new_features.device)", "Legacy CUDA tensor constructor."),
])

E("votenet_nn_distance", "utils/nn_distance.py", "explicit_replacement", "facebookresearch/votenet utils/nn_distance.py", [])

# ----------------------------------------------------------------------------------------- H3DNet
E("h3dnet_train", "train_1gpu.py", "explicit_replacement", "zaiweizhang/H3DNet train_1gpu.py", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = FLAGS.gpu', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = FLAGS.gpu',
      "Set before torch is imported; unported, --gpu 3 is ignored and the job silently lands on NPU 0."),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "Model placement."),
    C("checkpoint = torch.load(CHECKPOINT_PATH)", "device_type", "replace", True,
      "checkpoint = torch.load(CHECKPOINT_PATH, map_location='cpu')", GPU_CKPT),
    C("batch_data_label[key] = batch_data_label[key].cuda()", "tensor_to_device", "replace", True,
      "batch_data_label[key] = batch_data_label[key].npu()", "Training batch to device."),
    C("peak GPU memory", "torch_cuda_api", "replace", False,
      "log_string('peak NPU memory: %.1f MB' % (torch.npu.max_memory_allocated() / 1024.0 / 1024.0))",
      "torch.cuda.max_memory_allocated() returns 0 without CUDA (no error); log value only."),
    C("batch_data_label[key] = batch_data_label[key].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "batch_data_label[key] = batch_data_label[key].npu(non_blocking=True)", "Eval batch to device."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "No-op without CUDA; only frees the NPU cache when ported (memory headroom, not correctness)."),
])

E("h3dnet_script", "scripts/run_scannet.sh", "explicit_replacement", "zaiweizhang/H3DNet run scripts (train/eval on ScanNet)", [
    C("=set -e", "env_var", "npu_only_addition", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; often already sourced in the shell profile or container image."),
    C("nvidia-smi --query-gpu", "device_capability_check", "replace", True, "npu-smi info",
      "No nvidia-smi on an Ascend host; with `set -e` the missing command aborts the script."),
    C("CUDA_VISIBLE_DEVICES=${GPU} python eval.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${GPU} python eval.py \\",
      "Unported, GPU=2 is ignored and eval silently runs on NPU 0."),
])

E("h3dnet_loss", "models/loss_helper_primitive.py", "explicit_replacement",
  "zaiweizhang/H3DNet models/loss_helper_*.py (primitive losses)", [
    C("weights = torch.cuda.FloatTensor(SEM_CLS_WEIGHTS)", "torch_cuda_api", "replace", True,
      "weights = torch.tensor(SEM_CLS_WEIGHTS, dtype=torch.float32, device=pred_logits.device)",
      "Legacy CUDA tensor constructor."),
    C("objectness_label = torch.cuda.LongTensor(B, K).fill_(0)", "torch_cuda_api", "replace", True,
      "objectness_label = torch.zeros((B, K), dtype=torch.long, device=aggregated_vote_xyz.device)",
      "Legacy CUDA tensor constructor."),
    C("objectness_mask = torch.cuda.FloatTensor(B, K).fill_(0)", "torch_cuda_api", "replace", True,
      "objectness_mask = torch.zeros((B, K), device=aggregated_vote_xyz.device)", "Legacy CUDA tensor constructor."),
])

E("h3dnet_model", "models/hdnet.py", "explicit_replacement", "zaiweizhang/H3DNet models/hdnet.py", [
    C("match_idx = torch.arange(self.num_proposal).cuda()", "tensor_to_device", "replace", True,
      "match_idx = torch.arange(self.num_proposal, device=centers.device).unsqueeze(0).repeat(batch_size, 1)",
      "Runs in every 'opt' forward."),
    C("input_feature_dim=1).cuda()", "tensor_to_device", "replace", True, "input_feature_dim=1).npu()",
      "Self-test under __main__."),
    C("pc = torch.rand((2, 40000, 4)).cuda()", "tensor_to_device", "replace", True,
      "pc = torch.rand((2, 40000, 4)).npu()", "Self-test under __main__."),
])

# ----------------------------------------------------------------------------------------- Group-Free-3D
E("groupfree_train", "train_dist.py", "explicit_replacement", "zeliu98/Group-Free-3D train_dist.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "No-op without CUDA; memory hygiene after loading a checkpoint."),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
      "DDP with device_ids=[local_rank] needs the module on the NPU."),
    C("batch_data_label[key] = batch_data_label[key].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "batch_data_label[key] = batch_data_label[key].npu(non_blocking=True)", "Training batch to device."),
    C("torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      'logger.info(f"max mem: {torch.npu.max_memory_allocated() / (1024.0 * 1024.0):.0f}M")',
      "Returns 0 without CUDA; log value only."),
    C("batch_data_label = {key: value.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "batch_data_label = {key: value.npu(non_blocking=True) for key, value in batch_data_label.items()}",
      "Eval batch to device."),
    C("torch.cuda.set_device(opt.local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(opt.local_rank)",
      "Raises without CUDA; also binds each rank to its NPU before HCCL init."),
    C("backend='nccl'", "dist_backend", "replace", True,
      "torch.distributed.init_process_group(backend='hccl', init_method='env://')", "NCCL does not exist on Ascend."),
    C("torch.cuda.manual_seed_all(opt.rng_seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(opt.rng_seed)",
      "Queued no-op without CUDA; whether torch.manual_seed alone seeds the NPU generators is unconfirmed, so "
      "a porter ports it, but nothing fails if left."),
])

E("groupfree_eval", "eval_avg.py", "explicit_replacement", "zeliu98/Group-Free-3D eval_avg.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C("batch_data_label[key] = batch_data_label[key].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "batch_data_label[key] = batch_data_label[key].npu(non_blocking=True)", "Eval batch to device."),
    C("torch.cuda.synchronize()  # make sure", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # make sure the H2D copies are done before timing",
      "torch.cuda.synchronize() lazily initialises CUDA and raises on an NPU host."),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "Raises without CUDA; also needed so the timing covers the asynchronous NPU kernels."),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "Model placement before DDP."),
    C("torch.cuda.set_device(opt.local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(opt.local_rank)",
      "Raises without CUDA."),
    C("backend='nccl'", "dist_backend", "replace", True,
      "torch.distributed.init_process_group(backend='hccl', init_method='env://')", "NCCL does not exist on Ascend."),
])

E("groupfree_detector", "models/detector.py", "explicit_replacement", "zeliu98/Group-Free-3D models/detector.py", [])

E("groupfree_loss", "models/loss_helper.py", "explicit_replacement", "zeliu98/Group-Free-3D models/loss_helper.py", [
    C("objectness_label = torch.zeros((B, K + 1), dtype=torch.long).cuda()", "tensor_to_device", "replace", True,
      "objectness_label = torch.zeros((B, K + 1), dtype=torch.long).npu()", CUDA_ALLOC),
    C("objectness_mask = torch.ones((B, K)).cuda()", "tensor_to_device", "replace", True,
      "objectness_mask = torch.ones((B, K)).npu()", CUDA_ALLOC),
    C("torch.sum(query_points_obj_gt.float().cuda())", "tensor_to_device", "replace", True,
      "torch.sum(query_points_obj_gt.float().npu()) / float(total_num_proposal)",
      "Tensor.cuda() on an NPU tensor raises on a host without CUDA."),
])

E("groupfree_logger", "utils/logger.py", "explicit_replacement", "zeliu98/Group-Free-3D utils/logger.py (detectron2-style)", [])

E("groupfree_launch", "scripts/train_scannet_6L_256O.sh", "explicit_replacement",
  "zeliu98/Group-Free-3D README launch command (torch.distributed.launch)", [
    C("export CUDA_VISIBLE_DEVICES=", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}",
      "A user restricting cards (e.g. 4,5,6,7) would silently get NPUs 0-3 if this stays CUDA-only."),
    C("=export OMP_NUM_THREADS=4", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; often already sourced in the shell profile or container image."),
    C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None,
      "Inert on Ascend (HCCL does not read NCCL_*); cleanup only."),
])

E("groupfree_requirements", "requirements.txt", "explicit_replacement",
  "zeliu98/Group-Free-3D install instructions (torch 1.3 / CUDA 10.x)", [
    C("=torch==1.3.1", "import_torch_npu", "replace", True, "torch==2.1.0",
      "No torch_npu exists for torch 1.3; 2.1.0 is the oldest line still in the torch_npu matrix."),
    C("=torchvision==0.4.2", "import_torch_npu", "replace", True, "torchvision==0.16.0",
      "torchvision must match torch 2.1.0 (0.16.0 per the Ascend/vision table)."),
    C("=matplotlib", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "torch_npu wheel matching torch 2.1.0 (v2.1.0-6.0.0, CANN 8.0.0)."),
])

# ----------------------------------------------------------------------------------------- 3DETR
E("detr3d_main", "main.py", "explicit_replacement", "facebookresearch/3detr main.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C('dist_backend="nccl",', "dist_backend", "replace", True, 'dist_backend="hccl",',
      "Only reached with --ngpus > 1; NCCL does not exist on Ascend."),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "Raises without CUDA, even single-device."),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "Unported the branch is just skipped; seeding of NPU generators by torch.manual_seed alone is unconfirmed."),
    C("torch.cuda.manual_seed_all(args.seed + get_rank())", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed + get_rank())", "Only reached when the guard above is true."),
    C("model = model.cuda(local_rank)", "tensor_to_device", "replace", True, "model = model.npu(local_rank)",
      "Model placement."),
    C("criterion = criterion.cuda(local_rank)", "tensor_to_device", "replace", True,
      "criterion = criterion.npu(local_rank)", "The set criterion holds per-class weight buffers."),
])

E("detr3d_engine", "engine.py", "explicit_replacement", "facebookresearch/3detr engine.py", [
    C("mem_mb = torch.cuda.max_memory_allocated() / (1024 ** 2)", "torch_cuda_api", "replace", False,
      "mem_mb = torch.npu.max_memory_allocated() / (1024 ** 2)",
      "Returns 0 without CUDA: logged/tensorboard 'memory' reads 0 MB, nothing fails."),
    C("mem_mb = torch.cuda.max_memory_allocated() / 1024 ** 2", "torch_cuda_api", "replace", False,
      "mem_mb = torch.npu.max_memory_allocated() / 1024 ** 2", "Same as above, eval loop."),
])

E("detr3d_dist", "utils/dist.py", "explicit_replacement", "facebookresearch/3detr utils/dist.py", [
    C("torch.cuda.set_device(gpu_id)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu_id)",
      "Raises without CUDA; binds the rank to its NPU before HCCL init."),
    C('return all_gather_pickle(metrics, device="cuda")', "device_type", "replace", True,
      'return all_gather_pickle(metrics, device="npu")',
      "HCCL collectives need device tensors; 'cuda' raises on an NPU host."),
])

E("detr3d_misc", "utils/misc.py", "explicit_replacement", "facebookresearch/3detr utils/misc.py", [
    C('t = torch.tensor([self.count, self.total], dtype=torch.float64, device="cuda")', "device_type", "replace", True,
      't = torch.tensor([self.count, self.total], dtype=torch.float64, device="npu")',
      "all_reduce over HCCL needs an NPU tensor. fp64 kept; whether HCCL all_reduce accepts float64 on the "
      "target chip is unconfirmed (cast to float32 if not)."),
])

E("detr3d_model", "models/model_3detr.py", "explicit_replacement", "facebookresearch/3detr models/model_3detr.py", [])

E("detr3d_cython", "utils/cython_compile.py", "explicit_replacement", "facebookresearch/3detr utils/cython_compile.py", [])

E("detr3d_pn2_setup", "third_party/pointnet2/setup.py", "kernel_rewrite",
  "facebookresearch/3detr third_party/pointnet2/setup.py", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", True,
      "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
      "No nvcc on Ascend; rebuild with NpuExtension."),
    C('"{}/src/*.cu".format(_ext_src_root)', "custom_cuda_extension", "replace", True,
      '"{}/src/npu/*.cpp".format(_ext_src_root)', "CUDA kernels replaced by NPU implementations."),
    C('os.environ["TORCH_CUDA_ARCH_LIST"] = os.environ.get(', "env_var", "removal", False, None,
      "CUDA arch list is meaningless without nvcc (remove the whole statement); inert."),
    C("CUDAExtension(", "custom_cuda_extension", "replace", True, "NpuExtension(", "Extension type."),
    C('"nvcc": ["-O3", "-Xfatbin"', "custom_cuda_extension", "removal", False, None,
      "nvcc flags unused once no .cu sources remain."),
])

# ----------------------------------------------------------------------------------------- ImVoteNet
E("imvotenet_train", "train.py", "explicit_replacement", "facebookresearch/imvotenet train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU),
    C("if torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", False, "if torch.npu.device_count() > 1:",
      "Returns 0 on an NPU host (branch skipped); ported together with the DataParallel fix."),
    C("log_string(\"Let's use %d GPUs!\"", "torch_cuda_api", "replace", False,
      "log_string(\"Let's use %d NPUs!\" % (torch.npu.device_count()))", "Log line only."),
    C("net = nn.DataParallel(net)", "unsupported_op_workaround", "replace", True,
      "pass  # nn.DataParallel is not supported on NPU; train on one NPU (or switch to DDP + hccl)",
      "torch.nn.DataParallel is unsupported on Atlas A2/A3; reached on multi-NPU hosts once device_count is ported."),
    C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "Model placement."),
    C("map_location=lambda storage, loc: storage.cuda()", "device_type", "replace", True,
      "checkpoint = torch.load(CHECKPOINT_PATH, map_location='cpu')",
      "The map_location lambda moves every storage to CUDA and raises on an NPU host."),
    C("batch_data_label[key] = batch_data_label[key].cuda()", "tensor_to_device", "replace", True,
      "batch_data_label[key] = batch_data_label[key].npu()", "Training batch to device."),
    C("batch_data_label = {k: v.cuda() for k, v in batch_data_label.items()}", "tensor_to_device", "replace", True,
      "batch_data_label = {k: v.npu() for k, v in batch_data_label.items()}", "Eval batch to device."),
])

E("imvotenet_model", "models/imvotenet.py", "explicit_replacement", "facebookresearch/imvotenet models/imvotenet.py", [
    C("offsets = torch.arange(self.vote_dims).cuda().long()", "tensor_to_device", "replace", True,
      "offsets = torch.arange(self.vote_dims, device=xyz.device).long().view(1, 1, -1)",
      "Index offsets must be on the same device as the gathered tensor."),
    C("ray_dir = torch.cuda.FloatTensor(", "torch_cuda_api", "replace", True,
      "ray_dir = torch.zeros(batch_size, seed_num, self.max_imvote_per_pixel, 3, device=xyz.device)",
      "Legacy CUDA tensor constructor."),
])

E("imvotenet_dataset", "sunrgbd/sunrgbd_detection_dataset.py", "explicit_replacement",
  "facebookresearch/imvotenet sunrgbd/sunrgbd_detection_dataset.py", [])
