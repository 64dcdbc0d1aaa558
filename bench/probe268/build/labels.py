# Labels for probe268: deep hashing / landmark retrieval / CBIR (CUDA -> Ascend NPU).
# One entry per upstream file; one C(...) per line a careful porter would edit.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu"
SEED_NOOP = ("torch.manual_seed() on the previous lines already seeds the NPU generator once torch_npu is loaded; "
             "the CUDA call is a silent no-op on an NPU host (unconfirmed in knowledge)")
EMPTY_CACHE = "torch.cuda.empty_cache() is a silent no-op when CUDA was never initialised; NPU caching allocator needs torch.npu.empty_cache()"
NOPARAM_CUDA = ("loss module has no parameters or buffers, so Module.cuda() touches no tensor and never initialises CUDA: "
                "a silent no-op on an NPU host, changed only for consistency")

# --------------------------------------------------------------------------------------------
# DeepHash-pytorch (swuxyj) style
# --------------------------------------------------------------------------------------------
E("dh_tools", "DeepHash-pytorch/utils/tools.py", "explicit_replacement",
  "DeepHash-pytorch utils/tools.py (data config, compute_result, CalcTopMap, validate)", [
    C("bs.append(net(img.cuda()).data.cpu())", "tensor_to_device", "replace", True,
      "bs.append(net(img.npu()).data.cpu())",
      "legacy helper moves the batch with .cuda(); no CUDA device on an Ascend host"),
    C('state_dict = torch.load(os.path.join(save_path, "model.pt"))', "tensor_to_device", "replace", True,
      'state_dict = torch.load(os.path.join(save_path, "model.pt"), map_location="cpu")',
      "model.pt is written by validate() from a CUDA model; unpickling CUDA storages without map_location raises "
      "when CUDA is unavailable"),
])

E("dh_network", "DeepHash-pytorch/network.py", "explicit_replacement",
  "DeepHash-pytorch network.py (AlexNet/ResNet/VGG hash heads, MoCo queue)", [])

E("dh_dsh", "DeepHash-pytorch/DSH.py", "explicit_replacement",
  "DeepHash-pytorch DSH.py (config dict with torch.device, DSHLoss buffers)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "entry script: registers the npu device/torch.npu (mandatory before torch_npu 2.5.1, recommended after)"),
    C('"device": torch.device("cuda:1"),', "device_type", "replace", True,
      '"device": torch.device("npu:1"),',
      "config device is passed everywhere (.to(device)); cuda:1 does not exist on an NPU host"),
])

E("dh_csq", "DeepHash-pytorch/CSQ.py", "explicit_replacement",
  "DeepHash-pytorch CSQ.py (Hadamard hash centers, CSQLoss, legacy CUDA FloatTensor centers)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "entry script: load torch_npu before using the npu device"),
    C('"device": torch.device("cuda:0"),', "device_type", "replace", True,
      '"device": torch.device("npu:0"),', "config device for net, loss buffers and batches"),
    C("self.hash_center = torch.cuda.FloatTensor(centers[:, :bit])", "torch_cuda_api", "replace", True,
      "self.hash_center = torch.from_numpy(centers[:, :bit]).float().npu()",
      "legacy typed CUDA tensor constructor fails without CUDA"),
])

E("dh_greedyhash", "DeepHash-pytorch/GreedyHash.py", "device_branch_or_abstraction",
  "DeepHash-pytorch GreedyHash.py with an argparse --gpu flag and a get_device() helper", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "entry script: load torch_npu so torch.npu exists for get_device()"),
    C("if gpu >= 0 and torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      'if gpu >= 0 and hasattr(torch, "npu") and torch.npu.is_available(): torch.npu.set_device(gpu); '
      'return torch.device("npu", gpu)',
      "the CUDA test is False on an NPU host, so training silently falls back to the CPU; the helper keeps its "
      "CUDA branch and gains an NPU one"),
    C('if device.type == "cuda":', "device_type", "add_branch", False,
      'elif device.type == "npu": torch.npu.empty_cache()',
      "per-epoch cache release is skipped on NPU (memory head-room only)"),
])

# --------------------------------------------------------------------------------------------
# ADSH_pytorch (jiangqy) - older Variable/.cuda() style
# --------------------------------------------------------------------------------------------
E("adsh_main", "ADSH_pytorch/ADSH.py", "explicit_replacement",
  "ADSH_pytorch ADSH.py (asymmetric deep supervised hashing, Variable(...).cuda(), --gpu + CUDA_VISIBLE_DEVICES)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("data_input = Variable(data_input.cuda())", "tensor_to_device", "replace", True,
      "data_input = Variable(data_input.npu())", "encoding batches moved with .cuda()"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = opt.gpu", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = opt.gpu",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: --gpu 1 (the default) would silently run on NPU 0 "
      "with every device visible"),
    C("torch.cuda.manual_seed(0)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(0)", SEED_NOOP),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "moves the CNN to the GPU"),
    C("train_input = Variable(train_input.cuda())", "tensor_to_device", "replace", True,
      "train_input = Variable(train_input.npu())", "training batches moved with .cuda()"),
])

E("adsh_loss", "ADSH_pytorch/utils/adsh_loss.py", "explicit_replacement",
  "ADSH_pytorch utils/adsh_loss.py (numpy V matrix pushed to the GPU inside the loss)", [
    C("V = Variable(torch.from_numpy(V).type(torch.FloatTensor).cuda())", "tensor_to_device", "replace", True,
      "V = Variable(torch.from_numpy(V).type(torch.FloatTensor).npu())", "database codes copied to the GPU"),
    C("V_omega = Variable(torch.from_numpy(V_omega).type(torch.FloatTensor).cuda())", "tensor_to_device", "replace",
      True, "V_omega = Variable(torch.from_numpy(V_omega).type(torch.FloatTensor).npu())", "sampled codes to GPU"),
    C("S = Variable(S.cuda())", "tensor_to_device", "replace", True, "S = Variable(S.npu())",
      "similarity block to GPU"),
])

# --------------------------------------------------------------------------------------------
# HashNet (thuml) pytorch/src
# --------------------------------------------------------------------------------------------
E("hashnet_train", "HashNet/pytorch/src/train.py", "device_branch_or_abstraction",
  "thuml HashNet pytorch/src/train.py (use_gpu = torch.cuda.is_available(), --gpu_id)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("inputs[j] = Variable(inputs[j].cuda())", "tensor_to_device", "replace", True,
      "inputs[j] = Variable(inputs[j].npu())", "10-crop eval batches"),
    C("inputs = Variable(inputs.cuda())", "tensor_to_device", "replace", True, "inputs = Variable(inputs.npu())",
      "single-crop eval batch"),
    C("use_gpu = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_gpu = torch.npu.is_available()",
      "False on an NPU host: the whole run silently goes to the CPU branch"),
    C("base_network = base_network.cuda()", "tensor_to_device", "replace", True,
      "base_network = base_network.npu()", "model to device"),
    C("Variable(inputs1).cuda(), Variable(inputs2).cuda(), \\", "tensor_to_device", "replace", True,
      "Variable(inputs1).npu(), Variable(inputs2).npu(), \\", "pair batch to device"),
    C("Variable(labels1).cuda(), Variable(labels2).cuda()", "tensor_to_device", "replace", True,
      "Variable(labels1).npu(), Variable(labels2).npu()", "pair labels to device"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu_id', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu_id',
      "ignored by the Ascend runtime: --gpu_id would silently have no effect"),
])

E("hashnet_test", "HashNet/pytorch/src/test.py", "device_branch_or_abstraction",
  "thuml HashNet pytorch/src/test.py (torch.load of a pickled CUDA nn.Sequential snapshot, 10-crop codes)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("inputs[j] = Variable(inputs[j].cuda())", "tensor_to_device", "replace", True,
      "inputs[j] = Variable(inputs[j].npu())", "10-crop code prediction"),
    C("inputs = Variable(inputs.cuda())", "tensor_to_device", "replace", True, "inputs = Variable(inputs.npu())",
      "single-crop code prediction"),
    C('base_network = torch.load(config["snapshot_path"])', "tensor_to_device", "replace", True,
      'base_network = torch.load(config["snapshot_path"], map_location="cpu")',
      "the snapshot is a whole nn.Sequential pickled from CUDA by train.py; deserialising CUDA storages fails "
      "without CUDA"),
    C("use_gpu = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_gpu = torch.npu.is_available()", "False on an NPU host: silent CPU evaluation"),
    C("base_network = base_network.cuda()", "tensor_to_device", "replace", True,
      "base_network = base_network.npu()", "model to device"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu_id', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu_id', "device selection is ignored otherwise"),
])

# --------------------------------------------------------------------------------------------
# cnnimageretrieval-pytorch (cirtorch)
# --------------------------------------------------------------------------------------------
E("cir_train", "cnnimageretrieval-pytorch/cirtorch/examples/train.py", "explicit_replacement",
  "cirtorch examples/train.py (--gpu-id, CUDA_VISIBLE_DEVICES, model.cuda(), tuple training, whitening test)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu_id", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu_id",
      "--gpu-id only takes effect through the visible-devices variable; CUDA_VISIBLE_DEVICES is ignored on Ascend"),
    C("torch.cuda.manual_seed_all(0)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(0)",
      SEED_NOOP),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "network to device"),
    C("criterion = ContrastiveLoss(margin=args.loss_margin).cuda()", "tensor_to_device", "replace", False,
      "criterion = ContrastiveLoss(margin=args.loss_margin).npu()", NOPARAM_CUDA),
    C("criterion = TripletLoss(margin=args.loss_margin).cuda()", "tensor_to_device", "replace", False,
      "criterion = TripletLoss(margin=args.loss_margin).npu()", NOPARAM_CUDA),
    C("checkpoint = torch.load(args.resume)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(args.resume, map_location='cpu')",
      "resume checkpoints (state_dict + Adam state) were saved from CUDA; loading them without map_location "
      "fails on an NPU host"),
    C("torch.cuda.manual_seed_all(epoch)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(epoch)",
      SEED_NOOP),
    C("output = torch.zeros(model.meta['outputdim'], ni).cuda()", "tensor_to_device", "replace", True,
      "output = torch.zeros(model.meta['outputdim'], ni).npu()", "per-tuple descriptor buffer"),
    C("output[:, imi] = model(input[q][imi].cuda()).squeeze()", "tensor_to_device", "replace", True,
      "output[:, imi] = model(input[q][imi].npu()).squeeze()", "training image to device"),
    C("loss = criterion(output, target[q].cuda())", "tensor_to_device", "replace", True,
      "loss = criterion(output, target[q].npu())", "tuple target to device"),
    C("output = torch.zeros(model.meta['outputdim'], nq*ni).cuda()", "tensor_to_device", "replace", True,
      "output = torch.zeros(model.meta['outputdim'], nq*ni).npu()", "validation descriptor buffer"),
    C("output[:, q*ni + imi] = model(input[q][imi].cuda()).squeeze()", "tensor_to_device", "replace", True,
      "output[:, q*ni + imi] = model(input[q][imi].npu()).squeeze()", "validation image to device"),
    C("loss = criterion(output, torch.cat(target).cuda())", "tensor_to_device", "replace", True,
      "loss = criterion(output, torch.cat(target).npu())", "validation targets to device"),
    C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "test() moves the net to the GPU"),
])

E("cir_test", "cnnimageretrieval-pytorch/cirtorch/examples/test.py", "explicit_replacement",
  "cirtorch examples/test.py (pretrained/off-the-shelf nets, learned whitening, multiscale)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu_id", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu_id", "--gpu-id is otherwise ignored"),
    C("state = torch.load(args.network_path)", "tensor_to_device", "replace", True,
      "state = torch.load(args.network_path, map_location='cpu')",
      "fine-tuned networks come from train.py's save_checkpoint (CUDA tensors)"),
    C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "network to device"),
])

E("cir_net", "cnnimageretrieval-pytorch/cirtorch/networks/imageretrievalnet.py", "explicit_replacement",
  "cirtorch networks/imageretrievalnet.py (init_network, extract_vectors / regional / local)", [
    C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "extract_vectors moves the net"),
    C("=input = input.cuda()", "tensor_to_device", "replace", True, "input = input.npu()",
      "extract_vectors image batch"),
    C("net = net.cuda()", "tensor_to_device", "replace", True, "net = net.npu()", "extract_regional_vectors"),
    C("input = input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "input = input.npu(non_blocking=True)", "regional extraction batch"),
    C("net.cuda().eval()", "tensor_to_device", "replace", True, "net.npu().eval()", "extract_local_vectors"),
    C("input = input.cuda()  # 1 x 3 x H x W", "tensor_to_device", "replace", True,
      "input = input.npu()  # 1 x 3 x H x W", "local extraction batch"),
])

E("cir_traindataset", "cnnimageretrieval-pytorch/cirtorch/datasets/traindataset.py", "explicit_replacement",
  "cirtorch datasets/traindataset.py (TuplesDataset.create_epoch_tuples hard-negative mining on the GPU)", [
    C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "network used for mining"),
    C("qvecs = torch.zeros(net.meta['outputdim'], len(self.qidxs)).cuda()", "tensor_to_device", "replace", True,
      "qvecs = torch.zeros(net.meta['outputdim'], len(self.qidxs)).npu()", "query descriptor buffer"),
    C("qvecs[:, i] = net(input.cuda()).data.squeeze()", "tensor_to_device", "replace", True,
      "qvecs[:, i] = net(input.npu()).data.squeeze()", "query image to device"),
    C("poolvecs = torch.zeros(net.meta['outputdim'], len(idxs2images)).cuda()", "tensor_to_device", "replace", True,
      "poolvecs = torch.zeros(net.meta['outputdim'], len(idxs2images)).npu()", "negative pool buffer"),
    C("poolvecs[:, i] = net(input.cuda()).data.squeeze()", "tensor_to_device", "replace", True,
      "poolvecs[:, i] = net(input.npu()).data.squeeze()", "pool image to device"),
    C("avg_ndist = torch.tensor(0).float().cuda()", "tensor_to_device", "replace", True,
      "avg_ndist = torch.tensor(0).float().npu()  # for statistics", "statistics accumulator"),
    C("n_ndist = torch.tensor(0).float().cuda()", "tensor_to_device", "replace", True,
      "n_ndist = torch.tensor(0).float().npu()  # for statistics", "statistics accumulator"),
])

E("cir_sh", "cnnimageretrieval-pytorch/scripts/train_sfm120k.sh", "explicit_replacement",
  "cirtorch-style launcher for retrieval-SfM-120k fine-tuning + multiscale test", [
    C("=set -e", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced before python imports torch_npu (libhccl/ASCEND_OPP_PATH)"),
    C("nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv", "torch_cuda_api", "replace", False,
      'npu-smi info | tee -a "${LOG}"',
      "diagnostic only; without pipefail the missing nvidia-smi does not stop the script"),
    C("export CUDA_LAUNCH_BLOCKING=${CUDA_LAUNCH_BLOCKING:-0}", "env_var", "replace", False,
      "export ASCEND_LAUNCH_BLOCKING=${ASCEND_LAUNCH_BLOCKING:-0}",
      "debug switch; default 0 means the line changes nothing"),
])

# --------------------------------------------------------------------------------------------
# HOW / ASMK (naver/how, jenicek/asmk)
# --------------------------------------------------------------------------------------------
E("how_demo", "how/examples/demo_how.py", "device_branch_or_abstraction",
  "naver/how examples/demo_how.py (yaml params, globals['device'] from demo_*.gpu_id)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("globals[\"device\"] = torch.device((\"cuda:%s\" % params['demo_eval']['gpu_id']))", "device_type", "replace",
      True, "globals[\"device\"] = torch.device((\"npu:%s\" % params['demo_eval']['gpu_id']))",
      "device string built from the yaml gpu_id"),
    C("globals[\"device\"] = torch.device((\"cuda:%s\" % params['demo_train']['gpu_id']))", "device_type",
      "replace", True, "globals[\"device\"] = torch.device((\"npu:%s\" % params['demo_train']['gpu_id']))",
      "device string built from the yaml gpu_id"),
])

E("how_train", "how/how/stages/train.py", "device_branch_or_abstraction",
  "naver/how how/stages/train.py (train/train_epoch/Validation, globals['device'])", [
    C("globals[\"device\"] = torch.device((\"cuda:%s\" % demo_train['gpu_id']))", "device_type", "replace", True,
      "globals[\"device\"] = torch.device((\"npu:%s\" % demo_train['gpu_id']))", "training device string"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "seeding guard: False on an NPU host, torch.manual_seed above already covers the NPU generator"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      SEED_NOOP),
])

E("how_eval", "how/how/stages/evaluate.py", "device_branch_or_abstraction",
  "naver/how how/stages/evaluate.py (global + ASMK evaluation, faiss gpu_id plumbing)", [
    C("globals[\"device\"] = torch.device((\"cuda:%s\" % demo_eval['gpu_id']))", "device_type", "replace", True,
      "globals[\"device\"] = torch.device((\"npu:%s\" % demo_eval['gpu_id']))", "evaluation device string"),
])

E("asmk_index", "asmk/asmk/index.py", "device_branch_or_abstraction",
  "jenicek/asmk asmk/index.py (faiss flat index / k-means on CPU or GPU)", [
    C("=res = faiss.StandardGpuResources()", "unsupported_op_workaround", "replace", False,
      "return faiss.IndexFlatL2(dimension)  # no faiss GPU build for Ascend",
      "faiss GPU resources need CUDA; branch is only taken when a caller passes gpu_id, which the NPU config sets "
      "to null (see the HOW yaml)"),
    C("gpu_res = faiss.StandardGpuResources()", "unsupported_op_workaround", "replace", False,
      "index = faiss.IndexFlatL2(des.shape[1])  # CPU k-means assignment on Ascend hosts",
      "same: dead once gpu_id is null, fails if reached"),
    C("return faiss.index_cpu_to_gpu(faiss.StandardGpuResources(), gpu_id, index)", "unsupported_op_workaround",
      "replace", False, "return index  # faiss has no Ascend GPU index; keep it on the CPU",
      "only reached with a non-null gpu_id"),
])

E("how_yml", "how/examples/params/eccv20/train_how_r50-_1000.yml", "explicit_replacement",
  "naver/how examples/params/eccv20 training yaml (demo_train.gpu_id, asmk index.gpu_id)", [
    C("gpu_id: 0  # faiss GPU flat index", "unsupported_op_workaround", "replace", True,
      "gpu_id: null  # faiss CPU index: faiss-gpu is CUDA-only",
      "an explicit index.gpu_id is passed straight to asmk, which then builds faiss GPU resources and fails on an "
      "NPU host"),
])

E("how_req", "how/requirements.txt", "explicit_replacement",
  "naver/how requirements (torch, faiss-gpu, cirtorch and asmk from git)", [
    C("torch>=1.4", "import_torch_npu", "replace", True, "torch==2.1.0",
      "torch must equal the torch-npu wheel's torch version; an open range pulls the newest torch"),
    C("torchvision>=0.5", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "the torch-npu pin (goes after the torch/torchvision lines)"),
    C("faiss-gpu==1.6.5", "unsupported_op_workaround", "replace", True, "faiss-cpu==1.7.4",
      "faiss-gpu is CUDA-only (x86_64 + CUDA wheels); the NPU host uses CPU faiss"),
])

# --------------------------------------------------------------------------------------------
# FIRe (naver/fire)
# --------------------------------------------------------------------------------------------
E("fire_train", "fire/train_fire.py", "device_branch_or_abstraction",
  "naver/fire train_fire.py style trainer (LIT super-features, torch.cuda.amp, TF32 capability check)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      SEED_NOOP),
    C('device = torch.device(f"cuda:{gpu}")', "device_type", "replace", True, 'device = torch.device(f"npu:{gpu}")',
      "training device"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)",
      "CUDA runtime call"),
    C("if torch.cuda.get_device_capability(device)[0] >= 8:", "device_capability_check", "replace", True,
      "if torch.npu.is_available():  # no SM capability on Ascend; allow_tf32 only affects fp32 matmul",
      "raises without CUDA; the NPU form returns None (not subscriptable)"),
    C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(device)",
      "called with the (now npu) device: the CUDA version rejects a non-cuda device / is missing from CPU builds"),
    C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=use_amp):",
      "CUDA autocast does not cover NPU ops: --amp silently trains in fp32 (performance only)"),
    C("mem = torch.cuda.max_memory_allocated(device) / 1024 ** 3", "torch_cuda_api", "replace", False,
      "mem = torch.npu.max_memory_allocated(device) / 1024 ** 3",
      "memory stats short-circuit to empty when CUDA is uninitialised: logs 0G (log only)"),
    C('use_amp = args.amp and device.type == "cuda"', "device_type", "replace", False,
      'use_amp = args.amp and device.type == "npu"',
      "after the device port this silently disables AMP (performance only)"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=use_amp)", "amp", "replace", False,
      "scaler = torch.npu.amp.GradScaler(enabled=use_amp)",
      "CUDA GradScaler disables itself with a warning when CUDA is unavailable; needed only to keep fp16 loss scaling"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE),
])

E("fire_env", "fire/environment.yml", "explicit_replacement",
  "FIRe/HOW-style conda environment (pytorch channel, cudatoolkit, faiss-gpu)", [
    C("- nvidia", "unsupported_op_workaround", "removal", False, None,
      "NVIDIA conda channel is useless on an Ascend host (harmless if left)"),
    C("- pytorch=1.11.0", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
      "torch version must match an available torch-npu build (2.1.0 here; 1.11 is EOL)"),
    C("- torchvision=0.12.0", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
      "torchvision 0.12 pins torch 1.11, conflicting with the torch pin"),
    C("- cudatoolkit=11.3", "unsupported_op_workaround", "replace", False, "- cpuonly",
      "selects the CUDA build of pytorch; CPU torch is what torch-npu expects (unconfirmed whether the CUDA build "
      "breaks torch-npu on x86)"),
    C("- faiss-gpu=1.7.2", "unsupported_op_workaround", "replace", True, "- faiss-cpu=1.7.2",
      "faiss-gpu needs CUDA"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post10",
      "the torch-npu pin goes at the top of the pip section"),
])

# --------------------------------------------------------------------------------------------
# DELG-pytorch (pycls-based)
# --------------------------------------------------------------------------------------------
E("delg_config", "DELG-pytorch/core/config.py", "explicit_replacement",
  "pycls-style core/config.py of a DELG PyTorch reimplementation (yacs defaults)", [
    C('_C.DIST_BACKEND = "nccl"', "dist_backend", "replace", True, '_C.DIST_BACKEND = "hccl"',
      "default backend for init_process_group; NCCL is not available on Ascend"),
])

E("delg_dist", "DELG-pytorch/core/distributed.py", "explicit_replacement",
  "pycls core/distributed.py (init_process_group, scaled_all_reduce, multi_proc_run)", [
    C("torch.cuda.set_device(proc_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(proc_rank)",
      "per-process device binding"),
    C("tensor = tensor.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "tensor = tensor.npu(non_blocking=True)", "HCCL gathers device tensors: move to the NPU"),
    C("assert num_proc <= torch.cuda.device_count(), \\", "torch_cuda_api", "replace", True,
      "assert num_proc <= torch.npu.device_count(), \\",
      "torch.cuda.device_count() is 0 on an NPU host, so every multi-device run asserts"),
    C('"NUM_GPUS={} but only {} GPUs are visible".format(num_proc, torch.cuda.device_count())', "torch_cuda_api",
      "replace", False,
      '"NUM_GPUS={} but only {} NPUs are visible".format(num_proc, torch.npu.device_count())',
      "assertion message only; prints 0 but does not fail"),
])

E("delg_trainer", "DELG-pytorch/core/trainer.py", "explicit_replacement",
  "pycls core/trainer.py adapted for DELG (setup_model, AMP train_epoch, DDP)", [
    C("from torch.cuda import amp", "amp", "replace", False, "from torch_npu.npu import amp",
      "autocast/GradScaler come from this import; with MIXED_PRECISION the CUDA versions disable themselves on an "
      "NPU host and training silently runs fp32 (performance only)"),
    C("assert cfg.NUM_GPUS <= torch.cuda.device_count(), err_str", "torch_cuda_api", "replace", True,
      "assert cfg.NUM_GPUS <= torch.npu.device_count(), err_str", "device_count() is 0 without CUDA"),
    C("cur_device = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "cur_device = torch.npu.current_device()", "CUDA runtime call"),
    C("model = model.cuda(device=cur_device)", "tensor_to_device", "replace", True,
      "model = model.npu(device=cur_device)", "model to the current device"),
    C("inputs, labels = inputs.cuda(), labels.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "inputs, labels = inputs.npu(), labels.npu(non_blocking=True)", "training batch"),
    C("inputs, labels = inputs.cuda(non_blocking=True), labels.cuda(non_blocking=True)", "tensor_to_device",
      "replace", True, "inputs, labels = inputs.npu(non_blocking=True), labels.npu(non_blocking=True)",
      "test batch"),
    C("=loss_fun = builders.build_loss_fun().cuda()", "tensor_to_device", "replace", False,
      "loss_fun = builders.build_loss_fun().npu()", NOPARAM_CUDA),
    C("loss_fun = builders.build_loss_fun().cuda()  # only used by the timing loop", "tensor_to_device", "replace",
      False, "loss_fun = builders.build_loss_fun().npu()  # only used by the timing loop", NOPARAM_CUDA),
])

E("delg_benchmark", "DELG-pytorch/core/benchmark.py", "explicit_replacement",
  "pycls core/benchmark.py (precise fw/bw timing with dummy batches)", [
    C("inputs = torch.zeros(batch_size, 3, im_size, im_size).cuda(non_blocking=False)", "tensor_to_device",
      "replace", True, "inputs = torch.zeros(batch_size, 3, im_size, im_size).npu(non_blocking=False)",
      "dummy eval batch"),
    C("labels = torch.zeros(batch_size, dtype=torch.int64).cuda(non_blocking=False)", "tensor_to_device",
      "replace", True, "labels = torch.zeros(batch_size, dtype=torch.int64).npu(non_blocking=False)",
      "dummy eval labels"),
    C("torch.cuda.current_stream().synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().synchronize()", "CUDA stream API; also needed for correct NPU timings"),
    C("inputs = torch.rand(batch_size, 3, im_size, im_size).cuda(non_blocking=False)", "tensor_to_device",
      "replace", True, "inputs = torch.rand(batch_size, 3, im_size, im_size).npu(non_blocking=False)",
      "dummy train batch"),
    C("labels = torch.zeros(batch_size, dtype=torch.int64).cuda(non_blocking=True)", "tensor_to_device",
      "replace", True, "labels = torch.zeros(batch_size, dtype=torch.int64).npu(non_blocking=True)",
      "dummy train labels"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA; NPU kernels are asynchronous too"),
    C("torch.cuda.synchronize()  # wait for the backward kernels", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for the backward kernels before stopping the timer", "same"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE),
])

E("delg_model", "DELG-pytorch/model/delg_model.py", "explicit_replacement",
  "DELG model (GeM global head, ArcFace / ArcMarginProduct, spatial attention + autoencoder local head)", [
    C("one_hot = torch.zeros(cosine.size(), device='cuda')", "tensor_to_device", "replace", True,
      "one_hot = torch.zeros(cosine.size(), device=cosine.device)",
      "hard-coded CUDA device in the classic ArcFace head"),
])

E("delg_extract", "DELG-pytorch/test/extract_delg.py", "explicit_replacement",
  "DELG global+local feature extraction script for revisited Oxford/Paris", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("im = torch.from_numpy(im).unsqueeze(0).cuda()", "tensor_to_device", "replace", True,
      "im = torch.from_numpy(im).unsqueeze(0).npu()", "global-descriptor image"),
    C("inp = torch.from_numpy(im).unsqueeze(0).cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "inp = torch.from_numpy(im).unsqueeze(0).npu(non_blocking=True)", "local-feature image"),
    C("torch.cuda.get_device_name(gpu_ids[0])", "torch_cuda_api", "replace", True,
      'print("Extracting on {} x {}".format(len(gpu_ids), torch.npu.get_device_name(gpu_ids[0])))',
      "CUDA runtime query raises without CUDA"),
    C("model = nn.DataParallel(model, device_ids=gpu_ids).cuda(gpu_ids[0])", "distributed_framework", "replace",
      True, "model = model.npu(gpu_ids[0])",
      "nn.DataParallel is not supported on Ascend (and .cuda() fails); extraction only uses model.module anyway"),
    C("=delg = model.module", "distributed_framework", "replace", True, "delg = model",
      "follows from dropping the DataParallel wrapper"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA; keeps the s/img figure honest on NPU"),
])

E("delg_yaml", "DELG-pytorch/configs/resnet50_delg_8gpu.yaml", "explicit_replacement",
  "pycls/DELG yaml config for 8-GPU GLDv2 training", [
    C("DIST_BACKEND: nccl", "dist_backend", "replace", True, "DIST_BACKEND: hccl",
      "overrides the config default; NCCL does not exist on Ascend"),
])

E("delg_docker", "DELG-pytorch/Dockerfile", "explicit_replacement",
  "CUDA devel base image with cu113 torch wheels and faiss-gpu for DELG-pytorch", [
    C("FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04", "import_torch_npu", "replace", True,
      "FROM quay.io/ascend/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "needs a CANN base (toolkit + set_env exports) instead of the CUDA image"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=all",
      "read by nvidia-container-runtime only; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES (or --device "
      "/dev/davinciN)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA container runtime setting; no effect on Ascend"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6"', "env_var", "removal", False, None,
      "only consulted when building CUDA extensions"),
    C("RUN pip install torch==1.10.1+cu113 torchvision==0.11.2+cu113 \\", "import_torch_npu", "replace", True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post17 \\",
      "+cu113 wheels do not exist for aarch64 and are CUDA builds; torch must match the torch-npu pin (CANN 8.3.RC1)"),
    C("-f https://download.pytorch.org/whl/cu113/torch_stable.html", "import_torch_npu", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; after re-pinning it no longer matches anything (pip falls back to PyPI)"),
    C("RUN pip install faiss-gpu==1.7.2", "unsupported_op_workaround", "replace", True,
      "RUN pip install faiss-cpu==1.7.4", "faiss-gpu is CUDA-only"),
])

E("delg_sh", "DELG-pytorch/scripts/train_delg_multinode.sh", "explicit_replacement",
  "multi-node torch.distributed.launch script with NCCL tuning variables", [
    C("=#!/bin/bash", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment for torch_npu/HCCL"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "lists all eight devices, so ignoring it changes nothing on an 8-NPU node"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", True, "export HCCL_SOCKET_IFNAME=eth0",
      "multi-node: HCCL picks the host NIC by its own priority when unset; the NIC was pinned for a reason "
      "and a wrong pick fails link setup"),
    C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None,
      "no HCCL counterpart; HCCL uses the NPU's own RoCE ports"),
    C("export NCCL_IB_HCA=mlx5_0,mlx5_1", "env_var", "removal", False, None,
      "host InfiniBand HCAs are not used by HCCL"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "logging only"),
    C("nvidia-smi -L", "torch_cuda_api", "replace", False, "npu-smi info",
      "diagnostic; no set -e so the failure is not fatal"),
    C("DIST_BACKEND nccl \\", "dist_backend", "replace", True, "DIST_BACKEND hccl \\",
      "command-line override of the yaml/config backend"),
])

# --------------------------------------------------------------------------------------------
# GLR2020-style post-processing
# --------------------------------------------------------------------------------------------
E("glr_rerank", "glr2020-solution/src/postprocess/rerank.py", "device_branch_or_abstraction",
  "Kaggle landmark-retrieval post-processing (alpha-QE, GPU k-reciprocal re-ranking, faiss GPU kNN diffusion)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      'if hasattr(torch, "npu") and torch.npu.is_available(): return torch.device("npu:{}".format(gpu_id))',
      "the CUDA test is False on an NPU host: re-ranking would silently run on the CPU; add an NPU branch to the "
      "device helper"),
    C("if not x.is_cuda:", "torch_cuda_api", "replace", False, "if x.device != device:",
      "is_cuda is False for NPU tensors, but once the next line uses .to(device) the extra move is a no-op"),
    C("x = x.cuda(device)", "tensor_to_device", "replace", True, "x = x.to(device)",
      ".cuda() fails without CUDA; route through the helper's device"),
    C('feats = torch.as_tensor(feats, dtype=torch.float32, device="cuda")', "tensor_to_device", "replace", True,
      "feats = torch.as_tensor(feats, dtype=torch.float32, device=get_device())", "hard-coded device string"),
    C("feat = torch.cat([probFea, galFea]).cuda()", "tensor_to_device", "replace", True,
      "feat = torch.cat([probFea, galFea]).to(get_device())", "distance matrix computed on device"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache() if hasattr(torch, \"npu\") else torch.cuda.empty_cache()", EMPTY_CACHE),
    C("=res = faiss.StandardGpuResources()", "unsupported_op_workaround", "removal", True, None,
      "faiss GPU resources need CUDA; no CPU fallback in this function"),
    C("res.setTempMemory(1024 * 1024 * 1024)", "unsupported_op_workaround", "removal", True, None,
      "goes with the GPU resources"),
    C("flat_config = faiss.GpuIndexFlatConfig()", "unsupported_op_workaround", "removal", True, None,
      "GPU-only config class (absent from faiss-cpu)"),
    C("flat_config.device = gpu_id", "unsupported_op_workaround", "removal", True, None, "GPU-only config"),
    C("flat_config.useFloat16 = True", "unsupported_op_workaround", "removal", True, None, "GPU-only config"),
    C("index = faiss.GpuIndexFlatIP(res, d, flat_config)", "unsupported_op_workaround", "replace", True,
      "index = faiss.IndexFlatIP(d)", "CPU exact inner-product index (faiss-cpu on the NPU host)"),
])
