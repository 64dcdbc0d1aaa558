"""Labels for probe443 (graph self-supervised / contrastive learning, CUDA -> Ascend NPU).

One label per upstream line a careful porter would edit; see README.md for the policy.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


X = "explicit_replacement"
IMP_NOTE = ("explicit port calls torch.npu.*; torch_npu must be imported in the entry script "
            "(mandatory before the 2.5.1 autoload, recommended after)")
SEED_NOTE = ("torch.manual_seed already seeds every device generator incl. PrivateUse1, so the extra CUDA "
             "seeding is redundant; ported for completeness (unconfirmed in knowledge)")
CUDA_CALL = "Tensor/Module.cuda() raises 'Torch not compiled with CUDA enabled' on an Ascend host"

# --------------------------------------------------------------------------------------------- DGI
E("dgi_execute", "execute.py", X, "PetarV-/DGI execute.py (Cora transductive training + LogReg eval)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMP_NOTE),
    C("=sparse = True", "unsupported_op_workaround", "replace", True,
      "sparse = False  # no sparse mm kernel on NPU; use the dense adjacency",
      "GCN uses torch.spmm on a sparse COO adjacency; NPU native op lists carry no sparse mm kernel and "
      "sparse ops without kernels raise (knowledge 3.8); the dense branch (torch.bmm) is the port"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "otherwise the whole run silently stays on CPU"),
    C("model.cuda()", "tensor_to_device", "replace", True, "model.npu()", CUDA_CALL),
    C("features = features.cuda()", "tensor_to_device", "replace", True, "features = features.npu()", CUDA_CALL),
    C("sp_adj = sp_adj.cuda()", "tensor_to_device", "replace", False, "sp_adj = sp_adj.npu()",
      "unreachable once sparse=False; changed for consistency"),
    C("=adj = adj.cuda()", "tensor_to_device", "replace", True, "adj = adj.npu()", CUDA_CALL),
    C("labels = labels.cuda()", "tensor_to_device", "replace", True, "labels = labels.npu()", CUDA_CALL),
    C("idx_train = idx_train.cuda()", "tensor_to_device", "replace", True, "idx_train = idx_train.npu()", CUDA_CALL),
    C("idx_val = idx_val.cuda()", "tensor_to_device", "replace", True, "idx_val = idx_val.npu()", CUDA_CALL),
    C("idx_test = idx_test.cuda()", "tensor_to_device", "replace", True, "idx_test = idx_test.npu()", CUDA_CALL),
    C("if torch.cuda.is_available():  # corrupted", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():  # corrupted features and labels follow the model",
      "if left, shuf_fts/lbl stay on CPU while the model is on NPU -> device mismatch"),
    C("shuf_fts = shuf_fts.cuda()", "tensor_to_device", "replace", True, "shuf_fts = shuf_fts.npu()", CUDA_CALL),
    C("lbl = lbl.cuda()", "tensor_to_device", "replace", True, "lbl = lbl.npu()", CUDA_CALL),
    C("tot = tot.cuda()", "tensor_to_device", "replace", True, "tot = tot.npu()", CUDA_CALL),
    C("log.cuda()", "tensor_to_device", "replace", True, "log.npu()", CUDA_CALL),
    C("best_acc = best_acc.cuda()", "tensor_to_device", "replace", True, "best_acc = best_acc.npu()", CUDA_CALL),
])
E("dgi_process", "utils/process.py", X, "PetarV-/DGI utils/process.py (tkipf/gcn loaders, scipy->torch sparse)", [])
E("dgi_layers_gcn", "layers/gcn.py", X, "PetarV-/DGI layers/gcn.py + readout/discriminator", [])

# ------------------------------------------------------------------------------------- GRACE / GCA
E("grace_train", "train.py", X, "CRIPAC-DIG/GRACE train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMP_NOTE),
    C("torch.cuda.set_device(args.gpu_id)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu_id)",
      "selects the accelerator named by --gpu_id; CUDA call fails / does nothing on an NPU host"),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "otherwise training silently falls back to CPU"),
])
E("grace_model", "model.py", X, "CRIPAC-DIG/GRACE model.py (Encoder, projection head, InfoNCE semi_loss)", [])
E("grace_config", "config.yaml", X, "CRIPAC-DIG/GRACE config.yaml", [])
E("gca_train", "train.py", X, "CRIPAC-DIG/GCA train.py (adaptive augmentation, nni)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMP_NOTE),
    C("parser.add_argument('--device', type=str, default='cuda:0')", "device_type", "replace", True,
      "parser.add_argument('--device', type=str, default='npu:0')",
      "default device string feeds torch.device(args.device); 'cuda:0' fails on an NPU host"),
    C("args.device = 'cuda'", "device_type", "replace", True, "args.device = 'npu'",
      "nni tuning path forces the CUDA device"),
])
E("gca_eval", "pGRACE/eval.py", X, "CRIPAC-DIG/GCA pGRACE/eval.py (log_regression on z.device)", [])
E("gca_utils", "pGRACE/utils.py", X, "CRIPAC-DIG/GCA pGRACE/utils.py (compute_pr via torch_scatter)", [])

# ------------------------------------------------------------------------------------------ GraphCL
E("graphcl_gsimclr", "unsupervised_TU/gsimclr.py", X, "Shen-Lab/GraphCL unsupervised_TU/gsimclr.py", [
    C("from torch import optim", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMP_NOTE + "; torch itself arrives via 'from model import *', so the import goes next to this line"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      SEED_NOTE),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "otherwise training silently falls back to CPU"),
])
E("graphcl_gin", "unsupervised_TU/gin.py", X, "Shen-Lab/GraphCL unsupervised_TU/gin.py (Encoder.get_embeddings)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "gin.py is also run directly (supervised baseline); " + IMP_NOTE),
    C("=device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "get_embeddings re-derives the device: left alone, batches go to CPU while the encoder is on NPU"),
    C("# same device as training", "device_type", "replace", False,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')  # same device as training",
      "get_embeddings_v is a debugging helper not called by gsimclr.py"),
    C("device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu:0' if torch.npu.is_available() else 'cpu')",
      "supervised baseline entry point; otherwise silently CPU"),
])
E("graphcl_go_sh", "unsupervised_TU/go.sh", X, "Shen-Lab/GraphCL unsupervised_TU/go.sh", [
    C("CUDA_VISIBLE_DEVICES=$1 python gsimclr.py", "env_var", "replace", True,
      "  ASCEND_RT_VISIBLE_DEVICES=$1 python gsimclr.py --DS $2 --lr 0.01 --local --num-gc-layers 3 --aug $3 --seed $seed",
      "device selection; CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime, so every run lands on NPU 0"),
])
E("graphcl_evaluate", "unsupervised_TU/evaluate_embedding.py", X,
  "Shen-Lab/GraphCL unsupervised_TU/evaluate_embedding.py (SVC + unused torch LogReg)", [
    C("train_embs, train_lbls = torch.from_numpy(train_embs).cuda()", "tensor_to_device", "replace", False,
      "train_embs, train_lbls = torch.from_numpy(train_embs).npu(), torch.from_numpy(train_lbls).npu()",
      "logistic_classify is only reachable from a commented-out block; evaluation uses sklearn SVC"),
    C("test_embs, test_lbls = torch.from_numpy(test_embs).cuda()", "tensor_to_device", "replace", False,
      "test_embs, test_lbls = torch.from_numpy(test_embs).npu(), torch.from_numpy(test_lbls).npu()",
      "dead code path (see above)"),
    C("log.cuda()", "tensor_to_device", "replace", False, "log.npu()", "dead code path (see above)"),
])
E("graphcl_cora_execute", "unsupervised_Cora_Citeseer/execute.py", X,
  "Shen-Lab/GraphCL unsupervised_Cora_Citeseer/execute.py (DGI-derived, augmented views)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMP_NOTE),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(args.gpu)', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(args.gpu)',
      "--gpu selects the card through the visibility mask; set before any NPU call so it still applies"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", SEED_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      SEED_NOTE),
    C("=sparse = True", "unsupported_op_workaround", "replace", True,
      "sparse = False  # no sparse mm kernel on NPU; use the dense adjacency",
      "same judgement as DGI: torch.spmm on sparse COO has no NPU kernel (knowledge 3.8/4)"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "otherwise silently CPU"),
    C("model.cuda()", "tensor_to_device", "replace", True, "model.npu()", CUDA_CALL),
    C("features = features.cuda()", "tensor_to_device", "replace", True, "features = features.npu()", CUDA_CALL),
    C("aug_features1 = aug_features1.cuda()", "tensor_to_device", "replace", True,
      "aug_features1 = aug_features1.npu()", CUDA_CALL),
    C("aug_features2 = aug_features2.cuda()", "tensor_to_device", "replace", True,
      "aug_features2 = aug_features2.npu()", CUDA_CALL),
    C("sp_adj = sp_adj.cuda()", "tensor_to_device", "replace", False, "sp_adj = sp_adj.npu()",
      "unreachable once sparse=False"),
    C("sp_aug_adj1 = sp_aug_adj1.cuda()", "tensor_to_device", "replace", False, "sp_aug_adj1 = sp_aug_adj1.npu()",
      "unreachable once sparse=False"),
    C("sp_aug_adj2 = sp_aug_adj2.cuda()", "tensor_to_device", "replace", False, "sp_aug_adj2 = sp_aug_adj2.npu()",
      "unreachable once sparse=False"),
    C("=adj = adj.cuda()", "tensor_to_device", "replace", True, "adj = adj.npu()", CUDA_CALL),
    C("=aug_adj1 = aug_adj1.cuda()", "tensor_to_device", "replace", True, "aug_adj1 = aug_adj1.npu()", CUDA_CALL),
    C("=aug_adj2 = aug_adj2.cuda()", "tensor_to_device", "replace", True, "aug_adj2 = aug_adj2.npu()", CUDA_CALL),
    C("labels = labels.cuda()", "tensor_to_device", "replace", True, "labels = labels.npu()", CUDA_CALL),
    C("idx_train = idx_train.cuda()", "tensor_to_device", "replace", True, "idx_train = idx_train.npu()", CUDA_CALL),
    C("idx_val = idx_val.cuda()", "tensor_to_device", "replace", True, "idx_val = idx_val.npu()", CUDA_CALL),
    C("idx_test = idx_test.cuda()", "tensor_to_device", "replace", True, "idx_test = idx_test.npu()", CUDA_CALL),
    C("if torch.cuda.is_available():  # move shuffled", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():  # move shuffled features and labels",
      "if left, shuf_fts/lbl stay on CPU -> device mismatch in the discriminator loss"),
    C("shuf_fts = shuf_fts.cuda()", "tensor_to_device", "replace", True, "shuf_fts = shuf_fts.npu()", CUDA_CALL),
    C("lbl = lbl.cuda()", "tensor_to_device", "replace", True, "lbl = lbl.npu()", CUDA_CALL),
    C("tot = tot.cuda()", "tensor_to_device", "replace", True, "tot = tot.npu()", CUDA_CALL),
    C("log.cuda()", "tensor_to_device", "replace", True, "log.npu()", CUDA_CALL),
    C("best_acc = best_acc.cuda()", "tensor_to_device", "replace", True, "best_acc = best_acc.npu()", CUDA_CALL),
])
E("graphcl_chem_pretrain", "transferLearning_MoleculeNet_PPI/chem/pretrain_graphcl.py", X,
  "Shen-Lab/GraphCL transferLearning_MoleculeNet_PPI/chem/pretrain_graphcl.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMP_NOTE),
    C('device = torch.device("cuda:" + str(args.device))', "device_type", "replace", True,
      'device = torch.device("npu:" + str(args.device)) if torch.npu.is_available() else torch.device("cpu")',
      "otherwise silently CPU"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "only guards the redundant seeding below"),
    C("torch.cuda.manual_seed_all(0)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(0)", SEED_NOTE),
])
E("graphcl_chem_model", "transferLearning_MoleculeNet_PPI/chem/model.py", X,
  "Shen-Lab/GraphCL (snap-stanford/pretrain-gnns) chem/model.py GNN_graphpred.from_pretrained", [
    C("self.gnn.load_state_dict(torch.load(model_file))", "tensor_to_device", "replace", True,
      "self.gnn.load_state_dict(torch.load(model_file, map_location='cpu'))",
      "released pre-trained .pth files were saved from CUDA tensors; torch.load without map_location "
      "fails to deserialize them on a host without CUDA"),
])
E("graphcl_chem_finetune", "transferLearning_MoleculeNet_PPI/chem/finetune.py", X,
  "Shen-Lab/GraphCL transferLearning_MoleculeNet_PPI/chem/finetune.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMP_NOTE),
    C('device = torch.device("cuda:" + str(args.device))', "device_type", "replace", True,
      'device = torch.device("npu:" + str(args.device)) if torch.npu.is_available() else torch.device("cpu")',
      "otherwise silently CPU"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "only guards the redundant seeding below"),
    C("torch.cuda.manual_seed_all(args.runseed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.runseed)", SEED_NOTE),
])
E("graphcl_chem_sh", "transferLearning_MoleculeNet_PPI/chem/finetune_tune.sh", X,
  "Shen-Lab/GraphCL chem/finetune_tune.sh", [])

# --------------------------------------------------------------------------------------------- BGRL
E("bgrl_train_transductive", "train_transductive.py", X, "nerdslab/bgrl train_transductive.py (absl flags)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMP_NOTE),
    C("device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')", "device_type",
      "replace", True, "device = torch.device('npu') if torch.npu.is_available() else torch.device('cpu')",
      "otherwise silently CPU"),
])
E("bgrl_train_ppi", "train_ppi.py", X, "nerdslab/bgrl train_ppi.py (inductive PPI)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMP_NOTE),
    C("device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')", "device_type",
      "replace", True, "device = torch.device('npu') if torch.npu.is_available() else torch.device('cpu')",
      "otherwise silently CPU"),
])
E("bgrl_core", "bgrl/bgrl.py", X, "nerdslab/bgrl bgrl/bgrl.py (online/target EMA, load_trained_encoder)", [])
E("bgrl_lr_eval", "bgrl/linear_eval_ppi.py", X, "nerdslab/bgrl bgrl/linear_eval_ppi.py (linear probe)", [
    C("pin_memory=True, num_workers=2)", "pin_memory", "replace", False,
      "                              pin_memory=True, pin_memory_device='npu', num_workers=2)",
      "performance only: pinning targets the CUDA allocator by default; unconfirmed that pin_memory_device='npu' "
      "is needed with torch_npu"),
    C("val_loader = DataLoader(TensorDataset(*val_data)", "pin_memory", "replace", False,
      "    val_loader = DataLoader(TensorDataset(*val_data), batch_size=batch_size, shuffle=False, pin_memory=True, pin_memory_device='npu')",
      "performance only (unconfirmed)"),
    C("test_loader = DataLoader(TensorDataset(*test_data)", "pin_memory", "replace", False,
      "    test_loader = DataLoader(TensorDataset(*test_data), batch_size=batch_size, shuffle=False, pin_memory=True, pin_memory_device='npu')",
      "performance only (unconfirmed)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "torch.cuda.empty_cache is a no-op when CUDA was never initialised; without the port the NPU cache is "
      "just not trimmed between sweeps"),
])
E("bgrl_requirements", "requirements.txt", X, "nerdslab/bgrl requirements (CUDA 11.1 wheels)", [
    C("-f https://download.pytorch.org/whl/torch_stable.html", "import_torch_npu", "replace", True,
      "torch_npu==2.1.0.post10",
      "the CUDA wheel index is no longer needed; the torch_npu pin (matching torch 2.1.0) goes in its place"),
    C("torch==1.9.1+cu111", "import_torch_npu", "replace", True, "torch==2.1.0",
      "no torch_npu release exists for torch 1.9 and +cu111 builds do not exist for aarch64 hosts"),
    C("-f https://data.pyg.org/whl/torch-1.9.0+cu111.html", "custom_cuda_extension", "replace", True,
      "-f https://data.pyg.org/whl/torch-2.1.0+cpu.html",
      "PyG extension wheels are built per torch version and CUDA flavour; CPU builds for the new torch"),
    C("torch-scatter==2.0.8", "custom_cuda_extension", "replace", True, "torch-scatter==2.1.2",
      "2.0.8 has no wheels for torch 2.1 (compiled extension ABI)"),
    C("torch-sparse==0.6.11", "custom_cuda_extension", "replace", True, "torch-sparse==0.6.18",
      "0.6.11 has no wheels for torch 2.1 (compiled extension ABI)"),
    C("torch-cluster==1.5.9", "custom_cuda_extension", "replace", True, "torch-cluster==1.6.3",
      "1.5.9 has no wheels for torch 2.1 (compiled extension ABI)"),
])
E("bgrl_run_sh", "scripts/run_transductive.sh", X, "nerdslab/bgrl launch script (per-GPU sweep)", [
    C("=set -e", "env_var", "npu_only_addition", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; usually already sourced from the user's profile"),
    C("export CUDA_VISIBLE_DEVICES=${GPU}", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=${GPU}",
      "device selection is done only through the visibility mask (train script uses device 'npu')"),
    C("nvidia-smi --query-gpu", "torch_cuda_api", "replace", True, "npu-smi info",
      "nvidia-smi is absent on an Ascend host; under set -e the script exits non-zero"),
])

# ----------------------------------------------------------------------------------------- GraphMAE
E("graphmae_main", "main_transductive.py", X, "THUDM/GraphMAE main_transductive.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMP_NOTE),
    C('device = args.device if args.device >= 0 else "cpu"', "device_type", "replace", True,
      'device = f"npu:{args.device}" if args.device >= 0 else "cpu"',
      "a bare int device index passed to .to() means a CUDA ordinal"),
])
E("graphmae_utils", "graphmae/utils.py", X, "THUDM/GraphMAE graphmae/utils.py (build_args, set_random_seed)", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", SEED_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      SEED_NOTE),
])
E("graphmae_gat", "graphmae/models/gat.py", X, "THUDM/GraphMAE graphmae/models/gat.py (DGL GATConv)", [])
E("graphmae_run_sh", "scripts/run_transductive.sh", X, "THUDM/GraphMAE scripts/run_transductive.sh", [])
E("graphmae_main_graph", "main_graph.py", X, "THUDM/GraphMAE main_graph.py (graph classification)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMP_NOTE),
    C('device = f"cuda:{args.device}" if args.device >= 0 else "cpu"', "device_type", "replace", True,
      'device = f"npu:{args.device}" if args.device >= 0 else "cpu"', "CUDA device string fails on an NPU host"),
    C("pin_memory=True", "pin_memory", "replace", False,
      "    train_loader = GraphDataLoader(graphs, sampler=train_sampler, collate_fn=collate_fn, batch_size=batch_size, pin_memory=True, pin_memory_device='npu')",
      "performance only (unconfirmed); DGL batches are moved with .to(device) afterwards anyway"),
])
E("graphmae_requirements", "requirements.txt", X, "THUDM/GraphMAE environment (CUDA 11.3, DGL cu113)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "import_torch_npu", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "x86 hosts take CPU torch from whl/cpu (knowledge 1.1); the cu113 index holds no torch 2.1 builds, so pip "
      "would fall back to PyPI anyway"),
    C("torch==1.12.1+cu113", "import_torch_npu", "replace", True, "torch==2.1.0",
      "no torch_npu release for torch 1.12; +cu113 builds are not installable on aarch64 Ascend hosts"),
    C("dgl-cu113==0.9.1", "custom_cuda_extension", "replace", True, "dgl==1.1.3",
      "CUDA build of DGL; a CPU DGL build matching torch 2.1 is the only installable option"),
    C("pyyaml==6.0", "import_torch_npu", "npu_only_addition", True, "torch_npu==2.1.0.post10",
      "torch_npu pin matching torch 2.1.0"),
])

# ------------------------------------------------------------------------------------------- PyGCL
E("pygcl_grace", "examples/GRACE.py", X, "PyGCL/PyGCL examples/GRACE.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMP_NOTE),
    C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
      "hard-coded CUDA device"),
])
E("pygcl_graphcl", "examples/GraphCL.py", X, "PyGCL/PyGCL examples/GraphCL.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMP_NOTE),
    C("=data = data.to('cuda')", "device_type", "replace", True, "data = data.to('npu')",
      "hard-coded CUDA string in the training loop"),
    C("# same device as encoder_model", "device_type", "replace", True,
      "data = data.to('npu')  # same device as encoder_model", "hard-coded CUDA string in evaluation"),
    C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
      "hard-coded CUDA device"),
])
E("pygcl_lreval", "GCL/eval/logistic_regression.py", X, "PyGCL/PyGCL GCL/eval/logistic_regression.py", [])
E("pygcl_aug_functional", "GCL/augmentors/functional.py", X,
  "PyGCL/PyGCL GCL/augmentors/functional.py (torch_sparse/torch_cluster helpers)", [
    C("=row, col = edge_index", "custom_cuda_extension", "replace", False, "row, col = edge_index.cpu()",
      "random_walk is a torch_cluster C++/CUDA op with no NPU kernel; run it on CPU. Unconfirmed whether "
      "torch_npu's boxed CPU fallback would already cover a third-party op"),
    C("start = torch.randint(0, num_nodes, size=(batch_size, ), dtype=torch.long).to(edge_index.device)",
      "custom_cuda_extension", "replace", False,
      "start = torch.randint(0, num_nodes, size=(batch_size, ), dtype=torch.long)",
      "keep the walk seeds on CPU with the CPU SparseTensor (unconfirmed, see above)"),
    C("node_idx = adj.random_walk(start.flatten(), length).view(-1)", "custom_cuda_extension", "replace", False,
      "node_idx = adj.random_walk(start.flatten(), length).view(-1).to(edge_index.device)",
      "bring the sampled nodes back to the NPU for subgraph() (unconfirmed, see above)"),
])
E("pygcl_bench", "benchmarks/profile_memory.py", X,
  "PyGCL-style benchmarks/profile_memory.py (CUDA events, peak-memory stats, nvidia-smi)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMP_NOTE),
    C("assert torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "    assert torch.npu.is_available(), 'this benchmark needs an NPU device'", "assert fails on an NPU host"),
    C("device = torch.device('cuda', torch.cuda.current_device())", "device_type", "replace", True,
      "    device = torch.device('npu', torch.npu.current_device())", "CUDA device on an NPU host"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "    torch.npu.synchronize(device)",
      "torch.cuda.synchronize raises without CUDA"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "    torch.npu.empty_cache()",
      "no-op when CUDA was never initialised; NPU cache simply not trimmed before measuring"),
    C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
      "    torch.npu.reset_peak_memory_stats(device)", "CUDA memory stats API on an NPU device raises"),
    C("start_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "    start_evt = torch.npu.Event(enable_timing=True)", "CUDA events unavailable on an NPU host"),
    C("end_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "    end_evt = torch.npu.Event(enable_timing=True)", "CUDA events unavailable on an NPU host"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "        torch.npu.synchronize()",
      "needed before elapsed_time; torch.cuda.synchronize raises without CUDA"),
    C("peak_mb = torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace", True,
      "    peak_mb = torch.npu.max_memory_allocated(device) / 2 ** 20", "CUDA memory stats on an NPU device"),
    C("reserved_mb = torch.cuda.max_memory_reserved(device)", "torch_cuda_api", "replace", True,
      "    reserved_mb = torch.npu.max_memory_reserved(device) / 2 ** 20", "CUDA memory stats on an NPU device"),
    C("'device_name': torch.cuda.get_device_name(device),", "torch_cuda_api", "replace", True,
      "        'device_name': torch.npu.get_device_name(device),", "CUDA query on an NPU device raises"),
    C("['nvidia-smi', '--query-gpu=name,driver_version,memory.total'", "torch_cuda_api", "replace", False,
      "            ['npu-smi', 'info'])",
      "missing nvidia-smi is caught (OSError) and only empties the 'gpus' field"),
    C("'cuda': torch.version.cuda,", "torch_cuda_api", "replace", False,
      "        'torch_npu': torch_npu.__version__,", "torch.version.cuda is just None on an NPU host; cosmetic"),
])
