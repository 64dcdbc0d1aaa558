"""Labels for probe352 (sequential / general recommendation frameworks, CUDA -> Ascend NPU).

Each C(...) names one upstream line by a substring (or "=exact stripped text") and says what a careful
porter would do with it. See ../README.md ("How the labels were chosen") for the policy.
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# Reused notes -----------------------------------------------------------------------------------------------
IMPORT_NOTE = ("torch_npu must be imported before torch.npu / 'npu' devices are used (mandatory before torch_npu "
               "2.5.1; still recommended after, knowledge §1.1)")
SEED_NOTE = ("torch.cuda.manual_seed* is a lazy no-op without CUDA; torch.manual_seed already seeds the NPU "
             "generator through the PrivateUse1 hook (that hook is unconfirmed in knowledge) -> reproducibility only")
SPMM_NOTE = ("torch.sparse.mm on a sparse COO adjacency: no sparse mm/addmm kernel for NPU in npu_native_ops lists and "
             "knowledge §3.8 says sparse ops without a kernel raise (no CPU fallback); rewrite as gather + index_add_ "
             "SpMM over (row, col, val) dense NPU tensors")
LOAD_NOTE = ("checkpoint may come from an earlier GPU run; torch.load of CUDA-saved tensors on a host without CUDA "
             "raises 'Attempting to deserialize object on a CUDA device' -> map_location needed")
PACK_NOTE = ("torch.nn.utils.rnn.pack_padded_sequence is ✘ for A2/A3 in Ascend's 2.7.1 API table, yet "
             "_pack_padded_sequence has an NPU kernel in the op lists -- conflicting, unconfirmed; a porter would run "
             "the GRU on the padded batch and gather the last valid state instead")
EMPTY_CACHE_NOTE = "torch.cuda.empty_cache is a silent no-op without CUDA (memory only, not correctness)"


# ---------------------------------------------------------------------------------------------------------------
# RecBole
# ---------------------------------------------------------------------------------------------------------------
E("rb_quickstart", "recbole/quick_start/quick_start.py", "explicit_replacement",
  "RecBole recbole/quick_start/quick_start.py (run / run_recbole / run_recboles / load_data_and_model)", [
    C("import torch.distributed as dist", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401", IMPORT_NOTE + "; mp.spawn workers enter here"),
    C("torch.cuda.set_device(rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(rank)", "raises without CUDA (lazy init)"),
    C('backend="nccl",', "dist_backend", "replace", True,
      'backend="hccl",', "torch built for NPU has no NCCL; HCCL is the Ascend collective backend"),
    C("checkpoint = torch.load(model_file)", "tensor_to_device", "replace", True,
      'checkpoint = torch.load(model_file, map_location="cpu")', LOAD_NOTE),
    C('config = checkpoint["config"]', "device_type", "npu_only_addition", True,
      'config["device"] = torch.device("npu") if torch.npu.is_available() else torch.device("cpu")',
      "the pickled Config carries torch.device('cuda') from the GPU run; .to(config['device']) two lines later "
      "would fail"),
  ])

E("rb_configurator", "recbole/config/configurator.py", "device_branch_or_abstraction",
  "RecBole recbole/config/configurator.py (Config._init_device with gpu_id / use_gpu)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = gpu_id', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = gpu_id',
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; gpu_id '2,3' would silently run on NPU 0,1"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401", IMPORT_NOTE),
    C("or not torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "or not torch.npu.is_available()", "False on an NPU host -> silently trains on CPU"),
    C('else torch.device("cuda")', "device_type", "replace", True,
      'else torch.device("npu")', "'cuda' device string"),
    C('"cuda", self.final_config_dict["local_rank"]', "device_type", "replace", True,
      '"npu", self.final_config_dict["local_rank"]', "'cuda' device for DDP workers"),
  ])

E("rb_trainer", "recbole/trainer/trainer.py", "explicit_replacement",
  "RecBole recbole/trainer/trainer.py (Trainer with AMP, GradScaler, DDP, GPU RAM progress bar)", [
    C("import torch.cuda.amp as amp", "amp", "replace", True,
      "from torch_npu.npu import amp",
      "amp.GradScaler from torch.cuda.amp disables itself without CUDA (warning) -> fp16 autocast on NPU "
      "runs without loss scaling"),
    C('self.gpu_available = torch.cuda.is_available() and config["use_gpu"]', "torch_cuda_api", "replace", False,
      'self.gpu_available = torch.npu.is_available() and config["use_gpu"]',
      "only gates the 'GPU RAM' postfix of the progress bar -> display only"),
    C('self.enable_scaler = torch.cuda.is_available() and config["enable_scaler"]', "amp", "replace", True,
      'self.enable_scaler = torch.npu.is_available() and config["enable_scaler"]',
      "False on NPU -> GradScaler disabled while autocast(device_type=self.device.type) is active on npu "
      "(fp16 gradients unscaled)"),
  ])

E("rb_utils", "recbole/utils/utils.py", "explicit_replacement",
  "RecBole recbole/utils/utils.py (init_seed, get_gpu_usage, get_environment)", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(seed)", SEED_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)", SEED_NOTE),
    C("reserved = torch.cuda.max_memory_reserved(device) / 1024**3", "torch_cuda_api", "replace", False,
      "reserved = torch.npu.max_memory_reserved(device) / 1024**3",
      "CUDA allocator stats are an empty dict before CUDA init -> silently 0; progress-bar display only"),
    C("total = torch.cuda.get_device_properties(device).total_memory / 1024**3", "torch_cuda_api", "replace", True,
      "total = torch.npu.get_device_properties(device).total_memory / 1024**3",
      "raises without CUDA (lazy init) as soon as get_gpu_usage runs with an npu device, i.e. once the "
      "trainer's gpu_available guard is ported; NPU properties do expose total_memory (knowledge §2.8)"),
    C("if torch.cuda.is_available() and config[\"use_gpu\"]", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available() and config[\"use_gpu\"]",
      "environment table only: prints '0.0 / 0.0' for the accelerator row"),
  ])

E("rb_ddp_sh", "scripts/run_ddp.sh", "explicit_replacement",
  "RecBole-based multi-GPU / multi-node launcher script around run_recbole.py --nproc/--world_size", [
    C("=set -euo pipefail", "import_torch_npu", "npu_only_addition", True,
      "set +u; source /usr/local/Ascend/ascend-toolkit/set_env.sh; set -u",
      "CANN environment must be sourced; set_env.sh fails under 'set -u' (knowledge, ascend-host-formats) so "
      "wrap it"),
    C("export CUDA_VISIBLE_DEVICES=${GPUS}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPUS}", "ignored by the Ascend runtime"),
    C("export NCCL_DEBUG=${NCCL_DEBUG:-WARN}", "env_var", "replace", False,
      "export ASCEND_GLOBAL_LOG_LEVEL=${ASCEND_GLOBAL_LOG_LEVEL:-3}", "NCCL_* ignored by HCCL; logging only"),
    C("export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}", "env_var", "replace", False,
      "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
      "HCCL has its own NIC selection (HCCL_SOCKET_IFNAME / HCCL_IF_IP); only matters multi-node"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None,
      "NCCL-only tuning knob, no HCCL equivalent; harmless leftover"),
    C("export NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None, "NVLink P2P level, meaningless on Ascend"),
    C("export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512", "env_var", "replace", False,
      "export PYTORCH_NPU_ALLOC_CONF=max_split_size_mb:512",
      "caching-allocator tuning for the NPU allocator (PYTORCH_NPU_ALLOC_CONF, knowledge §1.6 note); memory only"),
    C("nvidia-smi --query-gpu=", "torch_cuda_api", "replace", True,
      'npu-smi info | tee "${LOG_DIR}/npus-${STAMP}.txt"',
      "nvidia-smi is absent on an NPU host and the script runs with set -e -o pipefail -> aborts"),
  ])

# ---------------------------------------------------------------------------------------------------------------
# SASRec.pytorch
# ---------------------------------------------------------------------------------------------------------------
E("sasrec_main", "main.py", "explicit_replacement",
  "pmixer/SASRec.pytorch main.py (argparse --device, .to(args.device))", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("parser.add_argument('--device', default='cuda', type=str)", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu', type=str)", "default 'cuda' device string"),
  ])

E("sasrec_model", "model.py", "explicit_replacement",
  "pmixer/SASRec.pytorch model.py (fully device-agnostic: everything goes through self.dev)", [])

# ---------------------------------------------------------------------------------------------------------------
# BERT4Rec-pytorch
# ---------------------------------------------------------------------------------------------------------------
E("b4r_options", "options.py", "explicit_replacement",
  "jaywonchung/BERT4Rec-VAE-Pytorch options.py (argparse with --device / --num_gpu / --device_idx)", [
    C("parser.add_argument('--device', type=str, default='cpu', choices=['cpu', 'cuda'])", "device_type", "replace",
      True, "parser.add_argument('--device', type=str, default='cpu', choices=['cpu', 'cuda', 'npu'])",
      "argparse rejects --device npu"),
  ])

E("b4r_templates", "templates.py", "explicit_replacement",
  "jaywonchung/BERT4Rec-VAE-Pytorch templates.py (set_template hard-codes args.device = 'cuda')", [
    C("=args.device = 'cuda'", "device_type", "replace", True, "args.device = 'npu'",
      "train_bert template forces the 'cuda' device"),
    C("args.device = 'cuda'  # DataParallel over device_idx", "device_type", "replace", True,
      "args.device = 'npu'  # one process per NPU (DataParallel is unsupported)",
      "'cuda' device string (branch unreachable today, but edited with the others)"),
    C("args.device = 'cuda:0'", "device_type", "replace", True, "args.device = 'npu:0'", "'cuda:0' device string"),
    C("args.device = 'cuda'  # the VAE fits on a single card", "device_type", "replace", True,
      "args.device = 'npu'  # the VAE fits on a single card", "'cuda' device string"),
    C('args.device = "cuda"', "device_type", "replace", True, 'args.device = "npu"', "'cuda' device string"),
  ])

E("b4r_utils", "utils.py", "explicit_replacement",
  "jaywonchung/BERT4Rec-VAE-Pytorch utils.py (setup_train, set_up_gpu, fix_random_seed_as)", [
    C("torch.cuda.manual_seed_all(random_seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(random_seed)", SEED_NOTE),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.device_idx", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.device_idx",
      "device mask ignored on Ascend -> wrong card chosen silently"),
    C("chk_dict = torch.load(os.path.abspath(path))", "tensor_to_device", "replace", True,
      "chk_dict = torch.load(os.path.abspath(path), map_location='cpu')", LOAD_NOTE),
    C("chk_dict = torch.load(os.path.join(os.path.abspath(args.resume_training)", "tensor_to_device", "replace", True,
      "chk_dict = torch.load(os.path.join(os.path.abspath(args.resume_training), 'models/checkpoint-recent.pth'), "
      "map_location='cpu')", LOAD_NOTE),
    C("names = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]", "torch_cuda_api", "replace",
      False, "names = [torch.npu.get_device_name(i) for i in range(torch.npu.device_count())]",
      "device_count() is 0 without CUDA -> empty list, log line only"),
  ])

E("b4r_trainer_base", "trainers/base.py", "explicit_replacement",
  "jaywonchung/BERT4Rec-VAE-Pytorch trainers/base.py (AbstractTrainer, nn.DataParallel when num_gpu > 1), "
  "with an fp16 flag added", [
    C("self.model = nn.DataParallel(self.model)", "distributed_framework", "replace", True,
      "self.model = nn.parallel.DistributedDataParallel(self.model, device_ids=[torch.npu.current_device()])",
      "torch.nn.DataParallel is ✘ on Ascend (2.7.1 API table, msFmkTransplt limitation); needs a torchrun/DDP "
      "launch instead"),
    C("self.scaler = torch.cuda.amp.GradScaler(enabled=self.use_amp)", "amp", "replace", True,
      "self.scaler = torch.npu.amp.GradScaler(enabled=self.use_amp)",
      "with --fp16 the CUDA scaler disables itself on an NPU host"),
    C("with torch.cuda.amp.autocast(enabled=self.use_amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=self.use_amp):",
      "CUDA autocast is disabled (warning) without CUDA -> --fp16 silently runs fp32"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "reached whenever device != 'cpu'; raises without CUDA"),
  ])

E("b4r_bert_modules", "models/bert_modules/bert.py", "explicit_replacement",
  "jaywonchung/BERT4Rec-VAE-Pytorch models/bert_modules (GELU, attention, BERT embedding) folded into one file", [
    C("import torch.nn.functional as F", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "only needed for the optional fused GELU below"),
    C("return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * torch.pow(x, 3))))",
      "npu_fused_op", "replace", False, "return torch_npu.npu_gelu(x, approximate='tanh')",
      "hand-written tanh-GELU = 6 elementwise kernels; npu_gelu(approximate='tanh') is one (performance only)"),
  ])

# ---------------------------------------------------------------------------------------------------------------
# DeepCTR-Torch
# ---------------------------------------------------------------------------------------------------------------
E("dctr_basemodel", "deepctr_torch/models/basemodel.py", "explicit_replacement",
  "shenweichen/DeepCTR-Torch deepctr_torch/models/basemodel.py (device='cpu', gpus=None -> nn.DataParallel in fit)", [
    C("model = torch.nn.DataParallel(model, device_ids=self.gpus)", "distributed_framework", "replace", True,
      "model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[self.gpus[0]])",
      "torch.nn.DataParallel is ✘ on Ascend; the gpus=[...] path must become DDP (one process per NPU)"),
  ])

E("dctr_run_multigpu", "examples/run_classification_criteo_multi_gpu.py", "explicit_replacement",
  "shenweichen/DeepCTR-Torch examples/run_classification_criteo_multi_gpu.py (device='cuda:0', gpus=[0, 1])", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("if use_cuda and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if use_cuda and torch.npu.is_available():", "False on NPU -> silently CPU"),
    C("device = 'cuda:0'", "device_type", "replace", True, "device = 'npu:0'", "'cuda:0' device string"),
    C("gpus = [0, 1] if torch.cuda.device_count() > 1 else None", "distributed_framework", "replace", False,
      "gpus = None  # nn.DataParallel is unsupported on Ascend; launch with torchrun for multi-NPU",
      "unchanged it yields None on NPU (single card) -- which is the only working choice; porting it to "
      "torch.npu.device_count() would route into DataParallel (✘)"),
  ])

E("dctr_dien", "deepctr_torch/models/dien.py", "explicit_replacement",
  "shenweichen/DeepCTR-Torch deepctr_torch/models/dien.py (InterestExtractor / InterestEvolving with packed GRUs)", [
    C("packed_keys = pack_padded_sequence(masked_keys", "unsupported_op_workaround", "replace", False,
      "interests, _ = self.gru(masked_keys)  # padded GRU; pack_padded_sequence is ✘ on NPU", PACK_NOTE),
    C("packed_keys = pack_padded_sequence(keys, lengths", "unsupported_op_workaround", "replace", False,
      "interests, _ = self.interest_evolution(keys)  # padded GRU, masked below", PACK_NOTE),
    C("packed_interests = pack_padded_sequence(interests", "unsupported_op_workaround", "replace", False,
      "all_states, _ = self.interest_evolution(interests)  # then gather state at keys_length - 1", PACK_NOTE),
    C("packed_interests = pack_padded_sequence(keys", "unsupported_op_workaround", "replace", False,
      "packed_interests = keys  # DynamicGRU fed padded input + length mask", PACK_NOTE),
    C("packed_scores = pack_padded_sequence(att_scores", "unsupported_op_workaround", "replace", False,
      "packed_scores = att_scores * mask  # zero scores past keys_length", PACK_NOTE),
  ])

# ---------------------------------------------------------------------------------------------------------------
# Stand-alone DIN / DIEN port
# ---------------------------------------------------------------------------------------------------------------
E("din_train", "train.py", "explicit_replacement",
  "stand-alone DIN/DIEN PyTorch ports for Amazon Electronics/Books (train.py with --gpu, .cuda(), cudnn.benchmark)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "guards the seed call below only"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      SEED_NOTE),
    C("label = [x.cuda(non_blocking=True) for x in batch]", "tensor_to_device", "replace", True,
      "uid, iid, cid, hist_iid, hist_cid, hist_len, label = [x.to(device, non_blocking=True) for x in batch]",
      ".cuda() raises without CUDA"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
      "--benchmark path; raises without CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "--benchmark path; raises without CUDA"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "raises without CUDA"),
    C("device = torch.device('cuda:{}'.format(args.gpu))", "device_type", "replace", True,
      "device = torch.device('npu:{}'.format(args.gpu))", "'cuda:N' device"),
    C("pin_memory=True, drop_last=True)", "pin_memory", "replace", False,
      "pin_memory=True, pin_memory_device='npu', drop_last=True)",
      "without pin_memory_device the DataLoader only pins when torch.cuda.is_available() -> silently unpinned "
      "(H2D overlap lost, performance only)"),
    C("num_workers=args.num_workers, collate_fn=collate_fn, pin_memory=True)", "pin_memory", "replace", False,
      "num_workers=args.num_workers, collate_fn=collate_fn, pin_memory=True, pin_memory_device='npu')",
      "same as the train loader; performance only"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.to(device)",
      "Module.cuda() raises without CUDA"),
    C("label = [t.cuda(non_blocking=True) for t in batch]", "tensor_to_device", "replace", True,
      "uid, iid, cid, hist_iid, hist_cid, hist_len, label = [t.to(device, non_blocking=True) for t in batch]",
      ".cuda() raises without CUDA"),
    C("torch.cuda.max_memory_allocated() / 2 ** 20))", "torch_cuda_api", "replace", False,
      "torch.npu.max_memory_allocated() / 2 ** 20))", "CUDA allocator stats read 0 without CUDA; log only"),
  ])

E("din_model", "model/din.py", "explicit_replacement",
  "stand-alone DIN PyTorch port model/din.py (Dice with a hard-coded .cuda() alpha, attention mask via .cuda())", [
    C("self.alpha = torch.zeros((num_features,)).cuda()", "tensor_to_device", "replace", True,
      "self.alpha = torch.zeros((num_features,)).npu()",
      ".cuda() in __init__ raises on an NPU host (a register_buffer would be the cleaner port)"),
    C("self.alpha = torch.zeros((num_features, 1)).cuda()", "tensor_to_device", "replace", True,
      "self.alpha = torch.zeros((num_features, 1)).npu()", "same as above, 3-D Dice"),
    C("mask = torch.arange(max_len).cuda().unsqueeze(0) < user_behavior_length", "tensor_to_device", "replace", True,
      "mask = torch.arange(max_len, device=user_behavior.device).unsqueeze(0) < user_behavior_length",
      ".cuda() in forward raises on an NPU host"),
  ])

# ---------------------------------------------------------------------------------------------------------------
# LightGCN-PyTorch
# ---------------------------------------------------------------------------------------------------------------
E("lgcn_world", "code/world.py", "explicit_replacement",
  "gusye1234/LightGCN-PyTorch code/world.py (global GPU flag and device)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_NOTE + "; world.py is the first module main.py imports"),
    C("GPU = torch.cuda.is_available()", "torch_cuda_api", "replace", True, "GPU = torch.npu.is_available()",
      "False on NPU -> whole run silently on CPU"),
    C("device = torch.device('cuda' if GPU else \"cpu\")", "device_type", "replace", True,
      "device = torch.device('npu' if GPU else \"cpu\")", "'cuda' device string"),
  ])

E("lgcn_model", "code/model.py", "kernel_rewrite",
  "gusye1234/LightGCN-PyTorch code/model.py (LightGCN.computer with torch.sparse.mm propagation)", [
    C("temp_emb.append(torch.sparse.mm(g_droped[f], all_emb))", "unsupported_op_workaround", "replace", True,
      "temp_emb.append(spmm_index_add(g_droped[f], all_emb))", SPMM_NOTE),
    C("all_emb = torch.sparse.mm(g_droped, all_emb)", "unsupported_op_workaround", "replace", True,
      "all_emb = spmm_index_add(g_droped, all_emb)", SPMM_NOTE),
  ])

E("lgcn_dataloader", "code/dataloader.py", "explicit_replacement",
  "gusye1234/LightGCN-PyTorch code/dataloader.py (LastFM / Loader building the normalised sparse adjacency)", [
    C("self.Graph = self.Graph.coalesce().cuda()", "tensor_to_device", "replace", True,
      "self.Graph = self.Graph.coalesce().to(world.device)", ".cuda() raises on an NPU host (LastFM path)"),
  ])

E("lgcn_procedure", "code/Procedure.py", "explicit_replacement",
  "gusye1234/LightGCN-PyTorch code/Procedure.py (BPR_train_original, Test) plus a small CUDA-event profiler", [
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
    C("(peak mem {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB)", "torch_cuda_api", "replace", False,
      "f\"(peak mem {torch.npu.max_memory_allocated() / 2**30:.2f} GiB)\")", "reads 0 without CUDA; log only"),
  ])

E("lgcn_env", "environment.yml", "explicit_replacement",
  "LightGCN / NGCF style conda environment.yml (pytorch + pytorch-cuda from the pytorch/nvidia channels)", [
    C("- nvidia", "torch_cuda_api", "removal", False, None, "channel only serves CUDA runtime packages"),
    C("- pytorch=1.13.1", "torch_cuda_api", "replace", True, "- pytorch=2.1.0",
      "torch_npu has no build for torch 1.13.x (compatibility matrix, knowledge §1.2/1.3); 2.1.0 pairs with "
      "torch-npu 2.1.0.postN"),
    C("- pytorch-cuda=11.7", "torch_cuda_api", "replace", True, "- cpuonly",
      "pulls the CUDA build of pytorch and the CUDA 11.7 runtime; torch_npu needs the CPU build "
      "(the pytorch channel's cpuonly mutex selects it)"),
    C("- setproctitle", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post12",
      "the torch-npu pin (must match torch 2.1.0)"),
  ])

# ---------------------------------------------------------------------------------------------------------------
# NGCF-PyTorch
# ---------------------------------------------------------------------------------------------------------------
E("ngcf_model", "NGCF/NGCF.py", "kernel_rewrite",
  "huangtinglin/NGCF-PyTorch NGCF/NGCF.py (sparse_dropout and torch.sparse.mm message passing)", [
    C("side_embeddings = torch.sparse.mm(A_hat, ego_embeddings)", "unsupported_op_workaround", "replace", True,
      "side_embeddings = spmm_index_add(A_hat, ego_embeddings)", SPMM_NOTE),
  ])

E("ngcf_main", "NGCF/main.py", "explicit_replacement",
  "huangtinglin/NGCF-PyTorch NGCF/main.py (args.device = 'cuda:' + gpu_id, empty_cache after test)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("args.device = torch.device('cuda:' + str(args.gpu_id))", "device_type", "replace", True,
      "args.device = torch.device('npu:' + str(args.gpu_id))", "'cuda:N' device (unconditional)"),
    C("state = torch.load(args.weights_path + args.pretrained_file)", "tensor_to_device", "replace", True,
      "state = torch.load(args.weights_path + args.pretrained_file, map_location='cpu')", LOAD_NOTE),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
  ])

# ---------------------------------------------------------------------------------------------------------------
# ReChorus
# ---------------------------------------------------------------------------------------------------------------
E("rechorus_main", "src/main.py", "explicit_replacement",
  "THUwangcy/ReChorus src/main.py (--gpu sets CUDA_VISIBLE_DEVICES, args.device chosen from torch.cuda)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu', "device mask ignored by the Ascend runtime"),
    C("if args.gpu != '' and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if args.gpu != '' and torch.npu.is_available():", "False on NPU -> silently CPU"),
    C("args.device = torch.device('cuda')", "device_type", "replace", True, "args.device = torch.device('npu')",
      "'cuda' device string"),
  ])

E("rechorus_runner", "src/helpers/BaseRunner.py", "explicit_replacement",
  "THUwangcy/ReChorus src/helpers/BaseRunner.py (train/fit/predict loop, gc + empty_cache per epoch)", [
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
  ])

# ---------------------------------------------------------------------------------------------------------------
# Modern torchrun-based sequential-rec project (SASRec / gSASRec / BERT4Rec)
# ---------------------------------------------------------------------------------------------------------------
E("seqrec_train", "train_ddp.py", "device_branch_or_abstraction",
  "torchrun + OmegaConf SASRec/gSASRec/BERT4Rec trainer (bf16 autocast, SDPA backend pinning, fused AdamW, "
  "torch.compile, faiss eval) as in recent reproducibility repos", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      SEED_NOTE),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "raises without CUDA"),
    C('if dist.get_backend() == "nccl":', "dist_backend", "replace", False, 'if dist.get_backend() == "hccl":',
      "backend string comparisons are not rewritten by anything (knowledge §2.4); unchanged the optional sync is "
      "just skipped"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", False, "torch.npu.synchronize()",
      "only reached once the comparison above is ported; the sync itself is a safety measure"),
    C('if cfg.train.amp_dtype == "bf16" and torch.cuda.is_bf16_supported():', "device_capability_check", "replace",
      True, 'if cfg.train.amp_dtype == "bf16" and torch.npu.is_bf16_supported():',
      "CUDA query on an NPU host: False at best, then falls through to the capability query below"),
    C("major, _ = torch.cuda.get_device_capability()", "device_capability_check", "replace", True,
      "major = 8  # no CUDA compute capability on Ascend; A2/A3 have fp16 and bf16",
      "raises without CUDA; the NPU version returns a configurable placeholder only (knowledge §2.8)"),
    C("return torch.backends.cuda.sdp_kernel(enable_flash=True", "attention_kernel", "replace", False,
      "return contextlib.nullcontext()  # NPU SDPA dispatches to its fused kernel by itself",
      "torch.backends.cuda.sdp_kernel is ✘ on Ascend (2.7.1 table); it only toggles CUDA flags -> silent no-op"),
    C("return torch.backends.cuda.sdp_kernel(enable_flash=False", "attention_kernel", "replace", False,
      "return contextlib.nullcontext()", "same as above (math backend pinning is a no-op on NPU)"),
    C("pin_memory=cfg.data.pin_memory,", "pin_memory", "replace", False,
      "pin_memory=cfg.data.pin_memory, pin_memory_device=\"npu\",",
      "DataLoader only pins for CUDA unless pin_memory_device is given; performance only"),
    C("use_fused = cfg.train.fused_adam and torch.cuda.is_available()", "fused_optimizer", "replace", False,
      "use_fused = cfg.train.fused_adam and torch.npu.is_available()",
      "_fused_adamw_ has an NPU kernel (npu_native_ops 2.7.1) but the gate turns it off -> slower AdamW only "
      "(torch_npu.optim.NpuFusedAdamW is the alternative)"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=amp_dtype == torch.float16)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=amp_dtype == torch.float16)",
      "CUDA GradScaler disables itself without CUDA -> fp16 path loses loss scaling"),
    C("torch.cuda.get_device_name(local_rank))", "torch_cuda_api", "replace", True,
      "torch.npu.get_device_name(local_rank))", "raises without CUDA (rank 0 startup log)"),
    C('with torch.autocast(device_type="cuda"', "amp", "replace", True,
      'with torch.autocast(device_type="npu", dtype=amp_dtype or torch.float32, enabled=amp_dtype is not None):',
      "device_type='cuda' autocast is disabled without CUDA -> bf16/fp16 config silently trains in fp32"),
    C("mem = torch.cuda.max_memory_allocated(device) / 2 ** 30", "torch_cuda_api", "replace", False,
      "mem = torch.npu.max_memory_allocated(device) / 2 ** 30", "CUDA allocator stats read 0; log only"),
  ])

E("seqrec_yaml", "configs/sasrec_ml20m.yaml", "device_branch_or_abstraction",
  "OmegaConf experiment YAML for the torchrun SASRec trainer (device, dist backend, faiss, env block)", [
    C("device: cuda", "device_type", "replace", True, "device: npu",
      "train_ddp.py builds torch.device(cfg.train.device, local_rank)"),
    C("compile_mode: max-autotune", "compile_mode", "replace", False, "compile_mode: default",
      "max-autotune relies on Triton GEMM autotuning; on NPU Inductor goes through torch_npu and transfer_to_npu "
      "even forces has_triton=False (knowledge §2.6) -- effect of this mode on NPU unconfirmed"),
    C("backend: nccl", "dist_backend", "replace", True, "backend: hccl",
      "passed straight to dist.init_process_group"),
    C("faiss_use_gpu: true", "custom_cuda_extension", "replace", True, "faiss_use_gpu: false",
      "faiss GPU indexes exist only in CUDA builds of faiss; on the NPU host faiss-cpu is installed "
      "(faiss not covered by knowledge)"),
    C('CUDA_DEVICE_MAX_CONNECTIONS: "1"', "env_var", "removal", False, None, "CUDA-only knob, ignored"),
    C('NCCL_ASYNC_ERROR_HANDLING: "1"', "env_var", "replace", False, 'HCCL_ASYNC_ERROR_HANDLING: "1"',
      "HCCL counterpart (torch_npu watchdog, default 1 per MindCluster docs)"),
    C('TORCH_CUDNN_V8_API_ENABLED: "1"', "env_var", "removal", False, None, "cuDNN-only knob, ignored"),
  ])

E("comirec_eval", "src/evaluate.py", "explicit_replacement",
  "ComiRec (THUDM) PyTorch port src/evaluate.py (faiss GpuIndexFlatIP over all items, CUDA_VISIBLE_DEVICES)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("res = faiss.StandardGpuResources()", "custom_cuda_extension", "removal", True, None,
      "faiss-cpu (the only faiss on an NPU host) has no StandardGpuResources -> AttributeError outside the try "
      "(faiss packaging; not covered by knowledge)"),
    C("flat_config = faiss.GpuIndexFlatConfig()", "custom_cuda_extension", "removal", True, None,
      "same: GPU-only faiss class, outside the try block"),
    C("flat_config.device = gpu_id", "custom_cuda_extension", "removal", True, None,
      "goes with the GPU config object above"),
    C('device = torch.device("cuda:" + args.gpu if torch.cuda.is_available() else "cpu")', "device_type", "replace",
      True, 'device = torch.device("npu:" + args.gpu if torch.npu.is_available() else "cpu")',
      "cuda availability check + 'cuda:N' string -> silently CPU on NPU"),
    C("model.load_state_dict(torch.load(best_model_path + 'model.pt'))", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(best_model_path + 'model.pt', map_location='cpu'))", LOAD_NOTE),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu", "device mask ignored by the Ascend runtime"),
  ])

E("seqrec_reqs", "requirements-gpu.txt", "explicit_replacement",
  "requirements-gpu.txt of the torchrun SASRec project (CUDA wheel index, faiss-gpu, nvidia-ml-py)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "torch_cuda_api", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu sits on the CPU build of torch (whl/cpu on x86, plain PyPI on aarch64; knowledge §1.1)"),
    C("torch==2.3.1+cu121", "torch_cuda_api", "replace", True, "torch==2.3.1",
      "+cu121 local version does not exist on the CPU index"),
    C("triton==2.3.1", "custom_cuda_extension", "removal", False, None,
      "NVIDIA Triton is useless on Ascend (triton-ascend is a separate package); whether the pin even installs "
      "on an aarch64 Ascend host is unconfirmed"),
    C("numpy>=1.24,<2", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.3.1.post6",
      "the torch-npu pin matching torch 2.3.1 (compatibility matrix, knowledge §1.2)"),
    C("faiss-gpu-cu12==1.8.0.2", "custom_cuda_extension", "replace", True, "faiss-cpu==1.8.0",
      "CUDA 12 build of faiss; cannot work (and has no aarch64 wheel) on an NPU host -- faiss not covered by "
      "knowledge"),
    C("nvidia-ml-py==12.535.133", "torch_cuda_api", "removal", False, None,
      "pure-Python NVML binding installs fine but has nothing to talk to; npu-smi / torch.npu.utilization "
      "instead (knowledge §6)"),
  ])

E("seqrec_docker", "docker/Dockerfile", "explicit_replacement",
  "Dockerfile of the torchrun SASRec project (nvidia/cuda base, NVIDIA runtime env, torchrun --nproc_per_node=gpu)", [
    C("FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04", "torch_cuda_api", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "needs a CANN base image (toolkit env baked into ENV lines, as in Ascend/cann-container-image)"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "read by the NVIDIA container runtime only; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES (or "
      "--device /dev/davinciN at run time)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA container runtime knob"),
    C('ENV TORCH_CUDA_ARCH_LIST="8.0;8.6;9.0"', "env_var", "removal", False, None,
      "only affects nvcc builds, none happen in this image"),
    C("ENV NCCL_DEBUG=WARN", "env_var", "removal", False, None, "ignored by HCCL"),
    C('"--nproc_per_node=gpu"', "device_type", "replace", True,
      'CMD ["torchrun", "--standalone", "--nproc_per_node=8", "train_ddp.py", "--config", '
      '"configs/sasrec_ml20m.yaml"]',
      "torchrun's 'gpu' value counts CUDA devices and errors out when CUDA is unavailable"),
  ])

E("seqrec_pyproject", "pyproject.toml", "explicit_replacement",
  "pyproject.toml of the SASRec project (uv CUDA index for torch, gpu / flash extras)", [
    C('"torch>=2.1",', "import_torch_npu", "replace", True, '"torch==2.3.1", "torch-npu==2.3.1.post6",',
      "torch must be pinned to a version torch-npu exists for, and torch-npu added"),
    C('"faiss-gpu-cu12>=1.8",', "custom_cuda_extension", "replace", False, '"faiss-cpu>=1.8",',
      "optional 'gpu' extra; CUDA faiss (faiss not covered by knowledge)"),
    C('"nvidia-ml-py>=12.0",', "torch_cuda_api", "removal", False, None, "optional extra; NVML has no NPU"),
    C('flash = ["flash-attn>=2.5"]', "attention_kernel", "removal", False, None,
      "flash-attn cannot be installed on NPU (knowledge §6); optional extra -> SDPA / npu_fusion_attention"),
    C('url = "https://download.pytorch.org/whl/cu121"', "torch_cuda_api", "replace", True,
      'url = "https://download.pytorch.org/whl/cpu"',
      "uv resolves torch from the CUDA index on Linux -> CUDA build instead of the CPU build torch_npu needs"),
  ])
