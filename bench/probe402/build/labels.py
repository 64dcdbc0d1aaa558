"""Labels for probe402: graph anomaly and fraud detection (PyGOD, CARE-GNN, BWGNN, GHRN, DOMINANT).

One C(...) per upstream line a careful porter would edit for Ascend NPU with torch_npu (explicit port:
torch.npu.*, 'npu', no transfer_to_npu). `required` = with every other labelled line already ported,
would leaving this line unchanged fail / compute something wrong / silently misbehave on an NPU host?
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


X = "explicit_replacement"

# --------------------------------------------------------------------------------------------------
# PyGOD (pygod-team/pygod): device choice is centralised in validate_device(); detectors only ever
# see self.device, so most of the package is device-agnostic.
# --------------------------------------------------------------------------------------------------
E("pygod_utility", "pygod/utils/utility.py", X,
  "pygod-team/pygod pygod/utils/utility.py (validate_device, load_data, logger, check_parameter)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "validate_device() is the first place the package touches the torch.npu namespace; needed on "
      "torch_npu < 2.5.1 (no backend autoload), recommended after."),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on an NPU host, so every gpu>=0 request silently falls back to 'cpu' (with a misleading warning)."),
    C("check_parameter(gpu_id, 0, torch.cuda.device_count(),", "torch_cuda_api", "replace", True,
      "check_parameter(gpu_id, 0, torch.npu.device_count(),",
      "torch.cuda.device_count() is 0 on an NPU host: the range check [0, 0) raises ValueError for any gpu id."),
    C("device = 'cuda:{}'.format(gpu_id)", "device_type", "replace", True, "device = 'npu:{}'.format(gpu_id)",
      "the device string every detector uses for .to(self.device)."),
])

E("pygod_base", "pygod/detector/base.py", X,
  "pygod-team/pygod pygod/detector/base.py (Detector / DeepDetector, NeighborLoader training loop)", [])

E("pygod_dominant_det", "pygod/detector/dominant.py", X,
  "pygod-team/pygod pygod/detector/dominant.py (DOMINANT detector wrapper, gpu=-1 argument)", [])

E("pygod_dominant_nn", "pygod/nn/dominant.py", X,
  "pygod-team/pygod pygod/nn/dominant.py (DOMINANTBase: GCN encoder, attribute/structure decoders)", [])

E("pygod_functional", "pygod/nn/functional.py", X,
  "pygod-team/pygod pygod/nn/functional.py (double_recon_loss, GAD-NR neighbour losses)", [])

E("pygod_decoder", "pygod/nn/decoder.py", X,
  "pygod-team/pygod pygod/nn/decoder.py (DotProductDecoder)", [])

E("pygod_generator", "pygod/generator/outlier_generator.py", X,
  "pygod-team/pygod pygod/generator/outlier_generator.py (structural / contextual outlier injection)", [])

E("pygod_metric", "pygod/metric/metric.py", X,
  "pygod-team/pygod pygod/metric/metric.py (ROC-AUC, AP, recall@k, precision@k)", [])

E("pygod_guide", "pygod/detector/guide.py", X,
  "pygod-team/pygod pygod/detector/guide.py (GUIDE, node motif degree cached with torch.save/torch.load)", [])

E("pygod_bench_utils", "benchmark/utils.py", X,
  "pygod-team/pygod benchmark/utils.py (init_model hyper-parameter grid, set_seed)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "only guards seeding and cudnn flags; torch.manual_seed() two lines up already seeds the NPU "
      "generator, so leaving the dead branch changes nothing observable."),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "redundant with torch.manual_seed (which also seeds registered privateuse1 devices); lazy no-op without CUDA."),
])

E("pygod_bench_main", "benchmark/main.py", X,
  "pygod-team/pygod benchmark/main.py (trial loop, AUC/AP/Recall report, peak-memory column)", [
    C("use_gpu = args.gpu >= 0 and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_gpu = args.gpu >= 0 and torch.npu.is_available()",
      "False on an NPU host: the peak-memory column of the results CSV silently becomes 'NA' although the "
      "detectors do run on the NPU."),
    C("torch.cuda.reset_peak_memory_stats(args.gpu)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(args.gpu)",
      "no CUDA runtime/bindings on an NPU host: raises once use_gpu is true."),
    C("peak_mem.append(torch.cuda.max_memory_allocated(args.gpu) / 1024 ** 2)", "torch_cuda_api", "replace", True,
      "peak_mem.append(torch.npu.max_memory_allocated(args.gpu) / 1024 ** 2)",
      "CUDA allocator stats are empty when CUDA was never initialised: reports 0 MB (wrong number in the table)."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "memory hygiene between trials only; torch.cuda.empty_cache() is a no-op when CUDA is not initialised."),
])

E("pygod_bench_run", "benchmark/run_all.sh", X,
  "pygod-team/pygod benchmark launcher (datasets x detectors, pins each job to the freest GPU)", [
    C("=set -e", "env_var", "npu_only_addition", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; usually already sourced by the login shell or container image."),
    C("nvidia-smi --query-gpu=memory.free", "device_capability_check", "replace", True,
      "for i in $(seq 0 7); do echo $((100 - $(npu-smi info -t usages -i $i | awk -F: '/HBM Usage Rate/ {print $2+0}'))); done \\",
      "nvidia-smi does not exist on an Ascend host, so pick_gpu returns an empty id; npu-smi has no CSV query "
      "mode, the free share is derived from 'HBM Usage Rate(%)' (npu-smi ids assumed = logical ids 0..7)."),
    C("CUDA_VISIBLE_DEVICES=$gpu python main.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=$gpu python main.py \\",
      "ignored by the Ascend runtime: every job silently lands on NPU 0 (--gpu 0) instead of the chosen card."),
])

E("pygod_requirements", "requirements.txt", X,
  "pygod-team/pygod requirements.txt", [
    C("torch>=2.0.0", "import_torch_npu", "npu_only_addition", False, "torch-npu==2.1.0.post10",
      "torch_npu must be installed (and torch pinned to the matching x.y.z); install-time only, often done "
      "per Ascend's instructions rather than from this file."),
])

# --------------------------------------------------------------------------------------------------
# CARE-GNN (YingtongDou/CARE-GNN): a `cuda` bool threaded through every aggregator, legacy
# torch.cuda.LongTensor constructors and hard-coded .cuda() calls.
# --------------------------------------------------------------------------------------------------
E("care_train", "train.py", X,
  "YingtongDou/CARE-GNN train.py (--no-cuda flag, module-level training script)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; registers the npu device and torch.npu before args.cuda is computed."),
    C("args.cuda = not args.no_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "args.cuda = not args.no_cuda and torch.npu.is_available()",
      "False on an NPU host: the whole model silently trains on the CPU."),
    C("features.cuda()", "tensor_to_device", "replace", True, "features.npu()",
      "embedding table must sit on the NPU next to the aggregator weights."),
    C("gnn_model.cuda()", "tensor_to_device", "replace", True, "gnn_model.npu()", ""),
    C("Variable(torch.cuda.LongTensor(batch_label))", "torch_cuda_api", "replace", True,
      "loss = gnn_model.loss(batch_nodes, Variable(torch.LongTensor(batch_label).npu()))",
      "legacy CUDA typed constructor."),
])

E("care_layers", "layers.py", X,
  "YingtongDou/CARE-GNN layers.py (InterAgg / IntraAgg, RL neighbour filter, four inter-relation aggregators)", [
    C("batch_features = self.features(torch.cuda.LongTensor(list(unique_nodes)))", "torch_cuda_api", "replace", True,
      "batch_features = self.features(torch.LongTensor(list(unique_nodes)).npu())",
      "legacy CUDA typed constructor for the label-aware scores."),
    C("index = torch.LongTensor(nodes).cuda()", "tensor_to_device", "replace", True,
      "index = torch.LongTensor(nodes).npu()", ""),
    C("mask = mask.cuda()", "tensor_to_device", "replace", True, "mask = mask.npu()",
      "dense neighbour-mean mask multiplied with NPU embeddings."),
    C("embed_matrix = self.features(torch.LongTensor(unique_nodes_list).cuda())", "tensor_to_device", "replace", True,
      "embed_matrix = self.features(torch.LongTensor(unique_nodes_list).npu())", ""),
    C("aggregated = torch.zeros(size=(n, embed_dim)).cuda()", "tensor_to_device", "replace", True,
      "aggregated = torch.zeros(size=(n, embed_dim)).npu()", "CARE-Mean path (--inter Mean)."),
    C("aggregated = torch.zeros((n, embed_dim)).cuda()", "tensor_to_device", "replace", True,
      "aggregated = torch.zeros((n, embed_dim)).npu()", "CARE-Weight path (--inter Weight)."),
    C("aggregated = torch.zeros(n, embed_dim).cuda()", "tensor_to_device", "replace", True,
      "aggregated = torch.zeros(n, embed_dim).npu()", "CARE-Att path (--inter Att)."),
    C("aggregated = Variable(torch.zeros(size=(n, embed_dim))).cuda()", "tensor_to_device", "replace", True,
      "aggregated = Variable(torch.zeros(size=(n, embed_dim))).npu()", "default CARE-GNN path (--inter GNN)."),
])

E("care_graphsage", "graphsage.py", X,
  "YingtongDou/CARE-GNN graphsage.py (GraphSAGE baseline from graphsage-simple)", [
    C("mask = mask.cuda()", "tensor_to_device", "replace", True, "mask = mask.npu()", ""),
    C("embed_matrix = self.features(torch.LongTensor(unique_nodes_list).cuda())", "tensor_to_device", "replace", True,
      "embed_matrix = self.features(torch.LongTensor(unique_nodes_list).npu())", ""),
    C("index = torch.LongTensor(nodes).cuda()", "tensor_to_device", "replace", True,
      "index = torch.LongTensor(nodes).npu()",
      "unconditional .cuda() (upstream quirk: the SAGE baseline never ran without a GPU)."),
])

E("care_model", "model.py", X, "YingtongDou/CARE-GNN model.py (OneLayerCARE)", [])
E("care_utils", "utils.py", X,
  "YingtongDou/CARE-GNN utils.py (loadmat loaders, under-sampling, test_sage / test_care)", [])
E("care_data_process", "data_process.py", X, "YingtongDou/CARE-GNN data_process.py (adjacency lists)", [])

E("care_requirements", "requirements.txt", X, "YingtongDou/CARE-GNN README dependency list as requirements.txt", [
    C("torch>=1.4.0", "import_torch_npu", "npu_only_addition", False, "torch-npu==2.1.0.post10",
      "install-time only; torch must then be the matching 2.1.0 (the >=1.4.0 range already admits it)."),
])

# --------------------------------------------------------------------------------------------------
# BWGNN (squareRoot3/Rethinking-Anomaly-Detection): the official code is CPU-only (DGL graph and model
# never leave the host), so nothing needs porting. Kept as a zero-label project.
# --------------------------------------------------------------------------------------------------
E("bwgnn_main", "main.py", X,
  "squareRoot3/Rethinking-Anomaly-Detection main.py (full-graph CPU training, best-threshold macro-F1)", [])
E("bwgnn_model", "BWGNN.py", X,
  "squareRoot3/Rethinking-Anomaly-Detection BWGNN.py (Beta-wavelet PolyConv, BWGNN, BWGNN_Hetero)", [])
E("bwgnn_dataset", "dataset.py", X,
  "squareRoot3/Rethinking-Anomaly-Detection dataset.py (DGL FraudYelp/FraudAmazon, T-Finance)", [])

# --------------------------------------------------------------------------------------------------
# GHRN (heterophily edge pruning on top of BWGNN): the GPU fork of the BWGNN code.
# --------------------------------------------------------------------------------------------------
E("ghrn_main", "main.py", X,
  "GHRN (WWW'23, 'Addressing Heterophily in Graph Anomaly Detection') main.py: two-stage train / prune / retrain", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script."),
    C("class_weight = torch.tensor([1., weight]).cuda()", "tensor_to_device", "replace", True,
      "class_weight = torch.tensor([1., weight]).npu()", "cross-entropy class weight must be on the logits' device."),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "timing fence; torch.cuda.synchronize() initialises CUDA and raises on an NPU host."),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)", ""),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)", ""),
    C("device = torch.device('cuda:%d' % args.gpu)", "device_type", "replace", True,
      "device = torch.device('npu:%d' % args.gpu)", ""),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "between runs only; no-op without CUDA, so leaving it only keeps cached NPU blocks."),
])

E("ghrn_model", "model.py", X,
  "GHRN model.py (BWGNN backbone copy with hard-coded CUDA accumulators, MLP baseline)", [
    C("h_final = torch.zeros([len(in_feat), 0]).cuda()", "tensor_to_device", "replace", True,
      "h_final = torch.zeros([len(in_feat), 0], device=in_feat.device)",
      "empty accumulator concatenated with NPU features."),
    C("h_final = torch.zeros([len(in_feat), 0], device='cuda')", "device_type", "replace", True,
      "h_final = torch.zeros([len(in_feat), 0], device='npu')", "hetero (--homo 0) path."),
])

E("ghrn_utils", "utils.py", X,
  "GHRN utils.py (seeding, splits, heterophily edge scores, dgl.remove_edges pruning, memory log)", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "redundant with torch.manual_seed on the line above (which also seeds the NPU generator)."),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on an NPU host: the per-stage memory report silently disappears."),
    C("alloc = torch.cuda.memory_allocated(device) / 1024 ** 3", "torch_cuda_api", "replace", True,
      "alloc = torch.npu.memory_allocated(device) / 1024 ** 3",
      "CUDA stats are empty without CUDA: prints 0.00 GB for an npu device."),
    C("reserved = torch.cuda.memory_reserved(device) / 1024 ** 3", "torch_cuda_api", "replace", True,
      "reserved = torch.npu.memory_reserved(device) / 1024 ** 3", "same as above."),
])

E("ghrn_run", "scripts/run_yelp.sh", X, "GHRN scripts/run_yelp.sh (YelpChi homo/hetero sweeps)", [
    C("GPU=${1:-0}", "env_var", "npu_only_addition", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; usually already sourced by the login shell or container image."),
    C("export CUDA_VISIBLE_DEVICES=$GPU", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=$GPU",
      "otherwise `run_yelp.sh 3` silently runs on NPU 0 (the script always passes --gpu 0)."),
])

E("ghrn_requirements", "requirements.txt", X, "GHRN requirements.txt (CUDA 11.3 torch + dgl wheels)", [
    C("--find-links https://data.dgl.ai/wheels/cu113/repo.html", "custom_cuda_extension", "replace", False,
      "--find-links https://data.dgl.ai/wheels/repo.html",
      "CPU DGL wheels; unconfirmed whether the cu113 build even imports without a CUDA runtime."),
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "import_torch_npu", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "Ascend docs install CPU torch from the cpu index on x86; aarch64 uses plain PyPI."),
    C("torch==1.12.1+cu113", "import_torch_npu", "replace", True, "torch==2.1.0",
      "there is no torch_npu build for torch 1.12 (version matrix); torch must equal the torch_npu x.y.z."),
    C("dgl-cu113==0.9.1", "custom_cuda_extension", "replace", False, "dgl==1.1.3",
      "CPU DGL build matching torch 2.1; unconfirmed (DGL is not covered by the knowledge base)."),
    C("sympy==1.10.1", "import_torch_npu", "npu_only_addition", False, "torch-npu==2.1.0.post10",
      "appended after the last pin; install-time only."),
])

# --------------------------------------------------------------------------------------------------
# DOMINANT (kaize0409/GCN_AnomalyDetection_pytorch): dense-adjacency GCN autoencoder, --device string.
# --------------------------------------------------------------------------------------------------
E("dominant_run", "run.py", X,
  "kaize0409/GCN_AnomalyDetection_pytorch run.py (train_dominant, loss_func, --device cuda)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script."),
    C("if args.device == 'cuda':", "device_type", "replace", True, "if args.device == 'npu':",
      "string comparison on the device flag: unchanged, `--device npu` silently trains on the CPU."),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", ""),
    C("parser.add_argument('--device', default='cuda'", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu', type=str, help='npu/cpu')",
      "default device; with the branch ported a 'cuda' default silently selects the CPU path."),
])

E("dominant_model", "model.py", X,
  "kaize0409/GCN_AnomalyDetection_pytorch model.py (Encoder, Attribute_Decoder, Structure_Decoder)", [])

E("dominant_layers", "layers.py", X,
  "kaize0409/GCN_AnomalyDetection_pytorch layers.py (pygcn GraphConvolution)", [
    C("output = torch.spmm(adj, support)", "unsupported_op_workaround", "replace", False,
      "output = torch.mm(adj, support)",
      "adj is a dense tensor here; no spmm/sparse-mm kernel in the NPU op lists, unconfirmed whether the "
      "dense-dense call reaches aten::mm or hits the sparse path (which raises on NPU). torch.mm is "
      "equivalent for dense inputs."),
])

E("dominant_utils", "utils.py", X,
  "kaize0409/GCN_AnomalyDetection_pytorch utils.py (loadmat, normalize_adj, anomaly injection)", [])

E("dominant_env", "environment.yml", X, "DOMINANT conda environment (pytorch 1.6 + cudatoolkit 10.1)", [
    C("python=3.7", "import_torch_npu", "replace", True, "- python=3.9",
      "torch 2.1.0 (the torch_npu pairing used here) needs Python 3.8-3.11."),
    C("pytorch=1.6.0", "import_torch_npu", "removal", True, None,
      "no torch_npu build exists for torch 1.6; torch is installed from pip next to torch-npu instead."),
    C("cudatoolkit=10.1", "custom_cuda_extension", "removal", False, None,
      "CUDA runtime libraries are useless on an Ascend host but harmless."),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "      - torch==2.1.0",
      "torch has to come from somewhere once the conda pytorch pin is removed."),
    C("=- tqdm", "import_torch_npu", "npu_only_addition", False, "      - torch-npu==2.1.0.post10",
      "install-time only, like the other requirement files."),
])
