# Labels for probe303: temporal / dynamic graph learning (TGN, TGAT, JODIE, TGL, DyGLib, DySAT, TGB).
# One C(...) per upstream line a careful porter would edit for torch_npu on Ascend.
# Target stack for the ported lines: torch 2.1.0 + torch-npu 2.1.0.post12 (CANN 8.1.RC1 line of the
# compatibility matrix), i.e. *before* the device-backend autoload of torch_npu 2.5.1.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_ENTRY = ("entry script of a torch 2.1 / torch_npu 2.1.0.postN stack: no backend autoload before torch_npu 2.5.1, "
                "so torch.npu, Tensor.npu() and HCCL only exist after an explicit import")
CUDA_AVAIL_FALLBACK = ("torch.cuda.is_available() is False on an Ascend host, so the unchanged line silently "
                       "selects the CPU and the whole run trains there")
DOT_CUDA = "Tensor/Module.cuda() raises on a torch build without CUDA (Ascend hosts use the CPU torch wheel + torch_npu)"
DGL_CAVEAT = (" DGL itself has no NPU backend as far as I know (not covered by the knowledge notes): the port of this "
              "line is plausible only if the graph block can stay on the host or DGL is replaced")
SEED_NOOP = ("torch.cuda seeding is a lazy no-op without CUDA; torch.manual_seed in the same function already seeds "
             "every registered device generator (PrivateUse1 included, unconfirmed for torch 2.1) - only reproducibility hygiene")
PIN_NOTE = ("pinned host staging buffer: on torch 2.1 the default pinned allocator behind pin_memory=True / .pin_memory() "
            "is CUDA's, so whether this pins for the NPU (or raises / silently stays pageable) is unconfirmed; "
            "performance-critical for TGL's async feature copies")
MEM_STAT = "logged statistic only: torch.cuda memory counters return 0 when CUDA was never initialised"
SET_ENV = ("CANN environment must be sourced before python imports torch_npu (otherwise 'libhccl.so: cannot open shared "
           "object file ... Please run source set_env.sh'); assumes the default toolkit install path")

# --------------------------------------------------------------------------------------------- TGN
E("tgn_train_ssl", "train_self_supervised.py", "device_branch_or_abstraction",
  "twitter-research/tgn train_self_supervised.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("device_string = 'cuda:{}'.format(GPU) if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
      "device_string = 'npu:{}'.format(GPU) if torch.npu.is_available() else 'cpu'", CUDA_AVAIL_FALLBACK),
])

E("tgn_train_sup", "train_supervised.py", "device_branch_or_abstraction",
  "twitter-research/tgn train_supervised.py (node classification on a pretrained TGN)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("device_string = 'cuda:{}'.format(GPU) if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
      "device_string = 'npu:{}'.format(GPU) if torch.npu.is_available() else 'cpu'", CUDA_AVAIL_FALLBACK),
    C("tgn.load_state_dict(torch.load(model_path))", "tensor_to_device", "replace", True,
      "tgn.load_state_dict(torch.load(model_path, map_location=device))",
      "--pretrained_path is documented for the released checkpoints trained on a V100: their tensors are tagged cuda:0 "
      "and torch.load raises 'Attempting to deserialize object on a CUDA device' without map_location"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA (torch.cuda.empty_cache only acts once CUDA is initialised): the flag stops doing anything"),
])

E("tgn_utils", "utils/utils.py", "device_branch_or_abstraction",
  "twitter-research/tgn utils/utils.py (numpy NeighborFinder, samplers, early stopping)", [])

# -------------------------------------------------------------------------------------------- TGAT
E("tgat_learn_edge", "learn_edge.py", "explicit_replacement",
  "StatsDLMathsRecomSys/Inductive-representation-learning-on-temporal-graphs learn_edge.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("device = torch.device('cuda:{}'.format(GPU))", "device_type", "replace", True,
      "device = torch.device('npu:{}'.format(GPU))",
      "unconditional CUDA device: tgan.to(device) and every tensor created with device=device fail"),
    C("time.time() - epoch_start, torch.cuda.max_memory_allocated(device) / 1024 ** 2))", "torch_cuda_api", "replace", False,
      "time.time() - epoch_start, torch.npu.max_memory_allocated(device) / 1024 ** 2))", MEM_STAT),
])

E("tgat_module", "module.py", "device_branch_or_abstraction",
  "TGAT module.py (TGAN, AttnModel, TimeEncode; follows the parameters' device)", [])

# ------------------------------------------------------------------------------------------- JODIE
NPU_T = DOT_CUDA
E("jodie_models", "library_models.py", "explicit_replacement",
  "srijankr/jodie library_models.py (model, t-batch state, checkpoints, GPU picker)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "library_models is star-imported by jodie.py and every evaluate_* script before any device work, so this is "
      "the one place that covers all entry points; " + IMPORT_ENTRY),
    C("=import gpustat", "device_capability_check", "removal", False, None,
      "NVML-only helper; unused once select_free_gpu queries the NPU (the import itself still succeeds)"),
    C("y = Variable(torch.LongTensor(y_true).cuda()[tbatch_interactionids])", "tensor_to_device", "replace", True,
      "y = Variable(torch.LongTensor(y_true).npu()[tbatch_interactionids])", NPU_T),
    C("user_embeddings = Variable(torch.from_numpy(checkpoint['user_embeddings']).cuda())", "tensor_to_device", "replace", True,
      "user_embeddings = Variable(torch.from_numpy(checkpoint['user_embeddings']).npu())", NPU_T),
    C("item_embeddings = Variable(torch.from_numpy(checkpoint['item_embeddings']).cuda())", "tensor_to_device", "replace", True,
      "item_embeddings = Variable(torch.from_numpy(checkpoint['item_embeddings']).npu())", NPU_T),
    C("user_embeddings_time_series = Variable(torch.from_numpy(checkpoint['user_embeddings_time_series']).cuda())",
      "tensor_to_device", "replace", True,
      "user_embeddings_time_series = Variable(torch.from_numpy(checkpoint['user_embeddings_time_series']).npu())",
      "inside a bare try/except: the failure is swallowed, the trajectories silently become None and "
      "set_embeddings_training_end crashes later; " + NPU_T),
    C("item_embeddings_time_series = Variable(torch.from_numpy(checkpoint['item_embeddings_time_series']).cuda())",
      "tensor_to_device", "replace", True,
      "item_embeddings_time_series = Variable(torch.from_numpy(checkpoint['item_embeddings_time_series']).npu())",
      "same bare try/except as the line above; " + NPU_T),
    C("gpus = list(set(range(torch.cuda.device_count())))", "torch_cuda_api", "replace", True,
      "gpus = list(set(range(torch.npu.device_count())))",
      "device_count() is 0 without CUDA, so np.argmin([]) raises when --gpu is left at -1 (the default)"),
    C("gpu_stats = gpustat.GPUStatCollection.new_query()", "device_capability_check", "replace", True,
      "free_mem, total_mem = torch.npu.mem_get_info(i)",
      "NVML query: no NVIDIA driver on an Ascend host. Caveat: mem_get_info initialises the NPU runtime before "
      "jodie.py sets ASCEND_RT_VISIBLE_DEVICES; parsing `npu-smi info` avoids that"),
    C('mem.append(gpu_stats.jsonify()["gpus"][i]["memory.used"])', "device_capability_check", "replace", True,
      "mem.append(total_mem - free_mem)", "second half of the NVML -> torch.npu replacement above"),
])

E("jodie_main", "jodie.py", "explicit_replacement", "srijankr/jodie jodie.py (t-batch training loop)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(args.gpu)', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(args.gpu)',
      "ignored by the Ascend runtime: every .npu() below uses logical device 0, so --gpu N silently runs on card 0 "
      "(parallel jobs pile onto one NPU)"),
    C("model = JODIE(args, num_features, num_users, num_items).cuda()", "tensor_to_device", "replace", True,
      "model = JODIE(args, num_features, num_users, num_items).npu()", DOT_CUDA),
    C("weight = torch.Tensor([1,true_labels_ratio]).cuda()", "tensor_to_device", "replace", True,
      "weight = torch.Tensor([1,true_labels_ratio]).npu()", DOT_CUDA),
    C("initial_user_embedding = nn.Parameter(F.normalize(torch.rand(args.embedding_dim).cuda(), dim=0))",
      "tensor_to_device", "replace", True,
      "initial_user_embedding = nn.Parameter(F.normalize(torch.rand(args.embedding_dim).npu(), dim=0))", DOT_CUDA),
    C("initial_item_embedding = nn.Parameter(F.normalize(torch.rand(args.embedding_dim).cuda(), dim=0))",
      "tensor_to_device", "replace", True,
      "initial_item_embedding = nn.Parameter(F.normalize(torch.rand(args.embedding_dim).npu(), dim=0))", DOT_CUDA),
    C("item_embedding_static = Variable(torch.eye(num_items).cuda())", "tensor_to_device", "replace", True,
      "item_embedding_static = Variable(torch.eye(num_items).npu())", DOT_CUDA),
    C("user_embedding_static = Variable(torch.eye(num_users).cuda())", "tensor_to_device", "replace", True,
      "user_embedding_static = Variable(torch.eye(num_users).npu())", DOT_CUDA),
    C("user_embeddings_timeseries = Variable(torch.Tensor(num_interactions, args.embedding_dim).cuda())",
      "tensor_to_device", "replace", True,
      "user_embeddings_timeseries = Variable(torch.Tensor(num_interactions, args.embedding_dim).npu())", DOT_CUDA),
    C("item_embeddings_timeseries = Variable(torch.Tensor(num_interactions, args.embedding_dim).cuda())",
      "tensor_to_device", "replace", True,
      "item_embeddings_timeseries = Variable(torch.Tensor(num_interactions, args.embedding_dim).npu())", DOT_CUDA),
    C("tbatch_userids = torch.LongTensor(lib.current_tbatches_user[i]).cuda()", "tensor_to_device", "replace", True,
      "tbatch_userids = torch.LongTensor(lib.current_tbatches_user[i]).npu() # Recall \"lib.current_tbatches_user[i]\" has unique elements",
      DOT_CUDA),
    C("tbatch_itemids = torch.LongTensor(lib.current_tbatches_item[i]).cuda()", "tensor_to_device", "replace", True,
      "tbatch_itemids = torch.LongTensor(lib.current_tbatches_item[i]).npu() # Recall \"lib.current_tbatches_item[i]\" has unique elements",
      DOT_CUDA),
    C("tbatch_interactionids = torch.LongTensor(lib.current_tbatches_interactionids[i]).cuda()", "tensor_to_device",
      "replace", True, "tbatch_interactionids = torch.LongTensor(lib.current_tbatches_interactionids[i]).npu()", DOT_CUDA),
    C("feature_tensor = Variable(torch.Tensor(lib.current_tbatches_feature[i]).cuda())", "tensor_to_device", "replace",
      True, "feature_tensor = Variable(torch.Tensor(lib.current_tbatches_feature[i]).npu())", DOT_CUDA),
    C("user_timediffs_tensor = Variable(torch.Tensor(lib.current_tbatches_user_timediffs[i]).cuda()).unsqueeze(1)",
      "tensor_to_device", "replace", True,
      "user_timediffs_tensor = Variable(torch.Tensor(lib.current_tbatches_user_timediffs[i]).npu()).unsqueeze(1)", DOT_CUDA),
    C("item_timediffs_tensor = Variable(torch.Tensor(lib.current_tbatches_item_timediffs[i]).cuda()).unsqueeze(1)",
      "tensor_to_device", "replace", True,
      "item_timediffs_tensor = Variable(torch.Tensor(lib.current_tbatches_item_timediffs[i]).npu()).unsqueeze(1)", DOT_CUDA),
    C("tbatch_itemids_previous = torch.LongTensor(lib.current_tbatches_previous_item[i]).cuda()", "tensor_to_device",
      "replace", True, "tbatch_itemids_previous = torch.LongTensor(lib.current_tbatches_previous_item[i]).npu()", DOT_CUDA),
])

CUDA_LONG = "torch.cuda.LongTensor is a CUDA tensor type: 'type torch.cuda.LongTensor not available' without CUDA"
E("jodie_eval", "evaluate_interaction_prediction.py", "explicit_replacement",
  "srijankr/jodie evaluate_interaction_prediction.py", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(args.gpu)', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(args.gpu)',
      "ignored by the Ascend runtime: the evaluation silently runs on card 0 whatever --gpu says"),
    C("model = JODIE(args, num_features, num_users, num_items).cuda()", "tensor_to_device", "replace", True,
      "model = JODIE(args, num_features, num_users, num_items).npu()", DOT_CUDA),
    C("weight = torch.Tensor([1,true_labels_ratio]).cuda()", "tensor_to_device", "replace", True,
      "weight = torch.Tensor([1,true_labels_ratio]).npu()", DOT_CUDA),
    C("user_embedding_input = user_embeddings[torch.cuda.LongTensor([userid])]", "torch_cuda_api", "replace", True,
      "user_embedding_input = user_embeddings[torch.LongTensor([userid]).npu()]", CUDA_LONG),
    C("user_embedding_static_input = user_embeddings_static[torch.cuda.LongTensor([userid])]", "torch_cuda_api",
      "replace", True, "user_embedding_static_input = user_embeddings_static[torch.LongTensor([userid]).npu()]", CUDA_LONG),
    C("item_embedding_input = item_embeddings[torch.cuda.LongTensor([itemid])]", "torch_cuda_api", "replace", True,
      "item_embedding_input = item_embeddings[torch.LongTensor([itemid]).npu()]", CUDA_LONG),
    C("item_embedding_static_input = item_embeddings_static[torch.cuda.LongTensor([itemid])]", "torch_cuda_api",
      "replace", True, "item_embedding_static_input = item_embeddings_static[torch.LongTensor([itemid]).npu()]", CUDA_LONG),
    C("feature_tensor = Variable(torch.Tensor(feature).cuda()).unsqueeze(0)", "tensor_to_device", "replace", True,
      "feature_tensor = Variable(torch.Tensor(feature).npu()).unsqueeze(0)", DOT_CUDA),
    C("user_timediffs_tensor = Variable(torch.Tensor([user_timediff]).cuda()).unsqueeze(0)", "tensor_to_device",
      "replace", True, "user_timediffs_tensor = Variable(torch.Tensor([user_timediff]).npu()).unsqueeze(0)", DOT_CUDA),
    C("item_timediffs_tensor = Variable(torch.Tensor([item_timediff]).cuda()).unsqueeze(0)", "tensor_to_device",
      "replace", True, "item_timediffs_tensor = Variable(torch.Tensor([item_timediff]).npu()).unsqueeze(0)", DOT_CUDA),
    C("item_embedding_previous = item_embeddings[torch.cuda.LongTensor([itemid_previous])]", "torch_cuda_api", "replace",
      True, "item_embedding_previous = item_embeddings[torch.LongTensor([itemid_previous]).npu()]", CUDA_LONG),
    C("item_embeddings_static[torch.cuda.LongTensor([itemid_previous])], user_embedding_static_input], dim=1)",
      "torch_cuda_api", "replace", True,
      "user_item_embedding = torch.cat([user_projected_embedding, item_embedding_previous, "
      "item_embeddings_static[torch.LongTensor([itemid_previous]).npu()], user_embedding_static_input], dim=1)", CUDA_LONG),
])

# --------------------------------------------------------------------------------------------- TGL
E("tgl_train", "train.py", "explicit_replacement", "amazon-research/tgl train.py (single-GPU trainer)", [
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu",
      "TGL hard-codes device 0 everywhere (utils.py, layers.py, memorys.py) and relies on this mask to pick the card; "
      "the CUDA variable is ignored on Ascend, so --gpu N silently trains on card 0"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "set_seed() is never called here (commented out); " + SEED_NOOP),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "only reached with --profile, but then it raises on a torch build without CUDA"),
    C("combined=combine_first).cuda()", "tensor_to_device", "replace", True,
      "model = GeneralModel(gnn_dim_node, gnn_dim_edge, sample_param, memory_param, gnn_param, train_param, combined=combine_first).npu()",
      DOT_CUDA),
    C("node_feats = node_feats.cuda()", "tensor_to_device", "replace", True, "node_feats = node_feats.npu()",
      "all_on_gpu path (on by default in the shipped configs); " + DOT_CUDA),
    C("edge_feats = edge_feats.cuda()", "tensor_to_device", "replace", True, "edge_feats = edge_feats.npu()",
      "all_on_gpu path; " + DOT_CUDA),
    C("torch.cuda.max_memory_allocated() / (1024 ** 3)", "torch_cuda_api", "replace", False,
      "print('\\tpeak NPU memory: {:.2f}GB'.format(torch.npu.max_memory_allocated() / (1024 ** 3)))", MEM_STAT),
])

E("tgl_utils", "utils.py", "explicit_replacement",
  "amazon-research/tgl utils.py (DGL MFG construction, feature staging, pinned buffers)", [
    C("mfgs.append(b.to('cuda:0'))", "tensor_to_device", "replace", True, "mfgs.append(b.to('npu:0'))",
      "moves the DGL block to a CUDA device that does not exist on an Ascend host." + DGL_CAVEAT),
    C("mfgs.insert(0, [b.to('cuda:0')])", "tensor_to_device", "replace", True, "mfgs.insert(0, [b.to('npu:0')])",
      "same as to_dgl_blocks." + DGL_CAVEAT),
    C("mfg[i] = mfg[i].to('cuda:0')", "tensor_to_device", "replace", True, "mfg[i] = mfg[i].to('npu:0')",
      "used by train_dist.py for every mini-batch." + DGL_CAVEAT),
    C("num_dst_nodes=num_dst, device=torch.device('cuda:0'))", "device_type", "replace", True,
      "b = dgl.create_block((idx + num_dst, mfgs[0][i].edges()[1]), num_src_nodes=unts.shape[0] + num_dst, "
      "num_dst_nodes=num_dst, device=torch.device('npu:0'))",
      "combine_first path builds the block directly on cuda:0." + DGL_CAVEAT),
    C("b.srcdata['h'] = nfeat_buffs[i][:idx.shape[0]].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "b.srcdata['h'] = nfeat_buffs[i][:idx.shape[0]].npu(non_blocking=True)", DOT_CUDA),
    C("b.srcdata['h'] = srch.cuda()", "tensor_to_device", "replace", True, "b.srcdata['h'] = srch.npu()", DOT_CUDA),
    C("b.edata['f'] = efeat_buffs[i][:idx.shape[0]].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "b.edata['f'] = efeat_buffs[i][:idx.shape[0]].npu(non_blocking=True)", DOT_CUDA),
    C("b.edata['f'] = srch.cuda()", "tensor_to_device", "replace", True, "b.edata['f'] = srch.npu()", DOT_CUDA),
    C("pinned_efeat_buffs.insert(0, torch.zeros((limit, edge_feats.shape[1]), pin_memory=True))", "pin_memory",
      "replace", False,
      "pinned_efeat_buffs.insert(0, torch.zeros((limit, edge_feats.shape[1])).pin_memory('npu'))", PIN_NOTE),
    C("pinned_nfeat_buffs.insert(0, torch.zeros((limit, node_feats.shape[1]), pin_memory=True))", "pin_memory",
      "replace", False,
      "pinned_nfeat_buffs.insert(0, torch.zeros((limit, node_feats.shape[1])).pin_memory('npu'))", PIN_NOTE),
    C("alloc = torch.cuda.memory_allocated() / (1024 ** 3)", "torch_cuda_api", "replace", False,
      "alloc = torch.npu.memory_allocated() / (1024 ** 3)", MEM_STAT),
    C("reserved = torch.cuda.memory_reserved() / (1024 ** 3)", "torch_cuda_api", "replace", False,
      "reserved = torch.npu.memory_reserved() / (1024 ** 3)", MEM_STAT),
])

E("tgl_memorys", "memorys.py", "explicit_replacement",
  "amazon-research/tgl memorys.py (MailBox node memory, GRU/RNN/Transformer updaters)", [
    C("self.node_memory = self.node_memory.cuda()", "tensor_to_device", "replace", True,
      "self.node_memory = self.node_memory.npu()", DOT_CUDA),
    C("self.node_memory_ts = self.node_memory_ts.cuda()", "tensor_to_device", "replace", True,
      "self.node_memory_ts = self.node_memory_ts.npu()", DOT_CUDA),
    C("self.mailbox = self.mailbox.cuda()", "tensor_to_device", "replace", True,
      "self.mailbox = self.mailbox.npu()", DOT_CUDA),
    C("self.mailbox_ts = self.mailbox_ts.cuda()", "tensor_to_device", "replace", True,
      "self.mailbox_ts = self.mailbox_ts.npu()", DOT_CUDA),
    C("self.next_mail_pos = self.next_mail_pos.cuda()", "tensor_to_device", "replace", True,
      "self.next_mail_pos = self.next_mail_pos.npu()", DOT_CUDA),
    C("self.device = torch.device('cuda:0')", "device_type", "replace", True, "self.device = torch.device('npu:0')",
      "every later .to(self.device) in update_memory/update_mailbox targets this device"),
    C("self.pinned_buffers.append(torch.zeros((limit, self.node_memory.shape[1]), pin_memory=True))", "pin_memory",
      "replace", False,
      "self.pinned_buffers.append(torch.zeros((limit, self.node_memory.shape[1])).pin_memory('npu'))", PIN_NOTE),
    C("self.pinned_buffers.append(torch.zeros(limit, pin_memory=True))", "pin_memory", "replace", False,
      "self.pinned_buffers.append(torch.zeros(limit).pin_memory('npu'))", PIN_NOTE),
    C("self.pinned_buffers.append(torch.zeros((limit, self.mailbox.shape[1], self.mailbox.shape[2]), pin_memory=True))",
      "pin_memory", "replace", False,
      "self.pinned_buffers.append(torch.zeros((limit, self.mailbox.shape[1], self.mailbox.shape[2])).pin_memory('npu'))",
      PIN_NOTE),
    C("self.pinned_buffers.append(torch.zeros((limit, self.mailbox_ts.shape[1]), pin_memory=True))", "pin_memory",
      "replace", False,
      "self.pinned_buffers.append(torch.zeros((limit, self.mailbox_ts.shape[1])).pin_memory('npu'))", PIN_NOTE),
    C("b.srcdata['mem'] = self.pinned_buffers[0][:idx.shape[0]].cuda(non_blocking=True)", "tensor_to_device", "replace",
      True, "b.srcdata['mem'] = self.pinned_buffers[0][:idx.shape[0]].npu(non_blocking=True)", DOT_CUDA),
    C("b.srcdata['mem_ts'] = self.pinned_buffers[1][:idx.shape[0]].cuda(non_blocking=True)", "tensor_to_device",
      "replace", True, "b.srcdata['mem_ts'] = self.pinned_buffers[1][:idx.shape[0]].npu(non_blocking=True)", DOT_CUDA),
    C("b.srcdata['mem_input'] = self.pinned_buffers[2][:idx.shape[0]]", "tensor_to_device", "replace", True,
      "b.srcdata['mem_input'] = self.pinned_buffers[2][:idx.shape[0]].reshape(b.srcdata['ID'].shape[0], -1).npu(non_blocking=True)",
      DOT_CUDA),
    C("b.srcdata['mail_ts'] = self.pinned_buffers[3][:idx.shape[0]].cuda(non_blocking=True)", "tensor_to_device",
      "replace", True, "b.srcdata['mail_ts'] = self.pinned_buffers[3][:idx.shape[0]].npu(non_blocking=True)", DOT_CUDA),
    C("idx = idx.cuda()", "tensor_to_device", "replace", True, "idx = idx.npu()",
      "memory-resident (all_on_gpu) path; " + DOT_CUDA),
])

HARD_DEV = "hard-coded cuda:0 allocation inside the attention layer: fails on an Ascend host"
E("tgl_layers", "layers.py", "explicit_replacement",
  "amazon-research/tgl layers.py (TimeEncode, TransfomerAttentionLayer on DGL blocks)", [
    C("return torch.zeros((b.num_dst_nodes(), self.dim_out), device=torch.device('cuda:0'))", "device_type", "replace",
      True, "return torch.zeros((b.num_dst_nodes(), self.dim_out), device=torch.device('npu:0'))", HARD_DEV),
    C("zero_time_feat = self.time_enc(torch.zeros(b.num_dst_nodes(), dtype=torch.float32, device=torch.device('cuda:0')))",
      "device_type", "replace", True,
      "zero_time_feat = self.time_enc(torch.zeros(b.num_dst_nodes(), dtype=torch.float32, device=torch.device('npu:0')))",
      HARD_DEV),
    C("Q = torch.zeros((b.num_edges(), self.dim_out), device=torch.device('cuda:0'))", "device_type", "replace", True,
      "Q = torch.zeros((b.num_edges(), self.dim_out), device=torch.device('npu:0'))", HARD_DEV),
    C("K = torch.zeros((b.num_edges(), self.dim_out), device=torch.device('cuda:0'))", "device_type", "replace", True,
      "K = torch.zeros((b.num_edges(), self.dim_out), device=torch.device('npu:0'))", HARD_DEV),
    C("V = torch.zeros((b.num_edges(), self.dim_out), device=torch.device('cuda:0'))", "device_type", "replace", True,
      "V = torch.zeros((b.num_edges(), self.dim_out), device=torch.device('npu:0'))", HARD_DEV),
    C("b.srcdata['v'] = torch.cat([torch.zeros((b.num_dst_nodes(), V.shape[1]), device=torch.device('cuda:0')), V], dim=0)",
      "device_type", "replace", True,
      "b.srcdata['v'] = torch.cat([torch.zeros((b.num_dst_nodes(), V.shape[1]), device=torch.device('npu:0')), V], dim=0)",
      HARD_DEV),
    C("Q = torch.ones((b.num_edges(), self.dim_out), device=torch.device('cuda:0'))", "device_type", "replace", True,
      "Q = torch.ones((b.num_edges(), self.dim_out), device=torch.device('npu:0'))", HARD_DEV),
])

E("tgl_train_dist", "train_dist.py", "explicit_replacement",
  "amazon-research/tgl train_dist.py (N GPU trainers + 1 host sampler process, gloo + NCCL groups)", [
    C("os.environ['CUDA_VISIBLE_DEVICES'] = str(args.local_rank)", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = str(args.local_rank)",
      "per-rank device mask: ignored on Ascend, so every trainer would sit on card 0 (set_device(0) below) and the "
      "HCCL group would map several ranks to one device"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)", SEED_NOOP),
    C("nccl_group = torch.distributed.new_group(ranks=list(range(args.num_gpus)), backend='nccl')", "dist_backend",
      "replace", True,
      "nccl_group = torch.distributed.new_group(ranks=list(range(args.num_gpus)), backend='hccl')",
      "no NCCL on Ascend; the trainer sub-group must use HCCL (the gloo world group above stays as is)"),
    C("torch.cuda.set_device(0)", "torch_cuda_api", "replace", True, "torch.npu.set_device(0)",
      "raises on a torch build without CUDA"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True, "with torch.npu.stream(self.stream):",
      "side-stream prefetch of the next mini-batch; CUDA stream context fails without CUDA"),
    C("model = GeneralModel(gnn_dim_node, gnn_dim_edge, sample_param, memory_param, gnn_param, train_param).cuda()",
      "tensor_to_device", "replace", True,
      "model = GeneralModel(gnn_dim_node, gnn_dim_edge, sample_param, memory_param, gnn_param, train_param).npu()",
      DOT_CUDA),
    C("model.load_state_dict(torch.load(path_saver, map_location=torch.device('cuda:0')))", "device_type", "replace", True,
      "model.load_state_dict(torch.load(path_saver, map_location=torch.device('npu:0')))",
      "map_location names a CUDA device: deserialisation fails on an Ascend host"),
    C("=stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "stream = torch.npu.Stream()",
      "CUDA stream object; fails without CUDA"),
    C("stream = torch.cuda.Stream()  # first mini-batch", "torch_cuda_api", "replace", True,
      "stream = torch.npu.Stream()  # first mini-batch: nothing to overlap with yet", "CUDA stream object; fails without CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "end-of-training sync on every trainer; raises without CUDA"),
])

E("tgl_setup", "setup.py", "explicit_replacement",
  "amazon-research/tgl setup.py (pybind11 + OpenMP build of the C++ temporal sampler)", [])

E("tgl_config", "config/dist/TGN.yml", "explicit_replacement",
  "amazon-research/tgl config/dist/TGN.yml", [])

E("tgl_run_dist", "scripts/run_dist.sh", "explicit_replacement",
  "TGL multi-GPU launcher script (torch.distributed.launch, NGPU + 1 processes)", [
    C("=set -e", "import_torch_npu", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV),
    C("export NCCL_DEBUG=${NCCL_DEBUG:-WARN}", "env_var", "replace", False,
      "export ASCEND_GLOBAL_LOG_LEVEL=${ASCEND_GLOBAL_LOG_LEVEL:-3}",
      "NCCL_* variables are ignored by HCCL; the CANN log level is the nearest knob (level mapping unconfirmed)"),
    C("export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-lo}", "env_var", "replace", False,
      "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-lo}",
      "ignored by HCCL; HCCL_SOCKET_IFNAME selects the host NIC for the root-info exchange (single node, so optional)"),
    C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv,noheader", "device_capability_check",
      "replace", True, "npu-smi info",
      "nvidia-smi does not exist on an Ascend host and the script runs under set -e, so it aborts here"),
])

# ------------------------------------------------------------------------------------------ DyGLib
E("dyglib_utils", "utils/utils.py", "device_branch_or_abstraction",
  "yule-BUAA/DyGLib utils/utils.py (seeding, convert_to_gpu, optimizers, NeighborSampler)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "only needed for the optional torch_npu.optim.NpuFusedAdamW swap below"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "guard of the device seeding below; dead branch on Ascend. " + SEED_NOOP),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)", SEED_NOOP),
    C("optimizer = torch.optim.AdamW(params=model.parameters(), lr=learning_rate, weight_decay=weight_decay,",
      "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(params=model.parameters(), lr=learning_rate, weight_decay=weight_decay)",
      "performance only: the CUDA fused path is skipped on Ascend (see next line); torch_npu's tensor-fused AdamW "
      "restores it (msFmkTransplt's AdamW advice: faster, more memory)"),
    C("fused=torch.cuda.is_available())", "fused_optimizer", "removal", False, None,
      "evaluates to False on Ascend, so the unchanged code runs the plain AdamW and works; dropped with the "
      "NpuFusedAdamW swap"),
])

E("dyglib_load_configs", "utils/load_configs.py", "device_branch_or_abstraction",
  "yule-BUAA/DyGLib utils/load_configs.py (argparse + best configs; resolves args.device)", [
    C("args.device = f'cuda:{args.gpu}' if torch.cuda.is_available() and args.gpu >= 0 else 'cpu'", "device_type",
      "replace", True, "args.device = f'npu:{args.gpu}' if torch.npu.is_available() and args.gpu >= 0 else 'cpu'",
      "args.device is the single device switch of the library; " + CUDA_AVAIL_FALLBACK),
    C("args.device = f'cuda:{args.gpu}' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
      "args.device = f'npu:{args.gpu}' if torch.npu.is_available() else 'cpu'",
      "node-classification variant of the same switch; " + CUDA_AVAIL_FALLBACK),
])

E("dyglib_train_lp", "train_link_prediction.py", "device_branch_or_abstraction",
  "yule-BUAA/DyGLib train_link_prediction.py (fork with --use_amp and a TF32 switch)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8:", "device_capability_check",
      "replace", False, "if torch.npu.is_available():",
      "dead branch on Ascend (is_available() is False); get_device_capability is not meaningful on NPU (None unless "
      "TORCH_NPU_DEVICE_CAPABILITY is set). Whether allow_tf32 changes anything on NPU is unconfirmed - performance only"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.use_amp)", "amp", "replace", False,
      "scaler = torch.npu.amp.GradScaler(enabled=args.use_amp)",
      "without CUDA torch.cuda.amp.GradScaler warns and disables itself, so scale()/step() become pass-throughs: "
      "runs, but --use_amp silently does nothing"),
    C("with torch.cuda.amp.autocast(enabled=args.use_amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=args.use_amp):",
      "cuda autocast is disabled with a warning when CUDA is unavailable: the backbone runs in fp32 (slower, still correct)"),
])

E("dyglib_dygformer", "models/DyGFormer.py", "device_branch_or_abstraction",
  "yule-BUAA/DyGLib models/DyGFormer.py (patching + channel mixing transformer, device passed in)", [])

E("dyglib_run_all", "scripts/run_all_link_prediction.sh", "explicit_replacement",
  "DyGLib-style sweep launcher (one background job per GPU)", [
    C("mkdir -p logs/nohup", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV),
    C("CUDA_VISIBLE_DEVICES=${gpu} nohup python train_link_prediction.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${gpu} nohup python train_link_prediction.py \\",
      "each job is pinned to its card only through the mask and always passes --gpu 0: on Ascend the CUDA mask is "
      "ignored and the whole wave lands on card 0"),
])

# ------------------------------------------------------------------------------------------- DySAT
E("dysat_train", "train.py", "device_branch_or_abstraction",
  "FeiGSSS/DySAT_pytorch train.py (PyTorch port of DySAT)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")', CUDA_AVAIL_FALLBACK),
])

E("dysat_layers", "models/layers.py", "device_branch_or_abstraction",
  "DySAT_pytorch models/layers.py (structural attention via torch_scatter, temporal self-attention)", [])

# --------------------------------------------------------------------------------------------- TGB
E("tgb_tgn", "examples/linkproppred/tgbl-wiki/tgn.py", "device_branch_or_abstraction",
  "shenyangHuang/TGB examples/linkproppred/tgbl-wiki/tgn.py (PyG TGN, with a fused-Adam tweak)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")', CUDA_AVAIL_FALLBACK),
    C("optimizer = torch.optim.Adam(", "fused_optimizer", "replace", False, "optimizer = torch_npu.optim.NpuFusedAdam(",
      "performance only: torch_npu's tensor-fused Adam replaces the CUDA fused kernel dropped on the next line"),
    C("fused=True,", "fused_optimizer", "removal", True, None,
      "the NPU op lists (torch 2.1/2.7/2.9) have no _fused_adam_ kernel, so optimizer.step() on NPU parameters fails "
      "(no CPU kernel to fall back to on torch 2.1)"),
])

E("tgb_utils", "tgb/utils/utils.py", "device_branch_or_abstraction",
  "shenyangHuang/TGB tgb/utils/utils.py (seeding, args, results, device banner)", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)", SEED_NOOP),
    C('if device.type == "cuda":', "device_type", "replace", False, 'if device.type == "npu":',
      "log banner only: on an NPU device the else branch prints 'running on CPU' (misleading, harmless)"),
    C("props = torch.cuda.get_device_properties(device)", "torch_cuda_api", "replace", False,
      "props = torch.npu.get_device_properties(device)", "inside the cuda-only banner branch (dead on Ascend)"),
    C('f"compute capability {props.major}.{props.minor}")', "device_capability_check", "replace", False,
      'f"{props.cube_core_num} cube cores")',
      "NPU device properties carry only name, total_memory, L2_cache_size, cube_core_num, vector_core_num: "
      "major/minor would raise once the banner branch is switched to npu"),
    C('print(f"INFO: {torch.cuda.device_count()} visible GPU(s), torch {torch.__version__}, CUDA {torch.version.cuda}")',
      "torch_cuda_api", "replace", False,
      'print(f"INFO: {torch.npu.device_count()} visible NPU(s), torch {torch.__version__}")',
      "banner branch only; torch.version.cuda is None on the CPU wheel"),
])

# ---------------------------------------------------------------------------- TGL-style extras
E("tgl_bench_prep", "bench/bench_prep.py", "explicit_replacement",
  "TGL-style data-movement micro-benchmark (CUDA events, NVTX ranges, pinned vs pageable H2D)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_ENTRY + "; also needed for torch_npu.npu.mstx"),
    C("assert torch.cuda.is_available(), 'this benchmark needs a GPU'", "torch_cuda_api", "replace", True,
      "assert torch.npu.is_available(), 'this benchmark needs an NPU'", "assertion fails on every Ascend host"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "raises on a torch build without CUDA"),
    C("device = torch.device('cuda', args.gpu)", "device_type", "replace", True, "device = torch.device('npu', args.gpu)",
      "device used for the resident-feature path and the copy buffers"),
    C("torch.cuda.synchronize()  # drain the warmup iterations", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # drain the warmup iterations", "raises without CUDA"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start = torch.npu.Event(enable_timing=True)", "CUDA event timing; torch.npu.Event has the same interface"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)", "CUDA event timing; torch.npu.Event has the same interface"),
    C("torch.cuda.nvtx.range_push(name)", "torch_cuda_api", "replace", True,
      "range_id = torch_npu.npu.mstx.range_start(name)",
      "torch.cuda.nvtx is not redirected to NPU (needs a CUDA build); mstx is the Ascend range marker "
      "(exact mstx signature not in the knowledge notes)"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True, "torch_npu.npu.mstx.range_end(range_id)",
      "pairs with the range_push replacement"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA; also required for correct event timing"),
    C("host_pinned = torch.empty(nbytes // 4, dtype=torch.float32).pin_memory()", "pin_memory", "replace", False,
      "host_pinned = torch.empty(nbytes // 4, dtype=torch.float32).pin_memory('npu')", PIN_NOTE),
    C("print('device: {}'.format(torch.cuda.get_device_name(args.gpu)))", "torch_cuda_api", "replace", True,
      "print('device: {}'.format(torch.npu.get_device_name(args.gpu)))",
      "unguarded CUDA query: initialises CUDA and raises at the end of the run"),
    C("print('  peak device memory {:.2f} GB'.format(torch.cuda.max_memory_allocated(device) / 1024 ** 3))",
      "torch_cuda_api", "replace", False,
      "print('  peak device memory {:.2f} GB'.format(torch.npu.max_memory_allocated(device) / 1024 ** 3))", MEM_STAT),
])

E("disttgl_dist_utils", "dist_utils.py", "device_branch_or_abstraction",
  "DistTGL-style torchrun helpers for multi-GPU memory-based TGNNs (NCCL + gloo groups)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the module that creates the process group must make sure the HCCL backend is registered; " + IMPORT_ENTRY),
    C("return torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "return torch.device('npu:0' if torch.npu.is_available() else 'cpu')",
      "single-process fallback; " + CUDA_AVAIL_FALLBACK),
    C("if local_rank >= torch.cuda.device_count():", "torch_cuda_api", "replace", True,
      "if local_rank >= torch.npu.device_count():",
      "device_count() is 0 without CUDA, so every distributed launch raises here"),
    C("local_rank, torch.cuda.device_count(), socket.gethostname()))", "torch_cuda_api", "replace", False,
      "local_rank, torch.npu.device_count(), socket.gethostname()))", "error message text only"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "raises on a torch build without CUDA"),
    C("os.environ.setdefault('NCCL_ASYNC_ERROR_HANDLING', '1')", "env_var", "replace", False,
      "os.environ.setdefault('HCCL_ASYNC_ERROR_HANDLING', '1')",
      "NCCL variable is ignored; torch_npu's watchdog reads HCCL_ASYNC_ERROR_HANDLING (documented default 1)"),
    C("dist.init_process_group(backend='nccl', init_method='env://',", "dist_backend", "replace", True,
      "dist.init_process_group(backend='hccl', init_method='env://',", "no NCCL backend on Ascend"),
    C("return torch.device('cuda', local_rank)", "device_type", "replace", True, "return torch.device('npu', local_rank)",
      "device handed to the trainer for model/data placement"),
    C("t = torch.tensor([float(value)], dtype=torch.float64).cuda()", "tensor_to_device", "replace", True,
      "t = torch.tensor([float(value)], dtype=torch.float32).npu()",
      ".cuda() fails, and HCCL all_reduce does not take fp64 (2.7.1 support list: bf16/fp16/fp32/int32/int64/bool), "
      "so the dtype has to drop to fp32 as well"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; cached NPU memory is simply not returned at exit"),
])

# ----------------------------------------------------------------------------- packaging / env
E("tgl_requirements", "requirements.txt", "explicit_replacement", "amazon-research/tgl requirements (CUDA 11.3 wheels)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "device_type", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; Ascend hosts use the CPU torch wheel (x86) or plain PyPI (aarch64) under torch_npu"),
    C("-f https://data.pyg.org/whl/torch-1.12.1+cu113.html", "custom_cuda_extension", "replace", True,
      "-f https://data.pyg.org/whl/torch-2.1.0+cpu.html",
      "torch-scatter binaries are built per torch version and CUDA flavour; they must be the CPU build for the new torch"),
    C("=torch==1.12.1+cu113", "device_type", "replace", True, "torch==2.1.0",
      "CUDA build of a torch version no torch_npu release pairs with; torch-npu 2.1.0.postN requires torch==2.1.0"),
    C("# dgl and torch-scatter wheels must match the torch build above", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post12", "the torch_npu pin (matrix: 2.1.0.post12 <-> torch 2.1.0 <-> CANN 8.1.RC1)"),
    C("=dgl-cu113==0.9.1", "custom_cuda_extension", "replace", False,
      "dgl==2.0.0  # CPU build from https://data.dgl.ai/wheels/torch-2.1/repo.html",
      "CUDA build of DGL; a CPU build matching torch 2.1 is needed (which DGL version, and whether the cu113 wheel would "
      "even fail to import, is unconfirmed; DGL has no NPU backend)"),
    C("=torch-scatter==2.0.9", "custom_cuda_extension", "replace", False, "torch-scatter==2.1.2",
      "no 2.0.9 wheel exists for torch 2.1, pip would fall back to a source build (unconfirmed whether that succeeds)"),
])

E("dyglib_dockerfile", "Dockerfile", "explicit_replacement", "DyGLib/TGB training image on nvidia/cuda", [
    C("FROM nvidia/cuda:11.7.1-cudnn8-devel-ubuntu22.04", "device_type", "replace", True,
      "FROM ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
      "CUDA base image has no CANN toolkit/driver libraries, so torch_npu cannot load"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0 7.5 8.0 8.6+PTX"', "env_var", "removal", False, None,
      "only read by CUDA extension builds; meaningless on Ascend"),
    C("ENV FORCE_CUDA=1", "env_var", "removal", False, None,
      "forces the CUDA code path when PyG extensions are compiled from source (e.g. on aarch64, where no prebuilt "
      "wheels exist); there is no nvcc in the CANN image - unconfirmed whether the wheel path ever builds here"),
    C("RUN pip install --no-cache-dir torch==1.13.1+cu117 --extra-index-url https://download.pytorch.org/whl/cu117",
      "device_type", "replace", True,
      "RUN pip install --no-cache-dir torch==2.1.0 --extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA torch wheel; torch_npu needs the matching CPU torch"),
    C('RUN python -c "import torch; print(torch.__version__, torch.version.cuda)"', "import_torch_npu",
      "npu_only_addition", True, "RUN pip install --no-cache-dir torch-npu==2.1.0.post12", "the torch_npu install step"),
    C("RUN pip install --no-cache-dir torch-scatter==2.1.1 torch-sparse==0.6.17 -f https://data.pyg.org/whl/torch-1.13.1+cu117.html",
      "custom_cuda_extension", "replace", True,
      "RUN pip install --no-cache-dir torch-scatter==2.1.2 torch-sparse==0.6.18 -f https://data.pyg.org/whl/torch-2.1.0+cpu.html",
      "CUDA builds of the PyG extensions for the old torch; they must be CPU builds for torch 2.1"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
      "read by the NVIDIA container runtime only; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES at run time"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA container runtime setting; no effect on Ascend"),
])

E("jodie_env", "environment.yml", "explicit_replacement", "conda environment for the JODIE / TGN baselines", [
    C("=- nvidia", "device_type", "removal", False, None, "channel only needed for CUDA packages"),
    C("=- pytorch=1.12.1", "device_type", "replace", True, "- pytorch=2.1.0",
      "with cudatoolkit this resolves to a CUDA build of a torch version no torch_npu release supports"),
    C("=- cudatoolkit=11.3", "device_type", "replace", False, "- cpuonly",
      "steers the pytorch channel to the CUDA build; dead weight on Ascend (unconfirmed whether torch_npu objects to a "
      "CUDA-built torch 2.1.0)"),
    C("=- gpustat==1.0.0", "device_capability_check", "removal", False, None,
      "NVML-based GPU picker dependency, not needed once select_free_gpu queries the NPU"),
    C("=- tensorboard==2.10.0", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post12",
      "the torch_npu pin (pip section, after conda's pytorch 2.1.0)"),
])
