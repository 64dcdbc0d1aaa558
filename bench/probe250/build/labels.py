"""Labels for probe250 (pedestrian trajectory prediction / crowd-motion forecasting, CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit. `required` is judged for the line left
unchanged while the rest of the file has been ported ("does it break or silently misbehave then?").
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: load torch_npu right after torch so torch.npu / Tensor.npu exist "
               "(autoloaded only from torch_npu 2.5.1 on)")
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ----------------------------------------------------------------------------------------------
# Social-GAN (agrimgupta92/sgan style)
# ----------------------------------------------------------------------------------------------
E("sgan_train", "scripts/train.py", "explicit_replacement",
  "Social-GAN scripts/train.py (get_dtypes, --use_gpu/--gpu_num, tensor.cuda() batches, timing via synchronize)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("long_dtype = torch.cuda.LongTensor", "torch_cuda_api", "replace", True,
      "long_dtype = torch.npu.LongTensor",
      "models are cast with .type(long/float_dtype); a torch.cuda.*Tensor type needs a CUDA build and raises on an NPU host"),
    C("float_dtype = torch.cuda.FloatTensor", "torch_cuda_api", "replace", True,
      "float_dtype = torch.npu.FloatTensor",
      "generator/discriminator .type(float_dtype) would try to move parameters to CUDA"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu_num', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu_num',
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: --gpu_num would silently stop selecting the device"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "--timing 1 path: torch.cuda.synchronize() lazily initialises CUDA and raises without a CUDA build"),
    C("torch.cuda.synchronize()  # wait for the step to finish", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for the step to finish", "same as above, second timing point"),
    C("batch = [tensor.cuda() for tensor in batch]", "tensor_to_device", "replace", True,
      "batch = [tensor.npu() for tensor in batch]", "discriminator_step moves the collated batch to the accelerator"),
    C("batch = [tensor.cuda(non_blocking=True) for tensor in batch]", "tensor_to_device", "replace", True,
      "batch = [tensor.npu(non_blocking=True) for tensor in batch]", "generator_step batch transfer"),
    C("batch = [tensor.cuda() if args.use_gpu else tensor for tensor in batch]", "tensor_to_device", "replace", True,
      "batch = [tensor.npu() if args.use_gpu else tensor for tensor in batch]", "check_accuracy batch transfer"),
])

E("sgan_models", "sgan/models.py", "explicit_replacement",
  "Social-GAN sgan/models.py (get_noise, Encoder.init_hidden, decoder_c built with .cuda())", [
    C("return torch.randn(*shape).cuda()", "tensor_to_device", "replace", True,
      "return torch.randn(*shape).npu()", "gaussian noise for the generator is created on CUDA"),
    C("return torch.rand(*shape).sub_(0.5).mul_(2.0).cuda()", "tensor_to_device", "replace", True,
      "return torch.rand(*shape).sub_(0.5).mul_(2.0).npu()", "uniform noise path"),
    C("h_0 = torch.zeros(self.num_layers, batch, self.h_dim).cuda()", "tensor_to_device", "replace", True,
      "h_0 = torch.zeros(self.num_layers, batch, self.h_dim).npu()", "LSTM initial hidden state"),
    C("c_0 = torch.zeros(self.num_layers, batch, self.h_dim).cuda()", "tensor_to_device", "replace", True,
      "c_0 = torch.zeros(self.num_layers, batch, self.h_dim).npu()", "LSTM initial cell state"),
    C("=).cuda()", "tensor_to_device", "replace", True, ").npu()",
      "closing line of decoder_c = torch.zeros(...).cuda() in TrajectoryGenerator.forward"),
])

E("sgan_utils", "sgan/utils.py", "explicit_replacement",
  "Social-GAN sgan/utils.py (timeit with synchronize, nvidia-smi memory probe)", [
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "timeit() start point; raises without a CUDA build whenever should_time is set"),
    C("torch.cuda.synchronize()  # flush queued kernels", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # flush queued kernels before reading the clock", "timeit() end point"),
    C("'nvidia-smi', '-q', '--gpu=' + str(1)", "torch_cuda_api", "replace", True,
      "return int(torch.npu.memory_reserved() / 2 ** 20)  # no nvidia-smi on Ascend hosts (npu-smi has a different format)",
      "get_gpu_memory() shells out to nvidia-smi; on an NPU host the output is empty and output[1] raises IndexError"),
    C("return 'gpu' if tensor.is_cuda else 'cpu'", "device_type", "replace", False,
      "return 'npu' if tensor.is_npu else 'cpu'", "log-only helper: is_cuda is False for NPU tensors so logs say 'cpu'"),
])

E("sgan_eval", "scripts/evaluate_model.py", "explicit_replacement",
  "Social-GAN scripts/evaluate_model.py (released GPU checkpoints, generator.cuda())", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("generator.cuda()", "tensor_to_device", "replace", True, "generator.npu()", "model placement"),
    C("batch = [tensor.cuda() for tensor in batch]", "tensor_to_device", "replace", True,
      "batch = [tensor.npu() for tensor in batch]", "batch placement"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu_num', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu_num', "device selection silently ignored otherwise"),
    C("checkpoint = torch.load(path)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(path, map_location='cpu')",
      "the released sgan models were saved from CUDA tensors; unpickling them without map_location raises "
      "'Attempting to deserialize object on a CUDA device' on a host without CUDA"),
])

E("sgan_data", "sgan/data/trajectories.py", "explicit_replacement",
  "Social-GAN sgan/data/trajectories.py (TrajectoryDataset, seq_collate, data_loader) - host-side only", [])

E("sgan_sh", "scripts/run_traj.sh", "explicit_replacement",
  "Social-GAN training launcher looping over ETH/UCY splits with CUDA_VISIBLE_DEVICES", [
    C("#!/bin/bash", "env_var", "npu_only_addition", True, SET_ENV,
      "CANN libraries (libhccl/libascendcl) must be on the path before torch_npu can be imported"),
    C("export CUDA_VISIBLE_DEVICES=${GPU}", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=${GPU}",
      "device pinning would be silently ignored"),
    C("nvidia-smi --query-gpu=name,memory.used --format=csv", "torch_cuda_api", "replace", True,
      "npu-smi info", "nvidia-smi does not exist on the NPU host; under set -e the script exits non-zero"),
])

E("sgan_req", "requirements.txt", "explicit_replacement",
  "Social-GAN requirements.txt pinned to cu113 wheels", [
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "import_torch_npu", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; torch_npu needs the CPU torch build (x86) or plain PyPI torch (aarch64)"),
    C("torch==1.12.1+cu113", "import_torch_npu", "replace", True, "torch==2.1.0",
      "+cu113 wheel; torch must equal the torch_npu base version (no torch_npu exists for 1.12)"),
    C("torchvision==0.13.1+cu113", "import_torch_npu", "replace", True, "torchvision==0.16.0",
      "+cu113 local version, and must match the new torch"),
    C("tensorboardX==2.5", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "add the torch-npu pin matching torch 2.1.0"),
])

# ----------------------------------------------------------------------------------------------
# Trajectron++ (StanfordASL/Trajectron-plus-plus style)
# ----------------------------------------------------------------------------------------------
E("tpp_args", "trajectron/argument_parser.py", "device_branch_or_abstraction",
  "Trajectron++ argument_parser.py (--device cuda:0, --eval_device, distributed flags)", [
    C("default='cuda:0')", "device_type", "replace", True, "default='npu:0')",
      "default training device string; becomes torch.device('cuda:0') in train.py"),
    C("default='nccl')", "dist_backend", "replace", True, "default='hccl')",
      "--dist_backend feeds dist.init_process_group; NCCL is not available with torch_npu"),
])

E("tpp_train", "trajectron/train.py", "device_branch_or_abstraction",
  "Trajectron++ train.py (device resolution, torch.cuda.set_device for pinning, DDP variant, eval_device)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("args.device = f'cuda:{args.local_rank}'", "device_type", "replace", True,
      "args.device = f'npu:{args.local_rank}'", "per-rank device string in the distributed path"),
    C("if not torch.cuda.is_available() or args.device == 'cpu':", "torch_cuda_api", "replace", True,
      "if not torch.npu.is_available() or args.device == 'cpu':",
      "unchanged, training silently falls back to the CPU on an NPU host"),
    C("if torch.cuda.device_count() == 1:", "torch_cuda_api", "replace", False,
      "if torch.npu.device_count() == 1:",
      "convenience remap when one device is visible; returns 0 on NPU so only that remap is lost"),
    C("args.device = 'cuda:0'", "device_type", "replace", True, "args.device = 'npu:0'",
      "reached once device_count is ported; cuda:0 cannot be used"),
    C("torch.cuda.set_device(args.device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.device)",
      "unguarded; raises on an NPU host (and is what makes pinned memory target the right device)"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "seeding guard; torch.manual_seed above already seeds the generators (NPU seeding not confirmed)"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(args.seed)",
      "silent no-op on NPU; reproducibility only"),
    C("peak_mb = torch.cuda.max_memory_allocated(args.device) / 2 ** 20", "torch_cuda_api", "replace", False,
      "peak_mb = torch.npu.max_memory_allocated(args.device) / 2 ** 20",
      "torch.cuda memory stats return {} when CUDA is uninitialised, so this logs 0 instead of failing"),
    C("torch.cuda.reset_peak_memory_stats(args.device)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(args.device)",
      "no is_initialized guard: _get_device_index rejects an npu device ('Expected a cuda device')"),
])

E("tpp_mgcvae", "trajectron/model/mgcvae.py", "device_branch_or_abstraction",
  "Trajectron++ model/mgcvae.py (MultimodalGenerativeCVAE; every tensor follows self.device)", [])

E("tpp_modelutils", "trajectron/model/model_utils.py", "device_branch_or_abstraction",
  "Trajectron++ model/model_utils.py (run_lstm_on_variable_length_seqs, extract_subtensor_per_batch_element)", [
    C("if tensor.is_cuda:", "device_type", "replace", False, "if tensor.device.type != 'cpu':",
      "is_cuda is False for NPU tensors, so index tensors stay on the host; indexing still works (host->device copy)"),
    C("batch_idxs = batch_idxs.to(tensor.get_device())", "tensor_to_device", "replace", False,
      "batch_idxs = batch_idxs.to(tensor.device)",
      "get_device() returns an int and .to(int) means a CUDA ordinal; must change once the guard above is ported"),
    C("indices = indices.to(tensor.get_device())", "tensor_to_device", "replace", False,
      "indices = indices.to(tensor.device)", "same as above"),
])

E("tpp_evaluate", "experiments/pedestrians/evaluate.py", "device_branch_or_abstraction",
  "Trajectron++ experiments/pedestrians/evaluate.py (CPU-only evaluation of saved models)", [])

E("tpp_env", "environment.yml", "explicit_replacement",
  "Trajectron++ conda environment with pytorch + cudatoolkit", [
    C("- pytorch=1.10.1", "import_torch_npu", "replace", True, "- pytorch-cpu=2.1.0",
      "pytorch channel build pulls the CUDA variant; torch_npu needs a CPU torch of the matching version"),
    C("- torchvision=0.11.2", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
      "must follow the torch version or the solve fails"),
    C("- cudatoolkit=11.3", "import_torch_npu", "removal", True, None,
      "CUDA runtime package; selects the CUDA pytorch build and is useless on an Ascend host"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post12",
      "torch_npu pin (pip only)"),
])

# ----------------------------------------------------------------------------------------------
# AgentFormer (Khrylx/AgentFormer style)
# ----------------------------------------------------------------------------------------------
E("af_train", "train.py", "device_branch_or_abstraction",
  "AgentFormer train.py (set_default_dtype, torch.device('cuda', index=args.gpu) if ..., set_device)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "guard for an end-of-epoch memory log line; skipped on NPU"),
    C("torch.cuda.max_memory_allocated() / 1024 ** 2", "torch_cuda_api", "replace", False,
      "print_log('max memory allocated: {:.1f} MB'.format(torch.npu.max_memory_allocated() / 1024 ** 2), log)",
      "log only"),
    C("device = torch.device('cuda', index=args.gpu) if args.gpu >= 0 and torch.cuda.is_available() else torch.device('cpu')",
      "device_type", "replace", True,
      "device = torch.device('npu', index=args.gpu) if args.gpu >= 0 and torch.npu.is_available() else torch.device('cpu')",
      "unchanged, the model silently trains on the CPU"),
    C("if torch.cuda.is_available(): torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available(): torch.npu.set_device(args.gpu)",
      "guarded, so a silent no-op; tensors are placed explicitly on npu:<gpu> anyway"),
])

E("af_test", "test.py", "device_branch_or_abstraction",
  "AgentFormer test.py (same device idiom, torch reached through `from utils.torch import *`)", [
    C("from utils.torch import *", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the script gets `torch` from utils.torch's star import; add torch_npu right after it"),
    C("device = torch.device('cuda', index=args.gpu) if args.gpu >= 0 and torch.cuda.is_available() else torch.device('cpu')",
      "device_type", "replace", True,
      "device = torch.device('npu', index=args.gpu) if args.gpu >= 0 and torch.npu.is_available() else torch.device('cpu')",
      "unchanged, inference silently runs on the CPU"),
    C("if torch.cuda.is_available(): torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available(): torch.npu.set_device(args.gpu)", "guarded no-op on NPU"),
])

E("af_torchutils", "utils/torch.py", "device_branch_or_abstraction",
  "AgentFormer / khrylib utils/torch.py (tensor aliases, to_cpu/to_device/to_cuda context managers)", [
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "otherwise the Cuda* aliases silently become CPU tensor types"),
    C("CudaFloatTensor = torch.cuda.FloatTensor", "torch_cuda_api", "replace", True,
      "CudaFloatTensor = torch.npu.FloatTensor", "CUDA tensor type alias"),
    C("CudaLongTensor = torch.cuda.LongTensor", "torch_cuda_api", "replace", True,
      "CudaLongTensor = torch.npu.LongTensor", "CUDA tensor type alias"),
    C("if gpu_index >= 0 and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if gpu_index >= 0 and torch.npu.is_available():", "get_device() would silently return cpu"),
    C("return torch.device('cuda', index=gpu_index)", "device_type", "replace", True,
      "return torch.device('npu', index=gpu_index)", "device constructor"),
    C("x.cuda()", "tensor_to_device", "replace", True, "x.npu()", "to_cuda context manager moves models with .cuda()"),
])

E("af_utils", "utils/utils.py", "device_branch_or_abstraction",
  "AgentFormer utils/utils.py (prepare_seed, print_log, allocator summary)", [
    C("torch.cuda.manual_seed_all(rand_seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(rand_seed)", "silent no-op on NPU; reproducibility only"),
    C("alloc = torch.cuda.memory_allocated(device) / 1024 ** 2", "torch_cuda_api", "replace", False,
      "alloc = torch.npu.memory_allocated(device) / 1024 ** 2", "returns 0 when CUDA is uninitialised; log only"),
    C("reserved = torch.cuda.memory_reserved(device) / 1024 ** 2", "torch_cuda_api", "replace", False,
      "reserved = torch.npu.memory_reserved(device) / 1024 ** 2", "log only"),
])

E("af_model", "model/agentformer.py", "device_branch_or_abstraction",
  "AgentFormer model/agentformer.py (set_device/set_data, agent mask from pairwise distances)", [
    C("pdist = F.pdist(cur_motion)", "unsupported_op_workaround", "replace", False,
      "pdist = torch.cdist(cur_motion[None], cur_motion[None])[0][np.triu_indices(cur_motion.shape[0], 1)]",
      "Ascend's 2.7.1 API list marks F.pdist unsupported although op-plugin registers a pdist/_pdist_forward kernel; "
      "unconfirmed, cdist rewrite is the safe choice (only used when conn_dist < 1000)"),
])

E("af_req", "requirements.txt", "explicit_replacement",
  "AgentFormer requirements.txt with torch_stable find-links and +cu111 pins", [
    C("=-f https://download.pytorch.org/whl/torch_stable.html", "import_torch_npu", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "the find-links page offers +cuXXX local versions that pip prefers over the plain wheel for the same version"),
    C("=torch==1.8.0+cu111", "import_torch_npu", "replace", True, "torch==2.1.0", "CUDA wheel; must match torch_npu"),
    C("=torchvision==0.9.0+cu111", "import_torch_npu", "replace", True, "torchvision==0.16.0",
      "CUDA wheel; must follow torch"),
    C("nuscenes-devkit==1.1.2", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "add the torch-npu pin"),
])

# ----------------------------------------------------------------------------------------------
# Social-STGCNN (abduallahmohamed/Social-STGCNN style)
# ----------------------------------------------------------------------------------------------
E("stgcnn_train", "train.py", "explicit_replacement",
  "Social-STGCNN train.py (model .cuda(), batch .cuda(), cudnn deterministic flag)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)",
      "silent no-op on NPU; reproducibility only"),
    C("kernel_size=args.kernel_size, pred_seq_len=args.pred_seq_len).cuda()", "tensor_to_device", "replace", True,
      "kernel_size=args.kernel_size, pred_seq_len=args.pred_seq_len).npu()", "model placement"),
    C("batch = [tensor.cuda() for tensor in batch]", "tensor_to_device", "replace", True,
      "batch = [tensor.npu() for tensor in batch]", "train batch"),
    C("batch = [tensor.cuda(non_blocking=True) for tensor in batch]", "tensor_to_device", "replace", True,
      "batch = [tensor.npu(non_blocking=True) for tensor in batch]", "validation batch"),
])

E("stgcnn_test", "test.py", "explicit_replacement",
  "Social-STGCNN test.py (bivariate Gaussian sampling, pretrained checkpoints loaded without map_location)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("batch = [tensor.cuda() for tensor in batch]", "tensor_to_device", "replace", True,
      "batch = [tensor.npu() for tensor in batch]", "test batch"),
    C("cov = torch.zeros(V_pred.shape[0], V_pred.shape[1], 2, 2).cuda()", "tensor_to_device", "replace", True,
      "cov = torch.zeros(V_pred.shape[0], V_pred.shape[1], 2, 2).npu()", "covariance buffer must share V_pred's device"),
    C("kernel_size=args.kernel_size, pred_seq_len=args.pred_seq_len).cuda()", "tensor_to_device", "replace", True,
      "kernel_size=args.kernel_size, pred_seq_len=args.pred_seq_len).npu()", "model placement"),
    C("model.load_state_dict(torch.load(model_path))", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(model_path, map_location='cpu'))",
      "the shipped checkpoint/*social-stgcnn* weights were saved from CUDA; loading them without map_location raises"),
])

E("stgcnn_sh", "train.sh", "explicit_replacement",
  "Social-STGCNN train.sh (five background jobs spread over GPUs with CUDA_VISIBLE_DEVICES)", [
    C("#!/bin/bash", "env_var", "npu_only_addition", True, SET_ENV, "CANN environment for torch_npu"),
    C("--tag social-stgcnn-eth ", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=0 python3 train.py --lr 0.01 --n_stgcnn 1 --n_txpcnn 5  --dataset eth --tag social-stgcnn-eth --use_lrschd --num_epochs 250 && echo \"eth Launched.\" &",
      "per-job device pinning; ignored on NPU"),
    C("--tag social-stgcnn-hotel", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=0 python3 train.py ... --dataset hotel ...", "per-job device pinning"),
    C("--tag social-stgcnn-univ", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=1 python3 train.py ... --dataset univ ...",
      "unchanged, this job lands on device 0 together with eth/hotel instead of device 1"),
    C("--tag social-stgcnn-zara1", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=1 python3 train.py ... --dataset zara1 ...", "per-job device pinning"),
    C("--tag social-stgcnn-zara2", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=2 python3 train.py ... --dataset zara2 ...", "per-job device pinning"),
])

# ----------------------------------------------------------------------------------------------
# STAR (Majiker/STAR style)
# ----------------------------------------------------------------------------------------------
E("star_trainval", "trainval.py", "explicit_replacement",
  "STAR trainval.py (--using_cuda flag, set_device, GPU default tensor type)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "unguarded when --using_cuda True (the default); raises on an NPU host"),
    C("torch.set_default_tensor_type(torch.cuda.FloatTensor)", "torch_cuda_api", "replace", True,
      "torch.set_default_device('npu:%d' % args.gpu)",
      "Ascend's API list: set_default_tensor_type does not accept torch.npu.*Tensor; use set_default_device"),
])

E("star_processor", "src/processor.py", "explicit_replacement",
  "STAR src/processor.py (net.cuda(), per-batch .cuda(), checkpoint map_location dict, getLossMask)", [
    C("self.net = self.net.cuda()", "tensor_to_device", "replace", True, "self.net = self.net.npu()", "model placement"),
    C("map_location={'cuda:0': 'cuda:' + str(self.args.gpu)}", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(self.args.model_save_path, map_location='npu:' + str(self.args.gpu))",
      "remaps storages onto a CUDA device, which does not exist on the NPU host"),
    C("inputs = tuple([i.cuda() for i in inputs])", "tensor_to_device", "replace", True,
      "inputs = tuple([i.npu() for i in inputs])", "train batch (unguarded)"),
    C("loss = torch.zeros(1).cuda()", "tensor_to_device", "replace", True, "loss = torch.zeros(1).npu()",
      "loss accumulator"),
    C("inputs = tuple([x.cuda() for x in inputs])", "tensor_to_device", "replace", True,
      "inputs = tuple([x.npu() for x in inputs])", "test batch (guarded by using_cuda, which stays True)"),
    C("lossmask = lossmask.cuda()", "tensor_to_device", "replace", True, "lossmask = lossmask.npu()",
      "mask must live with outputs"),
])

# ----------------------------------------------------------------------------------------------
# EqMotion (MediaBrain-SJTU/EqMotion style)
# ----------------------------------------------------------------------------------------------
E("eqm_main", "eth_ucy/main_eth.py", "device_branch_or_abstraction",
  "EqMotion eth_ucy/main_eth.py (--no-cuda, args.cuda, device, DataParallel guard, loc.cuda())", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpus", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpus", "--gpus selection silently ignored otherwise"),
    C("args.cuda = not args.no_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "args.cuda = not args.no_cuda and torch.npu.is_available()",
      "False on NPU: model is built for the CPU while batches go through .cuda()"),
    C('device = torch.device("cuda" if args.cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if args.cuda else "cpu")', "device handed to EqMotion"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "silent no-op on NPU; reproducibility only"),
    C("if args.cuda and torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", False,
      "if args.cuda and torch.npu.device_count() > 1:",
      "returns 0 on NPU, so the multi-device branch is just skipped"),
    C("print('Using', torch.cuda.device_count(), 'GPUs')", "torch_cuda_api", "replace", False,
      "print('Using', torch.npu.device_count(), 'NPUs')", "log only"),
    C("model = nn.DataParallel(model)", "distributed_framework", "removal", True, None,
      "nn.DataParallel is unsupported on Ascend (use DDP via torchrun, or one NPU); reached once the guard is ported"),
    C("model_ckpt = torch.load(model_path)", "tensor_to_device", "replace", True,
      "model_ckpt = torch.load(model_path, map_location='cpu')",
      "--test loads the released checkpoints, which were saved from CUDA"),
    C("loc = loc.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "loc = loc.npu(non_blocking=True)", "train batch"),
    C("loc_end = loc_end.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "loc_end = loc_end.npu(non_blocking=True)", "train batch"),
    C("num_valid = num_valid.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "num_valid = num_valid.npu(non_blocking=True)", "train batch"),
    C("=loc = loc.cuda()", "tensor_to_device", "replace", True, "loc = loc.npu()", "test batch"),
    C("=loc_end = loc_end.cuda()", "tensor_to_device", "replace", True, "loc_end = loc_end.npu()", "test batch"),
    C("=num_valid = num_valid.cuda()", "tensor_to_device", "replace", True, "num_valid = num_valid.npu()", "test batch"),
])

# ----------------------------------------------------------------------------------------------
# LED - Leapfrog Diffusion Model (MediaBrain-SJTU/LED style)
# ----------------------------------------------------------------------------------------------
E("led_main", "main_led_nba.py", "explicit_replacement",
  "LED main_led_nba.py (argparse entry, --cuda/--gpu, cuBLAS determinism env)", [
    C("os.environ.setdefault('CUBLAS_WORKSPACE_CONFIG', ':4096:8')", "env_var", "removal", False, None,
      "cuBLAS-only knob; no effect on Ascend (NPU determinism switches are not covered in the knowledge base)"),
])

E("led_trainer", "trainer/train_led_trajectory_augment_input.py", "explicit_replacement",
  "LED trainer (diffusion schedule buffers .cuda(), leapfrog initializer, p_sample loops, data_preprocess)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "main_led_nba.py never imports torch itself; the trainer is the first torch importer"),
    C("torch.cuda.manual_seed_all(rand_seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(rand_seed)", "silent no-op on NPU; reproducibility of the reported numbers only"),
    C("if torch.cuda.is_available(): torch.cuda.set_device(config.gpu)", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available(): torch.npu.set_device(config.gpu)",
      "guarded no-op on NPU; only matters for --gpu != 0 (then .npu() targets the wrong device)"),
    C("self.device = torch.device('cuda') if config.cuda else torch.device('cpu')", "device_type", "replace", False,
      "self.device = torch.device('npu') if config.cuda else torch.device('cpu')",
      "creating the device object does not fail and self.device is not read in this file"),
    C("self.traj_mean = torch.FloatTensor(self.cfg.traj_mean).cuda()", "tensor_to_device", "replace", True,
      "self.traj_mean = torch.FloatTensor(self.cfg.traj_mean).npu().unsqueeze(0).unsqueeze(0).unsqueeze(0)",
      "normalisation constant"),
    C("end=self.cfg.diffusion.beta_end).cuda()", "tensor_to_device", "replace", True,
      "start=self.cfg.diffusion.beta_start, end=self.cfg.diffusion.beta_end).npu()", "beta schedule buffer"),
    C("self.model = CoreDenoisingModel().cuda()", "tensor_to_device", "replace", True,
      "self.model = CoreDenoisingModel().npu()", "denoiser placement"),
    C("k_pred=20).cuda()", "tensor_to_device", "replace", True,
      "self.model_initializer = InitializationModel(t_h=10, d_h=6, t_f=20, d_f=2, k_pred=20).npu()",
      "leapfrog initializer placement"),
    C("self.temporal_reweight = torch.FloatTensor([21 - i for i in range(1, 21)]).cuda()", "tensor_to_device",
      "replace", True,
      "self.temporal_reweight = torch.FloatTensor([21 - i for i in range(1, 21)]).npu().unsqueeze(0).unsqueeze(0) / 10",
      "loss weights"),
    C("t = torch.tensor([t]).cuda()", "tensor_to_device", "replace", True, "t = torch.tensor([t]).npu()",
      "timestep index in p_sample"),
    C("prediction_total = torch.Tensor().cuda()", "tensor_to_device", "replace", True,
      "prediction_total = torch.Tensor().npu()", "accumulator in p_sample_loop"),
    C("traj_mask = torch.zeros(batch_size*11, batch_size*11).cuda()", "tensor_to_device", "replace", True,
      "traj_mask = torch.zeros(batch_size*11, batch_size*11).npu()", "agent mask"),
    C("initial_pos = data['pre_motion_3D'].cuda()[:, :, -1:]", "tensor_to_device", "replace", True,
      "initial_pos = data['pre_motion_3D'].npu()[:, :, -1:]", "batch transfer"),
    C("past_traj_abs = ((data['pre_motion_3D'].cuda() - self.traj_mean)", "tensor_to_device", "replace", True,
      "past_traj_abs = ((data['pre_motion_3D'].npu() - self.traj_mean)/self.traj_scale).contiguous().view(-1, 10, 2)",
      "batch transfer"),
    C("past_traj_rel = ((data['pre_motion_3D'].cuda() - initial_pos)", "tensor_to_device", "replace", True,
      "past_traj_rel = ((data['pre_motion_3D'].npu() - initial_pos)/self.traj_scale).contiguous().view(-1, 10, 2)",
      "batch transfer"),
    C("fut_traj = ((data['fut_motion_3D'].cuda() - initial_pos)", "tensor_to_device", "replace", True,
      "fut_traj = ((data['fut_motion_3D'].npu() - initial_pos)/self.traj_scale).contiguous().view(-1, 20, 2)",
      "batch transfer"),
])

E("led_layers", "models/layers.py", "explicit_replacement",
  "LED models/layers.py (social_transformer with nn.TransformerEncoder, st_encoder Conv1d+GRU, GAT, MLP)", [])

E("led_docker", "Dockerfile", "explicit_replacement",
  "LED-style Dockerfile on nvidia/cuda with cu113 wheels", [
    C("FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "CUDA base image; a CANN image provides the toolkit and the set_env.sh exports as ENV lines"),
    C("RUN pip install torch==1.11.0+cu113 torchvision==0.12.0+cu113", "import_torch_npu", "replace", True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12 \\",
      "CUDA wheels; install CPU torch + the matching torch-npu"),
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "import_torch_npu", "replace", True,
      "        --extra-index-url https://download.pytorch.org/whl/cpu", "CUDA wheel index"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
      "read only by the NVIDIA container runtime; NPUs are mapped with --device /dev/davinciN or Ascend Docker Runtime"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA container runtime only"),
    C("ENV CUDA_VISIBLE_DEVICES=0", "env_var", "replace", False, "ENV ASCEND_RT_VISIBLE_DEVICES=0",
      "ignored on NPU; the default --gpu 0 ends up on device 0 anyway, so only the restriction is lost"),
])
