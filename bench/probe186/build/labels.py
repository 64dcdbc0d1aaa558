"""Labels for probe186: meta-learning, few-shot and continual-learning code (CUDA -> Ascend NPU).

One label per upstream line a careful porter would edit. See ../README.md for the policy.
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# Recurring notes ---------------------------------------------------------------------------------
IMPORT_NOTE = ("entry script: torch_npu must be imported before any torch.npu / 'npu' device use "
               "(autoloaded since torch_npu 2.5.1, still recommended; the ported pins are 2.1.0)")
SEED_NOTE = ("torch.cuda seeding is queued lazily and never runs without CUDA: silent no-op, NPU generator "
             "not seeded by this line")
SILENT_CPU = "torch.cuda.is_available()/device_count() is False/0 on an Ascend host: silently trains on the CPU"
CUDA_CALL = "Tensor/Module .cuda() raises on a torch build without CUDA (Ascend hosts use the CPU torch wheel + torch_npu)"
CUDNN_DET = ("cuDNN flags are inert on NPU: silent no-op, determinism intent lost; "
             "torch.use_deterministic_algorithms is the NPU-side switch")
AMP_NOTE = ("torch.cuda.amp / autocast('cuda') warn and disable themselves without CUDA: runs in fp32, "
            "no error, speed/memory lost")

# ---------------------------------------------------------------------------------------------------
E("l2l_maml_miniimagenet", "examples/vision/maml_miniimagenet.py", "explicit_replacement",
  "learn2learn examples/vision/maml_miniimagenet.py (MAML wrapper, get_tasksets benchmark)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("if cuda and torch.cuda.device_count():", "torch_cuda_api", "replace", True,
        "if cuda and torch.npu.device_count():", SILENT_CPU),
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed(seed)", SEED_NOTE),
      C("device = torch.device('cuda')", "device_type", "replace", True,
        "device = torch.device('npu')", "'cuda' device: every .to(device) raises on NPU"),
  ])

E("l2l_protonet_miniimagenet", "examples/vision/protonet_miniimagenet.py", "explicit_replacement",
  "learn2learn examples/vision/protonet_miniimagenet.py (TaskDataset + NWays/KShots transforms)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("if args.gpu and torch.cuda.device_count():", "torch_cuda_api", "replace", True,
        "if args.gpu and torch.npu.device_count():", SILENT_CPU),
      C("torch.cuda.manual_seed(43)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(43)", SEED_NOTE),
      C("device = torch.device('cuda')", "device_type", "replace", True,
        "device = torch.device('npu')", "'cuda' device used for model.to(device) and every batch"),
  ])

E("higher_maml_omniglot", "examples/maml-omniglot.py", "explicit_replacement",
  "facebookresearch/higher examples/maml-omniglot.py (innerloop_ctx MAML)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("default='cuda')", "device_type", "replace", True,
        "argparser.add_argument('--device', type=str, help='device', default='npu')",
        "default device string reaches OmniglotNShot(..., device=device) and net.to(device): raises on NPU"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if torch.npu.is_available():", "guard of the CUDA seeding below; False on NPU so nothing is seeded"),
      C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(args.seed)", SEED_NOTE),
  ])

E("torchmeta_maml_train", "examples/maml/train.py", "explicit_replacement",
  "tristandeleu/pytorch-meta (torchmeta) examples/maml/train.py", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("args.device = torch.device('cuda' if args.use_cuda", "device_type", "replace", True,
        "args.device = torch.device('npu' if args.use_cuda", "'cuda' device string for model and batches"),
      C("and torch.cuda.is_available() else 'cpu')", "torch_cuda_api", "replace", True,
        "and torch.npu.is_available() else 'cpu')", SILENT_CPU),
      C("pin_memory=(args.device.type == 'cuda'))", "pin_memory", "replace", False,
        "pin_memory=(args.device.type == 'npu'))",
        "evaluation loader silently stops pinning host memory on NPU: slower H2D copies only"),
  ])

E("maml_pytorch_miniimagenet_train", "miniimagenet_train.py", "explicit_replacement",
  "dragen1860/MAML-Pytorch miniimagenet_train.py", [
      C("import  torch, os", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.manual_seed_all(222)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(222)", SEED_NOTE),
      C("device = torch.device('cuda')", "device_type", "replace", True,
        "device = torch.device('npu')", "Meta(...).to(device) and every batch .to(device) raise with 'cuda'"),
  ])

E("protonets_few_shot_model", "protonets/models/few_shot.py", "explicit_replacement",
  "jakesnell/prototypical-networks protonets/models/few_shot.py", [
      C("if xq.is_cuda:", "device_type", "replace", True, "if xq.is_npu:",
        "is_cuda is False for NPU tensors: target_inds stays on the CPU and log_p_y.gather(2, target_inds) "
        "fails with a device mismatch"),
      C("target_inds = target_inds.cuda()", "tensor_to_device", "replace", True,
        "target_inds = target_inds.npu()", CUDA_CALL),
  ])

E("protonets_train_script", "scripts/train/few_shot/train.py", "explicit_replacement",
  "jakesnell/prototypical-networks scripts/train/few_shot/train.py (torchnet engine hooks)", [
      C("torch.cuda.manual_seed(1234)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(1234)", SEED_NOTE),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", CUDA_CALL),
      C("=state['model'].cuda()", "tensor_to_device", "replace", True, "state['model'].npu()",
        CUDA_CALL + "; moves the model back after the CPU save"),
      C("state['model'].cuda()  # move back", "tensor_to_device", "replace", True,
        "state['model'].npu()  # move back to the NPU after saving on CPU", CUDA_CALL),
  ])

E("protonets_omniglot_data", "protonets/data/omniglot.py", "explicit_replacement",
  "jakesnell/prototypical-networks protonets/data/omniglot.py (episodic loader, CudaTransform user)", [])

E("protonets_data_base", "protonets/data/base.py", "explicit_replacement",
  "jakesnell/prototypical-networks protonets/data/base.py (CudaTransform, episodic samplers)", [
      C("data[k] = v.cuda()", "tensor_to_device", "replace", True, "data[k] = v.npu()",
        CUDA_CALL + "; every episode passes through this transform when --data.cuda is set"),
  ])

E("orobix_protonet_train", "src/train.py", "explicit_replacement",
  "orobix/Prototypical-Networks-for-Few-shot-Learning-PyTorch src/train.py", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.manual_seed(opt.manual_seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed(opt.manual_seed)", SEED_NOTE),
      C("=device = 'cuda:0' if torch.cuda.is_available() and opt.cuda else 'cpu'", "device_type", "replace", True,
        "device = 'npu:0' if torch.npu.is_available() and opt.cuda else 'cpu'",
        "model placement: " + SILENT_CPU),
      C("# must match init_protonet", "device_type", "replace", True,
        "device = 'npu:0' if torch.npu.is_available() and opt.cuda else 'cpu'  # must match init_protonet",
        "batch placement; if only init_protonet were ported the batches would stay on the CPU"),
      C("# eval on the training device", "device_type", "replace", True,
        "device = 'npu:0' if torch.npu.is_available() and opt.cuda else 'cpu'  # eval on the training device",
        "test batches: same as in train()"),
      C("if not options.cuda and torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if not options.cuda and torch.npu.is_available():", "warning guard only; never fires on NPU"),
      C("model.load_state_dict(torch.load(model_path))", "tensor_to_device", "replace", False,
        "model.load_state_dict(torch.load(model_path, map_location='cpu'))",
        "checkpoint written by this script's own run loads fine on the same NPU host; only a GPU-written "
        "best_model.pth fails to deserialize (CUDA storages, no CUDA)"),
      C("if torch.cuda.is_available() and not options.cuda:", "torch_cuda_api", "replace", False,
        "if torch.npu.is_available() and not options.cuda:", "warning guard only; never fires on NPU"),
  ])

E("matchingnet_builder", "experiments/OneShotBuilder.py", "explicit_replacement",
  "gitabcworld/MatchingNetworks experiments/OneShotBuilder.py", [
      C("self.isCudaAvailable = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "self.isCudaAvailable = torch.npu.is_available()",
        SILENT_CPU + " (flag name kept, every 'if self.isCudaAvailable' reads it)"),
      C("torch.cuda.manual_seed_all(0)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(0)",
        SEED_NOTE),
      C("self.matchingNet.cuda()", "tensor_to_device", "replace", True, "self.matchingNet.npu()", CUDA_CALL),
      C("acc, c_loss_value = self.matchingNet(x_support_set.cuda(), y_support_set_one_hot.cuda(),",
        "tensor_to_device", "replace", True,
        "acc, c_loss_value = self.matchingNet(x_support_set.npu(), y_support_set_one_hot.npu(),", CUDA_CALL),
      C("=x_target.cuda(), y_target.cuda())", "tensor_to_device", "replace", True,
        "x_target.npu(), y_target.npu())", CUDA_CALL),
      C("=x_support_set, y_support_set_one_hot = x_support_set.cuda(), y_support_set_one_hot.cuda()",
        "tensor_to_device", "replace", True,
        "x_support_set, y_support_set_one_hot = x_support_set.npu(), y_support_set_one_hot.npu()", CUDA_CALL),
      C("=x_target, y_target = x_target.cuda(), y_target.cuda()", "tensor_to_device", "replace", True,
        "x_target, y_target = x_target.npu(), y_target.npu()", CUDA_CALL),
      C("=x_support_set = x_support_set.cuda()", "tensor_to_device", "replace", True,
        "x_support_set = x_support_set.npu()", CUDA_CALL),
      C("=y_support_set_one_hot = y_support_set_one_hot.cuda()", "tensor_to_device", "replace", True,
        "y_support_set_one_hot = y_support_set_one_hot.npu()", CUDA_CALL),
      C("=x_target = x_target.cuda()", "tensor_to_device", "replace", True, "x_target = x_target.npu()", CUDA_CALL),
      C("=y_target = y_target.cuda()", "tensor_to_device", "replace", True, "y_target = y_target.npu()", CUDA_CALL),
  ])

E("matchingnet_model", "models/layers.py", "explicit_replacement",
  "gitabcworld/MatchingNetworks models/ (BidirectionalLSTM, DistanceNetwork, Classifier)", [
      C("self.use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "self.use_cuda = torch.npu.is_available()",
        "False on NPU: the LSTM hidden state is built on the CPU while the builder moves the module to the "
        "NPU, so self.lstm(inputs, self.hidden) fails on mixed devices"),
      C("=requires_grad=False).cuda(),", "tensor_to_device", "replace", True, "requires_grad=False).npu(),",
        CUDA_CALL + "; hidden state is not a buffer, module.npu() does not move it"),
      C("=requires_grad=False).cuda())", "tensor_to_device", "replace", True, "requires_grad=False).npu())",
        CUDA_CALL + "; cell state, same as above"),
  ])

E("mamlpp_system", "few_shot_learning_system.py", "explicit_replacement",
  "AntreasAntoniou/HowToTrainYourMAMLPytorch few_shot_learning_system.py (MAML++)", [
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        SILENT_CPU + " (self.device stays cpu)"),
      C("self.to(device=torch.cuda.current_device())", "torch_cuda_api", "replace", True,
        "self.to(device=torch.device('npu', torch.npu.current_device()))",
        "torch.cuda.current_device() initialises CUDA and raises on NPU; a bare int index would also be read "
        "as a CUDA ordinal"),
      C("self.device = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
        "self.device = torch.device('npu', torch.npu.current_device())",
        "self.device feeds every .to(device=self.device) in run_train_iter / run_validation_iter"),
      C("state = torch.load(filepath)", "tensor_to_device", "replace", False,
        "state = torch.load(filepath, map_location='cpu')",
        "resumes checkpoints of the same run (NPU-written on an NPU host: fine); only GPU-written "
        "checkpoints fail to deserialize"),
  ])

E("mamlpp_parser_utils", "utils/parser_utils.py", "explicit_replacement",
  "AntreasAntoniou/HowToTrainYourMAMLPytorch utils/parser_utils.py", [
      C("from torch import cuda", "torch_cuda_api", "replace", False, "import torch_npu",
        "import itself is harmless; replaced together with the cuda.current_device() call below"),
      C("args.use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "args.use_cuda = torch.npu.is_available()", SILENT_CPU),
      C("os.environ[\"CUDA_VISIBLE_DEVICES\"] = str(args.gpu_to_use)", "env_var", "replace", True,
        "os.environ[\"ASCEND_RT_VISIBLE_DEVICES\"] = str(args.gpu_to_use)",
        "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: --gpu_to_use silently selects nothing and "
        "every run lands on NPU 0"),
      C("device = cuda.current_device()", "torch_cuda_api", "replace", True,
        "device = torch.device('npu', torch.npu.current_device())",
        "torch.cuda.current_device() raises without CUDA"),
  ])

E("gem_model", "model/gem.py", "explicit_replacement",
  "facebookresearch/GradientEpisodicMemory model/gem.py", [
      C("self.memory_data = self.memory_data.cuda()", "tensor_to_device", "replace", True,
        "self.memory_data = self.memory_data.npu()", CUDA_CALL),
      C("self.memory_labs = self.memory_labs.cuda()", "tensor_to_device", "replace", True,
        "self.memory_labs = self.memory_labs.npu()", CUDA_CALL),
      C("self.grads = self.grads.cuda()", "tensor_to_device", "replace", True,
        "self.grads = self.grads.npu()", CUDA_CALL),
      C("indx = torch.cuda.LongTensor(self.observed_tasks[:-1]) if self.gpu", "torch_cuda_api", "replace", True,
        "indx = torch.LongTensor(self.observed_tasks[:-1]).npu() if self.gpu \\",
        "legacy torch.cuda.LongTensor type is unavailable without CUDA (raises)"),
  ])

E("gem_main", "main.py", "explicit_replacement",
  "facebookresearch/GradientEpisodicMemory main.py (continuum loop)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("xb = xb.cuda()", "tensor_to_device", "replace", True, "xb = xb.npu()", CUDA_CALL),
      C("v_x = v_x.cuda()", "tensor_to_device", "replace", True, "v_x = v_x.npu()", CUDA_CALL),
      C("v_y = v_y.cuda()", "tensor_to_device", "replace", True, "v_y = v_y.npu()", CUDA_CALL),
      C("torch.backends.cudnn.enabled = False", "torch_cuda_api", "replace", False,
        "torch.use_deterministic_algorithms(True)", CUDNN_DET),
      C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(args.seed)", SEED_NOTE),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", CUDA_CALL),
  ])

E("ewc_utils", "utils.py", "device_branch_or_abstraction",
  "moskomule/ewc.pytorch utils.py (variable() helper, EWC penalty)", [
      C("if torch.cuda.is_available() and use_cuda:", "torch_cuda_api", "replace", True,
        "if torch.npu.is_available() and use_cuda:",
        "the one device helper every tensor goes through: " + SILENT_CPU),
      C("t = t.cuda()", "tensor_to_device", "replace", True, "t = t.npu()", CUDA_CALL),
      C("if use_cuda and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if use_cuda and torch.npu.is_available():", "model placement in standard_process: " + SILENT_CPU),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", CUDA_CALL),
      C("on_gpu = torch.cuda.is_available() and use_cuda", "torch_cuda_api", "replace", True,
        "on_gpu = torch.npu.is_available() and use_cuda", "model placement in ewc_process: " + SILENT_CPU),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", CUDA_CALL),
  ])

E("avalanche_strategies", "examples/strategies_comparison.py", "explicit_replacement",
  "ContinualAI/avalanche examples (Naive / EWC / Replay / LwF with EvaluationPlugin)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
        "guard of the CUDA seeding below; False on NPU"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(seed)", SEED_NOTE),
      C("torch.backends.cudnn.deterministic = True", "torch_cuda_api", "replace", False,
        "torch.use_deterministic_algorithms(True)", CUDNN_DET),
      C("gpu_usage_metrics(args.cuda, every=0.5", "torch_cuda_api", "removal", False, None,
        "Avalanche's GPU metric polls nvidia-smi (GPUtil); on an Ascend host it finds no GPU, warns and "
        "logs nothing (unconfirmed in the knowledge base); an npu-smi based metric would replace it"),
      C("f\"cuda:{args.cuda}\"", "device_type", "replace", True, "f\"npu:{args.cuda}\"",
        "device string handed to every strategy (device=device)"),
      C("if torch.cuda.is_available() and args.cuda >= 0", "torch_cuda_api", "replace", True,
        "if torch.npu.is_available() and args.cuda >= 0", SILENT_CPU),
  ])

E("mammoth_conf", "utils/conf.py", "device_branch_or_abstraction",
  "aimagelab/mammoth utils/conf.py (get_device, set_random_seed)", [
      C("if torch.cuda.is_available() and torch.cuda.device_count() > 0 and len(avail_devices) > 0:",
        "device_type", "add_branch", True,
        "if hasattr(torch, 'npu') and torch.npu.is_available() and len(avail_devices) > 0: "
        "return torch.device(f'npu:{avail_devices[0]}')",
        "get_device() is the single device chooser of the framework; without an NPU branch it falls through "
        "to MPS/CPU on an Ascend host"),
      C("avail_devices = list(range(torch.cuda.device_count())) if torch.cuda.is_available() else []",
        "device_type", "add_branch", True,
        "avail_devices = list(range(torch.cuda.device_count())) if torch.cuda.is_available() else "
        "(list(range(torch.npu.device_count())) if hasattr(torch, 'npu') and torch.npu.is_available() else [])",
        "empty device list on NPU: the NPU branch above would never be taken"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "add_branch", False,
        "torch.npu.manual_seed_all(seed) if hasattr(torch, 'npu') else torch.cuda.manual_seed_all(seed)",
        SEED_NOTE + " (inside try/except)"),
  ])

E("mammoth_distributed", "utils/distributed.py", "explicit_replacement",
  "aimagelab/mammoth utils/distributed.py (SLURM DDP fork launcher, DataParallel wrapper)", [
      C("dist.init_process_group(\"nccl\", rank=rank, world_size=world_size)", "dist_backend", "replace", True,
        "dist.init_process_group(\"hccl\", rank=rank, world_size=world_size)",
        "NCCL backend is not built into the Ascend torch stack: init raises; HCCL is the NPU backend"),
      C("if not torch.distributed.is_available() or not torch.cuda.is_available():", "torch_cuda_api", "replace",
        True, "if not torch.distributed.is_available() or not torch.npu.is_available():",
        "raises 'DDP not available!' on every Ascend host"),
      C("model.to(rankno)", "tensor_to_device", "replace", True, "model.to(f'npu:{rankno}')",
        "a bare int device is read as a CUDA ordinal (unconfirmed for the newest torch releases)"),
      C("model.device = f\"cuda:{rankno}\"", "device_type", "replace", True, "model.device = f\"npu:{rankno}\"",
        "model.device is used for every batch .to(model.device)"),
      C("=model.to(0)", "tensor_to_device", "replace", True, "model.to('npu:0')",
        "int device 0 is read as cuda:0"),
      C("model.device = \"cuda:0\"", "device_type", "replace", True, "model.device = \"npu:0\"",
        "rank-0 device string"),
      C("return CustomDP(model, device_ids=range(torch.cuda.device_count())).to('cuda:0')",
        "unsupported_op_workaround", "replace", True,
        "return model.to('npu:0')  # nn.DataParallel is not supported on Ascend; use --distributed ddp",
        "nn.DataParallel is marked unsupported in Ascend's API list, and .to('cuda:0') raises"),
  ])

E("mammoth_training", "utils/training.py", "explicit_replacement",
  "aimagelab/mammoth utils/training.py (train / evaluate loop)", [
      C("if args.code_optimization == 0 and 'cuda' in str(args.device):", "device_type", "replace", False,
        "if args.code_optimization == 0 and 'npu' in str(args.device):",
        "per-iteration sync for timing only; skipped on NPU, no error"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", False, "torch.npu.synchronize()",
        "only reached behind the 'cuda' guard above; must change together with it"),
      C("if args.dataset_config and 'cuda' in str(args.device):", "device_type", "replace", False,
        "if args.dataset_config and 'npu' in str(args.device):", "memory field of the progress bar skipped on NPU"),
      C("bar_log['mem'] = torch.cuda.max_memory_allocated(model.device) / 1024 ** 3", "torch_cuda_api", "replace",
        False, "bar_log['mem'] = torch.npu.max_memory_allocated(model.device) / 1024 ** 3",
        "logging only; would report 0 without CUDA"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op when CUDA was never initialised"),
      C("torch.cuda.empty_cache()  # free memory", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()  # free memory held by the loading phase", "no-op when CUDA was never initialised"),
      C("if args.batch_size < torch.cuda.device_count():", "torch_cuda_api", "replace", False,
        "if args.batch_size < torch.npu.device_count():", "sanity check of the dp mode; 0 devices on NPU"),
      C("model.to('cuda:0')", "tensor_to_device", "replace", True, "model.to('npu:0')",
        "'cuda:0' raises on NPU"),
      C("args.conf_ngpus = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
        "args.conf_ngpus = torch.npu.device_count()", "bookkeeping only: logs 0 devices"),
  ])

E("metaoptnet_train", "train.py", "explicit_replacement",
  "kjunelee/MetaOptNet train.py (embedding nets + differentiable SVM head)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("encoded_indicies = torch.zeros(indices.size() + torch.Size([depth])).cuda()", "tensor_to_device",
        "replace", True, "encoded_indicies = torch.zeros(indices.size() + torch.Size([depth])).npu()", CUDA_CALL),
      C("network = ProtoNetEmbedding().cuda()", "tensor_to_device", "replace", True,
        "network = ProtoNetEmbedding().npu()", CUDA_CALL),
      C("network = R2D2Embedding().cuda()", "tensor_to_device", "replace", True,
        "network = R2D2Embedding().npu()", CUDA_CALL),
      C("dropblock_size=5).cuda()", "tensor_to_device", "replace", True,
        "network = resnet12(avg_pool=False, drop_rate=0.1, dropblock_size=5).npu()", CUDA_CALL),
      C("network = torch.nn.DataParallel(network, device_ids=[0, 1, 2, 3])", "unsupported_op_workaround",
        "removal", True, None,
        "nn.DataParallel is unsupported on Ascend (API list ✘); run single-NPU or move to DDP"),
      C("dropblock_size=2).cuda()", "tensor_to_device", "replace", True,
        "network = resnet12(avg_pool=False, drop_rate=0.1, dropblock_size=2).npu()", CUDA_CALL),
      C("cls_head = ClassificationHead(base_learner='ProtoNet').cuda()", "tensor_to_device", "replace", True,
        "cls_head = ClassificationHead(base_learner='ProtoNet').npu()", CUDA_CALL),
      C("cls_head = ClassificationHead(base_learner='Ridge').cuda()", "tensor_to_device", "replace", True,
        "cls_head = ClassificationHead(base_learner='Ridge').npu()", CUDA_CALL),
      C("cls_head = ClassificationHead(base_learner='R2D2').cuda()", "tensor_to_device", "replace", True,
        "cls_head = ClassificationHead(base_learner='R2D2').npu()", CUDA_CALL),
      C("cls_head = ClassificationHead(base_learner='SVM-CS').cuda()", "tensor_to_device", "replace", True,
        "cls_head = ClassificationHead(base_learner='SVM-CS').npu()", CUDA_CALL),
      C("=data_support, labels_support, data_query, labels_query, _, _ = [x.cuda() for x in batch]",
        "tensor_to_device", "replace", True,
        "data_support, labels_support, data_query, labels_query, _, _ = [x.npu() for x in batch]", CUDA_CALL),
      C("[x.cuda() for x in batch]  # 1 episode per batch", "tensor_to_device", "replace", True,
        "data_support, labels_support, data_query, labels_query, _, _ = [x.npu() for x in batch]  # 1 episode per batch",
        CUDA_CALL),
  ])

E("metaoptnet_heads", "models/classification_heads.py", "explicit_replacement",
  "kjunelee/MetaOptNet models/classification_heads.py (qpth SVM-CS / ridge heads)", [
      C("id_matrix = b_mat.new_ones(b_mat.size(-1)).diag().expand_as(b_mat).cuda()", "tensor_to_device",
        "replace", True, "id_matrix = b_mat.new_ones(b_mat.size(-1)).diag().expand_as(b_mat)",
        CUDA_CALL + " (new_ones already follows b_mat's device)"),
      C("encoded_indicies = torch.zeros(indices.size() + torch.Size([depth])).cuda()", "tensor_to_device",
        "replace", True, "encoded_indicies = torch.zeros(indices.size() + torch.Size([depth])).npu()", CUDA_CALL),
      C("kernel_matrix += lambda_reg * torch.eye(n_support).expand(tasks_per_batch, n_support, n_support).cuda()",
        "tensor_to_device", "replace", True,
        "kernel_matrix += lambda_reg * torch.eye(n_support).expand(tasks_per_batch, n_support, n_support).npu()",
        CUDA_CALL),
      C("dummy = Variable(torch.Tensor()).cuda()", "tensor_to_device", "replace", True,
        "dummy = Variable(torch.Tensor()).npu()", CUDA_CALL),
      C("G, e, C, h = [x.double().cuda() for x in [G, e, C, h]]", "tensor_to_device", "replace", True,
        "G, e, C, h = [x.double().npu() for x in [G, e, C, h]]",
        CUDA_CALL + "; fp64 on NPU is a precision/performance caveat (double_precision defaults to False)"),
      C("G, e, C, h = [x.float().cuda() for x in [G, e, C, h]]", "tensor_to_device", "replace", True,
        "G, e, C, h = [x.float().npu() for x in [G, e, C, h]]", CUDA_CALL),
      C("qp_sol = QPFunction(verbose=False)(G, e.detach(), C.detach(), h.detach(), dummy.detach(), dummy.detach())",
        "unsupported_op_workaround", "replace", False,
        "qp_sol = QPFunction(verbose=False)(*[t.cpu() for t in (G, e.detach(), C.detach(), h.detach(), dummy.detach(), dummy.detach())]).to(query.device)",
        "qpth's batched LU factor/solve has no native NPU kernel in the op lists: per-op CPU fallback "
        "(performance); solving the small QP on the host explicitly avoids the round trips (unconfirmed)"),
      C("id_matrix_0 = torch.eye(n_way).expand(tasks_per_batch, n_way, n_way).cuda()", "tensor_to_device",
        "replace", True, "id_matrix_0 = torch.eye(n_way).expand(tasks_per_batch, n_way, n_way).npu()", CUDA_CALL),
      C("block_kernel_matrix += 1.0 * torch.eye(n_way*n_support)", "tensor_to_device", "replace", True,
        "block_kernel_matrix += 1.0 * torch.eye(n_way*n_support).expand(tasks_per_batch, n_way*n_support, n_way*n_support).npu()",
        CUDA_CALL),
      C("id_matrix_2 = torch.eye(n_support).expand(tasks_per_batch, n_support, n_support).cuda()",
        "tensor_to_device", "replace", True,
        "id_matrix_2 = torch.eye(n_support).expand(tasks_per_batch, n_support, n_support).npu()", CUDA_CALL),
      C("A = Variable(batched_kronecker(id_matrix_2, torch.ones(tasks_per_batch, 1, n_way).cuda()))",
        "tensor_to_device", "replace", True,
        "A = Variable(batched_kronecker(id_matrix_2, torch.ones(tasks_per_batch, 1, n_way).npu()))", CUDA_CALL),
      C("G, e, C, h, A, b = [x.double().cuda() for x in [G, e, C, h, A, b]]", "tensor_to_device", "replace", True,
        "G, e, C, h, A, b = [x.double().npu() for x in [G, e, C, h, A, b]]", CUDA_CALL),
      C("G, e, C, h, A, b = [x.float().cuda() for x in [G, e, C, h, A, b]]", "tensor_to_device", "replace", True,
        "G, e, C, h, A, b = [x.float().npu() for x in [G, e, C, h, A, b]]", CUDA_CALL),
      C("qp_sol = QPFunction(verbose=False, maxIter=maxIter)(G, e.detach(), C.detach(), h.detach(), A.detach(), b.detach())",
        "unsupported_op_workaround", "replace", False,
        "qp_sol = QPFunction(verbose=False, maxIter=maxIter)(*[t.cpu() for t in (G, e.detach(), C.detach(), h.detach(), A.detach(), b.detach())]).to(query.device)",
        "as for the ridge head: LU-based interior-point solver falls back to the CPU op by op (unconfirmed)"),
  ])

E("feat_helpers", "model/trainer/helpers.py", "explicit_replacement",
  "Sha-Lab/FEAT model/trainer/helpers.py (dataloaders, prepare_model)", [
      C("num_device = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
        "num_device = torch.npu.device_count()",
        "0 on NPU; only used with --multi_gpu, which cannot run on Ascend (DataParallel)"),
      C("pretrained_dict = torch.load(args.init_weights)['params']", "tensor_to_device", "replace", True,
        "pretrained_dict = torch.load(args.init_weights, map_location='cpu')['params']",
        "the published pre-trained backbones were saved from CUDA models: deserializing CUDA storages "
        "without CUDA raises"),
      C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
        "device = torch.device('npu' if torch.npu.is_available() else 'cpu')", SILENT_CPU),
      C("model.encoder = nn.DataParallel(model.encoder, dim=0)", "unsupported_op_workaround", "removal", True, None,
        "nn.DataParallel is unsupported on Ascend (API list ✘); reached with --multi_gpu"),
  ])

E("feat_fsl_trainer", "model/trainer/fsl_trainer.py", "explicit_replacement",
  "Sha-Lab/FEAT model/trainer/fsl_trainer.py (episodic FSL trainer)", [
      C("self.use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "self.use_cuda = torch.npu.is_available()",
        "False on NPU while prepare_model put the model on the NPU: CPU batches into an NPU model fail"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "labels stay on the CPU while logits are on the NPU: cross_entropy fails"),
      C("=label = label.cuda()", "tensor_to_device", "replace", True, "label = label.npu()", CUDA_CALL),
      C("label_aux = label_aux.cuda()", "tensor_to_device", "replace", True, "label_aux = label_aux.npu()",
        CUDA_CALL),
      C("data, gt_label = [_.cuda() for _ in batch]", "tensor_to_device", "replace", True,
        "data, gt_label = [_.npu() for _ in batch]", CUDA_CALL),
      C("label = label.type(torch.cuda.LongTensor if self.use_cuda else torch.LongTensor)", "torch_cuda_api",
        "replace", True, "label = label.long().npu() if self.use_cuda else label.long()",
        "legacy torch.cuda.LongTensor type is unavailable without CUDA (raises)"),
      C("data, _ = [_.cuda() for _ in batch]", "tensor_to_device", "replace", True,
        "data, _ = [_.npu() for _ in batch]", CUDA_CALL),
      C("torch.load(osp.join(self.args.save_path, 'max_acc.pth'))", "tensor_to_device", "replace", False,
        "self.model.load_state_dict(torch.load(osp.join(self.args.save_path, 'max_acc.pth'), map_location='cpu')['params'])",
        "checkpoint of the same run: fine when written on the NPU host; only GPU-written files fail"),
      C("label = label.cuda() if self.use_cuda else label", "tensor_to_device", "replace", True,
        "label = label.npu() if self.use_cuda else label", CUDA_CALL),
      C("data = batch[0].cuda() if self.use_cuda else batch[0]", "tensor_to_device", "replace", True,
        "data = batch[0].npu() if self.use_cuda else batch[0]", CUDA_CALL),
  ])

E("pmf_engine", "engine.py", "explicit_replacement",
  "hushell/pmf_cvpr22 engine.py (DeiT-style episodic train/eval loop with AMP)", [
      C("if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8:", "device_capability_check",
        "replace", False, "if torch.npu.is_available():",
        "capability probe for Ampere TF32; skipped on NPU (no error). The allow_tf32 flags below are accepted "
        "by torch_npu (fp32 only); an NPU port would gate on NPU availability instead of an SM version"),
      C("with torch.cuda.amp.autocast(fp16):", "amp", "replace", False,
        "with torch.autocast(device_type='npu', dtype=torch.float16, enabled=fp16):", AMP_NOTE),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "torch.cuda.synchronize() initialises CUDA and raises on every training step"),
      C("with torch.cuda.amp.autocast():", "amp", "replace", False,
        "with torch.autocast(device_type='npu', dtype=torch.float16):", AMP_NOTE),
      C("with torch.autocast(device_type='cuda', dtype=torch.float16, enabled=fp16):", "amp", "replace", False,
        "with torch.autocast(device_type='npu', dtype=torch.float16, enabled=fp16):", AMP_NOTE),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op when CUDA was never initialised"),
  ])

E("pmf_deit_util", "utils/deit_util.py", "explicit_replacement",
  "hushell/pmf_cvpr22 utils/deit_util.py (DeiT misc: MetricLogger, NativeScaler, init_distributed_mode)", [
      C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "device_type", "replace",
        True, "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
        "raises in every distributed run (metric sync); fp64 all_reduce over HCCL not confirmed, float32 is "
        "the safe fallback"),
      C("show_mem = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
        "show_mem = torch.npu.is_available()", "log column only: no memory figure on NPU"),
      C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
        "memory=torch.npu.max_memory_allocated() / MB))", "logging only; guarded by show_mem"),
      C("self._scaler = torch.cuda.amp.GradScaler()", "amp", "replace", False,
        "self._scaler = torch.npu.amp.GradScaler()", AMP_NOTE + " (scaler disabled, scale() returns the loss)"),
      C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "args.gpu = args.rank % torch.npu.device_count()", "device_count() is 0 on NPU: ZeroDivisionError under SLURM"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
        "raises without CUDA; HCCL needs the per-rank NPU set"),
      C("args.dist_backend = 'nccl'", "dist_backend", "replace", True, "args.dist_backend = 'hccl'",
        "feeds init_process_group(backend=args.dist_backend): NCCL is not available on Ascend"),
  ])

# Non-Python files -----------------------------------------------------------------------------------
E("fewshot_requirements", "requirements.txt", "explicit_replacement",
  "requirements.txt of a learn2learn/higher/torchmeta/avalanche research repo (CUDA 11.7 wheels)", [
      C("--extra-index-url https://download.pytorch.org/whl/cu117", "torch_cuda_api", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "x86 Ascend hosts take the CPU torch wheel from this index (aarch64 uses plain PyPI); the cu117 index "
        "alone does not break the install once torch is re-pinned"),
      C("torch==1.13.1+cu117", "torch_cuda_api", "replace", True, "torch==2.1.0",
        "+cu117 local version has no aarch64 wheel and no torch_npu release pairs with torch 1.13"),
      C("=torchvision>=0.14", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
        "torch_npu pin matching torch 2.1.0 (CANN 8.1.RC1 in the compatibility table)"),
      C("pynvml==11.5.0", "torch_cuda_api", "removal", False, None,
        "NVML has no Ascend counterpart; only imported in CUDA-only code paths"),
      C("gputil==1.4.0", "torch_cuda_api", "removal", False, None,
        "nvidia-smi wrapper used by Avalanche's GPU metric; reports no GPU on Ascend"),
      C("xformers==0.0.16", "attention_kernel", "removal", True, None,
        "no NPU backend; 0.0.16 also pins torch==1.13.1, which conflicts with the torch 2.1.0 pin"),
  ])

E("mammoth_environment", "environment.yml", "explicit_replacement",
  "conda environment.yml of a mammoth/avalanche continual-learning repo (pytorch-cuda 11.8)", [
      C("- nvidia", "torch_cuda_api", "removal", False, None, "channel only serves CUDA runtime packages"),
      C("- pytorch=2.0.1", "torch_cuda_api", "replace", True, "- pytorch=2.1.0",
        "torch must match the torch_npu release (no torch_npu for 2.0.1 in the active matrix)"),
      C("- torchvision=0.15.2", "torch_cuda_api", "replace", True, "- torchvision=0.16.0",
        "0.15.2 pins pytorch 2.0.1"),
      C("- pytorch-cuda=11.8", "torch_cuda_api", "removal", True, None,
        "pulls the CUDA runtime / selects CUDA builds; not solvable on aarch64 Ascend hosts"),
      C("- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post12",
        "torch_npu comes from PyPI; pairs with torch 2.1.0"),
      C("- gpustat", "torch_cuda_api", "removal", False, None,
        "NVML-based GPU monitor (pulls nvidia-ml-py); only used by the CUDA memory readout"),
  ])

E("fewshot_dockerfile", "Dockerfile", "explicit_replacement",
  "Dockerfile of a few-shot benchmark repo on the pytorch/pytorch CUDA image", [
      C("FROM pytorch/pytorch:1.13.1-cuda11.6-cudnn8-devel", "torch_cuda_api", "replace", True,
        "FROM ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
        "CUDA base image: no CANN toolkit, torch 1.13.1 has no torch_npu (image tag illustrative)"),
      C("ENV TORCH_CUDA_ARCH_LIST=", "env_var", "removal", False, None,
        "only read by CUDA extension builds; none in this repo"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
        "read by the NVIDIA container runtime; the Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES "
        "(usually passed at docker run)"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "NVIDIA container runtime only"),
      C("=COPY requirements.txt .", "import_torch_npu", "npu_only_addition", True,
        "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12",
        "the CANN base image carries no torch; the grep below strips torch from requirements.txt"),
      C("torch.version.cuda, torch.backends.cudnn.version()", "torch_cuda_api", "replace", False,
        "RUN python -c \"import torch, torch_npu; print(torch.__version__, torch_npu.__version__)\"",
        "prints None/None on the NPU image instead of failing: the sanity check silently checks nothing"),
  ])

E("pmf_ddp_launcher", "scripts/meta_train_ddp.sh", "explicit_replacement",
  "hushell/pmf_cvpr22 scripts (torch.distributed.launch meta-training on 8 GPUs)", [
      C("=#!/bin/bash", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment (library paths) must be loaded before torch_npu can import"),
      C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
        "ignored by the Ascend runtime: a restricted device list silently maps onto NPUs 0..n-1"),
      C("NGPUS=$(echo $CUDA_VISIBLE_DEVICES | tr ',' '\\n' | wc -l)", "env_var", "replace", True,
        "NGPUS=$(echo $ASCEND_RT_VISIBLE_DEVICES | tr ',' '\\n' | wc -l)",
        "process count derives from the visible-device variable; must follow the rename above"),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
        "NCCL variables are ignored by HCCL; log-level mapping unconfirmed"),
      C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None,
        "no HCCL equivalent; silently ignored"),
      C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
        "HCCL_SOCKET_IFNAME selects the host NIC for HCCL's root-info exchange; the NCCL one is ignored"),
      C("nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv", "torch_cuda_api", "replace",
        False, "npu-smi info > $OUTPUT/npus.txt",
        "nvidia-smi is absent: the command fails but the script continues (no set -e)"),
  ])

E("maml_hydra_config", "configs/experiment/maml_miniimagenet_5w5s.yaml", "explicit_replacement",
  "Hydra experiment config of a MAML research repo (trainer / meta / distributed groups)", [
      C("device: cuda", "device_type", "replace", True, "device: npu",
        "consumed as torch.device(cfg.trainer.device) and autocast device type: raises on NPU"),
      C("backend: nccl", "dist_backend", "replace", True, "backend: hccl",
        "passed to init_process_group when distributed.enabled is set"),
  ])
