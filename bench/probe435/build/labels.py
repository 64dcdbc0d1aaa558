"""Labels for probe435: graph-based and session-based recommendation (CUDA -> Ascend NPU).

One entry per upstream file; one C(...) per line a careful porter would edit. Explicit port
(torch.npu.*, 'npu', hccl), no transfer_to_npu shortcut.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


X = "explicit_replacement"

# ---------------------------------------------------------------- LightGCN-PyTorch (gusye1234)
E("lgcn_world", "code/world.py", X, "gusye1234/LightGCN-PyTorch code/world.py (module-level GPU/device globals)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "world.py is imported first by every entry point (main.py -> world); registering the NPU backend here "
      "makes torch.npu available before the device global is built (autoload only from torch_npu 2.5.1)."),
    C("GPU = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "GPU = torch.npu.is_available()",
      "False on an Ascend host, so the device global below would silently fall back to CPU."),
    C("device = torch.device('cuda' if GPU else \"cpu\")", "device_type", "replace", True,
      "device = torch.device('npu' if GPU else \"cpu\")",
      "Single device global used by dataloader/Procedure/main for every .to(world.device)."),
])
E("lgcn_parse", "code/parse.py", X, "gusye1234/LightGCN-PyTorch code/parse.py (argparse, no device flags)", [])
E("lgcn_dataloader", "code/dataloader.py", X,
  "gusye1234/LightGCN-PyTorch code/dataloader.py (scipy adjacency -> torch sparse, .to(world.device))", [])
E("lgcn_model", "code/model.py", X, "gusye1234/LightGCN-PyTorch code/model.py (LightGCN/PureMF, torch.sparse.mm)", [])
E("lgcn_utils", "code/utils.py", X, "gusye1234/LightGCN-PyTorch code/utils.py (BPRLoss, cppimport sampler, set_seed)", [
    C("    if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():",
      "Guards only the extra device seeding below; torch.manual_seed(seed) on the next lines already seeds "
      "registered PrivateUse1 devices in recent torch (not confirmed in /work/shared/knowledge)."),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(seed)",
      "Redundant with torch.manual_seed for reproducibility purposes; unconfirmed whether older torch_npu "
      "needs it. torch.cuda.manual_seed is lazy and does not raise without CUDA."),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "Same as above (unconfirmed)."),
])
E("lgcn_procedure", "code/Procedure.py", X,
  "gusye1234/LightGCN-PyTorch code/Procedure.py (BPR training loop, batched Test with topk)", [])
E("lgcn_main", "code/main.py", X, "gusye1234/LightGCN-PyTorch code/main.py (entry, map_location='cpu' load)", [])
E("lgcn_register", "code/register.py", X, "gusye1234/LightGCN-PyTorch code/register.py", [])
E("lgcn_sampling_cpp", "code/sources/sampling.cpp", X,
  "gusye1234/LightGCN-PyTorch code/sources/sampling.cpp (cppimport/pybind11 CPU negative sampler)", [])

# ---------------------------------------------------------------- NGCF-PyTorch (huangtinglin)
E("ngcf_model", "NGCF/NGCF.py", X, "huangtinglin/NGCF-PyTorch NGCF/NGCF.py (device from args, sparse dropout)", [])
E("ngcf_main", "NGCF/main.py", X, "huangtinglin/NGCF-PyTorch NGCF/main.py (args.device = cuda:gpu_id)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry script; needed before torch.device('npu:N') is built (no autoload before torch_npu 2.5.1)."),
    C("args.device = torch.device('cuda:' + str(args.gpu_id))", "device_type", "replace", True,
      "args.device = torch.device('npu:' + str(args.gpu_id))",
      "Unconditional CUDA device; the model, the sparse adjacency and the dropout noise all follow args.device."),
])
E("ngcf_parser", "NGCF/utility/parser.py", X, "huangtinglin/NGCF-PyTorch NGCF/utility/parser.py (--gpu_id flag)", [])
E("ngcf_batch_test", "NGCF/utility/batch_test.py", X,
  "huangtinglin/NGCF-PyTorch NGCF/utility/batch_test.py (multiprocessing.Pool ranking on CPU)", [])

# ---------------------------------------------------------------- SR-GNN (CRIPAC-DIG)
E("srgnn_model", "pytorch_code/model.py", X,
  "CRIPAC-DIG/SR-GNN pytorch_code/model.py (trans_to_cuda / trans_to_cpu helpers, GGNN cell)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "model.py is where torch first enters the process (main.py does `from model import *`)."),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():",
      "trans_to_cuda silently leaves every tensor and the model on CPU on an Ascend host."),
    C("return variable.cuda()", "tensor_to_device", "replace", True,
      "return variable.npu()",
      "Module and tensor .cuda() -> .npu(); the helper is used for the model, inputs, adjacency and targets."),
    C("if variable.is_cuda:", "device_type", "replace", True,
      "if variable.is_npu:",
      "is_cuda is False for NPU tensors, so trans_to_cpu would return the NPU tensor and the following "
      ".detach().numpy() in train_test raises."),
])
E("srgnn_main", "pytorch_code/main.py", X, "CRIPAC-DIG/SR-GNN pytorch_code/main.py (argparse, epoch loop)", [])
E("srgnn_utils", "pytorch_code/utils.py", X, "CRIPAC-DIG/SR-GNN pytorch_code/utils.py (session graph slicing, numpy)", [])

# ---------------------------------------------------------------- RecBole (RUCAIBox)
E("recbole_config", "recbole/config/configurator.py", X,
  "RUCAIBox/RecBole recbole/config/configurator.py (Config._init_device: gpu_id env, DDP init)", [
    C("os.environ[\"CUDA_VISIBLE_DEVICES\"] = gpu_id", "env_var", "replace", True,
      "os.environ[\"ASCEND_RT_VISIBLE_DEVICES\"] = gpu_id",
      "gpu_id is RecBole's device selector; CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime, so "
      "gpu_id='2' would silently run on npu:0 (and DDP ranks would index all cards)."),
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "torch is imported lazily here (after the visible-devices env var); torch_npu must be loaded before "
      "torch.npu.* below. RecBole supports torch>=1.10, i.e. before device-backend autoload."),
    C("if len(gpu_id) == 0 or not torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "if len(gpu_id) == 0 or not torch.npu.is_available()",
      "Otherwise config['device'] is silently CPU on an Ascend host."),
    C("else torch.device(\"cuda\")", "device_type", "replace", True,
      "else torch.device(\"npu\")",
      "config['device'] is consumed by every model/trainer/.to() call."),
    C("backend=\"nccl\",", "dist_backend", "replace", True,
      "backend=\"hccl\",",
      "NCCL is not available on Ascend; HCCL is the collective backend."),
    C("\"cuda\", self.final_config_dict[\"local_rank\"]", "device_type", "replace", True,
      "\"npu\", self.final_config_dict[\"local_rank\"]",
      "Per-rank device for the DDP path."),
    C("torch.cuda.set_device(self.final_config_dict[\"local_rank\"])", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(self.final_config_dict[\"local_rank\"])",
      "Binds each spawned rank to its card before DDP/HCCL communicator creation."),
])
E("recbole_trainer", "recbole/trainer/trainer.py", X,
  "RUCAIBox/RecBole recbole/trainer/trainer.py (Trainer with GradScaler/autocast, DDP reduce hook, GPU RAM bar)", [
    C("import torch.cuda.amp as amp", "amp", "replace", True,
      "from torch_npu.npu import amp",
      "amp.GradScaler is built from this module alias; the CUDA GradScaler disables itself (with a warning) "
      "when CUDA is unavailable, so enable_scaler=True would silently train fp16 without loss scaling."),
    C("self.gpu_available = torch.cuda.is_available() and config[\"use_gpu\"]", "torch_cuda_api", "replace", False,
      "self.gpu_available = torch.npu.is_available() and config[\"use_gpu\"]",
      "Only gates the 'GPU RAM' progress-bar postfix; leaving it hides the memory read-out, nothing else."),
    C("self.enable_scaler = torch.cuda.is_available() and config[\"enable_scaler\"]", "amp", "replace", True,
      "self.enable_scaler = torch.npu.is_available() and config[\"enable_scaler\"]",
      "False on an Ascend host: a user asking for enable_amp+enable_scaler would get fp16 autocast without "
      "loss scaling (gradient underflow) and no error."),
])
E("recbole_utils", "recbole/utils/utils.py", X,
  "RUCAIBox/RecBole recbole/utils/utils.py (init_seed, get_gpu_usage, get_environment)", [
    C("    torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(seed)",
      "torch.manual_seed on the line above already seeds the NPU generator in recent torch (unconfirmed in "
      "/work/shared/knowledge); kept for symmetry with the CUDA original."),
    C("    torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "As above (unconfirmed)."),
    C("reserved = torch.cuda.max_memory_reserved(device)", "torch_cuda_api", "replace", True,
      "reserved = torch.npu.max_memory_reserved(device) / 1024**3",
      "Called whenever gpu_available (ported) is True and show_progress is on; the CUDA API given an NPU "
      "device raises."),
    C("total = torch.cuda.get_device_properties(device).total_memory", "torch_cuda_api", "replace", True,
      "total = torch.npu.get_device_properties(device).total_memory / 1024**3",
      "NPU device properties expose total_memory (knowledge §2.8)."),
    C("if torch.cuda.is_available() and config[\"use_gpu\"]", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available() and config[\"use_gpu\"]",
      "Only decides whether the end-of-run environment table shows device memory or '0.0 / 0.0'."),
])
E("recbole_quick_start", "recbole/quick_start/quick_start.py", X,
  "RUCAIBox/RecBole recbole/quick_start/quick_start.py (run / mp.spawn / load_data_and_model)", [
    C("checkpoint = torch.load(model_file)", "tensor_to_device", "replace", False,
      "checkpoint = torch.load(model_file, map_location=\"cpu\")",
      "Only matters for checkpoints written on a CUDA host (deserialising cuda tensors without CUDA raises); "
      "checkpoints produced after the port restore onto npu. The pickled config['device'] would still say cuda "
      "for such files (not labelled: fixing it needs a new line)."),
])
E("recbole_run", "run_recbole.py", X, "RUCAIBox/RecBole run_recbole.py (--nproc/--ip/--port/--world_size)", [])
E("recbole_overall_yaml", "recbole/properties/overall.yaml", X,
  "RUCAIBox/RecBole recbole/properties/overall.yaml (gpu_id/use_gpu/enable_amp defaults)", [])
E("recbole_lightgcn", "recbole/model/general_recommender/lightgcn.py", X,
  "RUCAIBox/RecBole recbole/model/general_recommender/lightgcn.py (sparse norm adj .to(self.device))", [])
E("recbole_ngcf", "recbole/model/general_recommender/ngcf.py", X,
  "RUCAIBox/RecBole recbole/model/general_recommender/ngcf.py (sparse eye + BiGNN layers)", [])
E("recbole_layers", "recbole/model/layers.py", X,
  "RUCAIBox/RecBole recbole/model/layers.py (MLPLayers, Dice, BiGNNLayer, SparseDropout)", [])
E("recbole_srgnn", "recbole/model/sequential_recommender/srgnn.py", X,
  "RUCAIBox/RecBole recbole/model/sequential_recommender/srgnn.py (numpy session graph -> self.device)", [])
E("recbole_requirements", "requirements.txt", X, "RUCAIBox/RecBole requirements.txt", [
    C("torch>=1.10.0", "import_torch_npu", "npu_only_addition", False,
      "torch-npu  # same x.y.z as torch (e.g. torch==2.1.0 with torch-npu==2.1.0.post10), matching CANN",
      "The ported code imports torch_npu; on Ascend hosts torch_npu is normally installed with CANN rather "
      "than resolved from this file, so listing it is documentation, not a run requirement."),
])
E("recbole_ddp_sh", "run_example/ddp_train.sh", X,
  "Launcher in the style of RecBole's multi-GPU docs (run_recbole.py --nproc/--world_size/--group_offset)", [
    C("export CUDA_VISIBLE_DEVICES=", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}",
      "The exported value is inert: the (ported) Config._init_device re-exports ASCEND_RT_VISIBLE_DEVICES from "
      "--gpu_id, which this script derives from the variable. Renamed for clarity."),
    C("GPU_IDS=$(echo ${CUDA_VISIBLE_DEVICES}", "env_var", "replace", False,
      "GPU_IDS=$(echo ${ASCEND_RT_VISIBLE_DEVICES} | cut -d',' -f1-${NPROC})",
      "Follows the rename above; functionally it is only a local list of card ids."),
    C("export NCCL_SOCKET_IFNAME=", "env_var", "replace", False,
      "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
      "Multi-node only: HCCL picks the host NIC for root-info setup from HCCL_IF_IP/HCCL_SOCKET_IFNAME; "
      "NCCL_* is ignored. Single-node runs work without it."),
    C("nvidia-smi --query-gpu", "device_capability_check", "replace", True,
      "npu-smi info",
      "nvidia-smi does not exist on an Ascend host and the script runs under `set -e`, so the launcher exits "
      "before training starts."),
])

# ---------------------------------------------------------------- SELFRec (Coder-Yu)
E("selfrec_torch_interface", "base/torch_interface.py", X,
  "Coder-Yu/SELFRec base/torch_interface.py (scipy -> torch sparse helper)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Imported by every graph model in SELFRec before any .npu() call; a single place for the backend import."),
])
E("selfrec_simgcl", "model/graph/SimGCL.py", X, "Coder-Yu/SELFRec model/graph/SimGCL.py (.cuda() chains, noise perturbation)", [
    C("model = self.model.cuda()", "tensor_to_device", "replace", True,
      "model = self.model.npu()",
      "Module .cuda() raises without CUDA."),
    C("u_idx = torch.unique(torch.Tensor(idx[0]).type(torch.long)).cuda()", "tensor_to_device", "replace", True,
      "u_idx = torch.unique(torch.Tensor(idx[0]).type(torch.long)).npu()",
      "Index tensor for the contrastive views."),
    C("i_idx = torch.unique(torch.Tensor(idx[1]).type(torch.long)).cuda()", "tensor_to_device", "replace", True,
      "i_idx = torch.unique(torch.Tensor(idx[1]).type(torch.long)).npu()",
      "Same for items."),
    C("self.sparse_norm_adj = TorchGraphInterface.convert_sparse_mat_to_tensor(self.norm_adj).cuda()",
      "tensor_to_device", "replace", True,
      "self.sparse_norm_adj = TorchGraphInterface.convert_sparse_mat_to_tensor(self.norm_adj).npu()",
      "Sparse COO adjacency must live with the embeddings for torch.sparse.mm."),
    C("random_noise = torch.rand_like(ego_embeddings).cuda()", "tensor_to_device", "replace", True,
      "random_noise = torch.rand_like(ego_embeddings).npu()",
      "rand_like already follows ego_embeddings; the trailing .cuda() raises on an NPU host. Dropping it is an "
      "equally good port."),
])
E("selfrec_lightgcn", "model/graph/LightGCN.py", X, "Coder-Yu/SELFRec model/graph/LightGCN.py (.cuda() chains)", [
    C("model = self.model.cuda()", "tensor_to_device", "replace", True,
      "model = self.model.npu()",
      "Module .cuda() raises without CUDA."),
    C("self.sparse_norm_adj = TorchGraphInterface.convert_sparse_mat_to_tensor(self.norm_adj).cuda()",
      "tensor_to_device", "replace", True,
      "self.sparse_norm_adj = TorchGraphInterface.convert_sparse_mat_to_tensor(self.norm_adj).npu()",
      "Sparse adjacency to the NPU."),
])
E("selfrec_loss", "util/loss_torch.py", X, "Coder-Yu/SELFRec util/loss_torch.py (BPR, InfoNCE; device-agnostic)", [])
E("selfrec_conf", "conf/SimGCL.conf", X, "Coder-Yu/SELFRec conf/SimGCL.conf (key=value model config)", [])

# ---------------------------------------------------------------- PyG example
E("pyg_lightgcn", "examples/lightgcn.py", X,
  "pyg-team/pytorch_geometric examples/lightgcn.py (cuda/mps/cpu device cascade, torch_geometric.nn.LightGCN)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Script entry; needed before torch.npu.is_available() (no autoload before torch_npu 2.5.1)."),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():",
      "Otherwise the cascade falls through to CPU on an Ascend host (mps branch is false too)."),
    C("device = torch.device('cuda')", "device_type", "replace", True,
      "device = torch.device('npu')",
      "Graph data, model and torch.randint(device=device) all follow this global."),
])
