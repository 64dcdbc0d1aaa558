# Labels for probe367 (abstractive / extractive summarization research code, CUDA -> Ascend NPU).
# One entry per upstream file; one C(...) per line a careful porter would edit for an explicit torch_npu port.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SEED_NOTE = ("torch.manual_seed() a few lines above already seeds every device type, including the NPU backend "
             "(unconfirmed in /work/shared/knowledge); on an NPU host torch.cuda seeding is a lazy no-op, so the edit "
             "is for clarity only")

# ---------------------------------------------------------------- PreSumm (nlpyang/PreSumm)
E("ps_train", "src/train.py", "explicit_replacement", "nlpyang/PreSumm src/train.py (entry point, -visible_gpus flag)", [
    C("=import os", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry point never imports torch itself; torch_npu must be loaded before the spawned workers call torch.npu.* "
      "(children re-import this module under the spawn start method)"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.visible_gpus', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.visible_gpus',
      "-visible_gpus picks an arbitrary device list (e.g. '2,3') that is then re-indexed from 0; unported, the NPU "
      "runtime ignores it and ranks silently land on devices 0..n-1"),
    C('device = "cpu" if args.visible_gpus == \'-1\' else "cuda"', "device_type", "replace", True,
      'device = "cpu" if args.visible_gpus == \'-1\' else "npu"', "device string for the whole run"),
    C('device_id = 0 if device == "cuda" else -1', "device_type", "replace", True,
      'device_id = 0 if device == "npu" else -1',
      "string comparison against the device type; once device is 'npu' this would silently yield -1 (CPU path)"),
])

E("ps_train_abs", "src/train_abstractive.py", "explicit_replacement",
  "nlpyang/PreSumm src/train_abstractive.py (BertSumAbs train/validate/test, mp spawn)", [
    C('=device = "cpu" if args.visible_gpus == \'-1\' else "cuda"', "device_type", "replace", True,
      'device = "cpu" if args.visible_gpus == \'-1\' else "npu"', "validate(): model and batches go to this device"),
    C('device = "cpu" if (args.visible_gpus == \'-1\') else "cuda"', "device_type", "replace", True,
      'device = "cpu" if (args.visible_gpus == \'-1\') else "npu"', "test_abs()"),
    C("device = 'cpu' if args.visible_gpus == '-1' else 'cuda'", "device_type", "replace", True,
      "device = 'cpu' if args.visible_gpus == '-1' else 'npu'", "test_text_abs()"),
    C('else "cuda"  # single process / single gpu', "device_type", "replace", True,
      'device = "cpu" if args.visible_gpus == \'-1\' else "npu"  # single process / single gpu',
      "train_abs_single(): training device"),
    C("torch.cuda.set_device(device_id)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device_id)",
      "per-process device binding for the multi-process trainer"),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)",
      SEED_NOTE),
])

E("ps_train_ext", "src/train_extractive.py", "explicit_replacement",
  "nlpyang/PreSumm src/train_extractive.py (BertSumExt)", [
    C('=device = "cpu" if args.visible_gpus == \'-1\' else "cuda"', "device_type", "replace", True,
      'device = "cpu" if args.visible_gpus == \'-1\' else "npu"', "validate()"),
    C('device = "cpu" if (args.visible_gpus == \'-1\') else "cuda"', "device_type", "replace", True,
      'device = "cpu" if (args.visible_gpus == \'-1\') else "npu"', "test_ext()"),
    C('else "cuda"  # single process / single gpu', "device_type", "replace", True,
      'device = "cpu" if args.visible_gpus == \'-1\' else "npu"  # single process / single gpu', "train_single_ext()"),
    C("torch.cuda.set_device(device_id)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device_id)",
      "per-process device binding"),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)",
      SEED_NOTE),
])

E("ps_distributed", "src/distributed.py", "explicit_replacement",
  "nlpyang/PreSumm src/distributed.py (fairseq-style multi_init / all_gather_list)", [
    C("backend='nccl', init_method=dist_init_method,", "dist_backend", "replace", True,
      "backend='hccl', init_method=dist_init_method,", "NCCL is not available on Ascend; HCCL is the collective backend"),
    C("_in_buffer = torch.cuda.ByteTensor(max_size)", "torch_cuda_api", "replace", True,
      "all_gather_list._in_buffer = torch.npu.ByteTensor(max_size)",
      "legacy typed CUDA tensor constructor; torch_npu exposes torch.npu.ByteTensor"),
    C("=torch.cuda.ByteTensor(max_size)", "torch_cuda_api", "replace", True, "torch.npu.ByteTensor(max_size)",
      "receive buffers for all_gather must live on the HCCL device"),
    C("torch.distributed.all_gather(out_buffers, in_buffer.cuda())", "tensor_to_device", "replace", True,
      "torch.distributed.all_gather(out_buffers, in_buffer.npu())", "tensor handed to the collective"),
])

E("ps_trainer", "src/models/trainer.py", "explicit_replacement",
  "nlpyang/PreSumm src/models/trainer.py (build_trainer / Trainer)", [
    C('device = "cpu" if args.visible_gpus == \'-1\' else "cuda"', "device_type", "replace", False,
      'device = "cpu" if args.visible_gpus == \'-1\' else "npu"',
      "local is assigned but never used in build_trainer(); a porter edits it for consistency only"),
])

E("ps_model_builder", "src/models/model_builder.py", "explicit_replacement",
  "nlpyang/PreSumm src/models/model_builder.py (build_optim*, ExtSummarizer, AbsSummarizer)", [
    C("=state[k] = v.cuda()", "tensor_to_device", "replace", True, "state[k] = v.npu()",
      "resumed Adam state moved to the accelerator; .cuda() fails on an NPU host"),
    C("state[k] = v.cuda()  # bert params", "tensor_to_device", "replace", True, "state[k] = v.npu()  # bert params",
      "same, BERT-encoder optimizer"),
    C("state[k] = v.cuda()  # decoder params", "tensor_to_device", "replace", True,
      "state[k] = v.npu()  # decoder params", "same, decoder optimizer"),
])

E("ps_predictor", "src/models/predictor.py", "explicit_replacement",
  "nlpyang/PreSumm src/models/predictor.py (beam search; device taken from tensors)", [])

E("ps_data_loader", "src/models/data_loader.py", "explicit_replacement",
  "nlpyang/PreSumm src/models/data_loader.py (Batch .to(device))", [])

E("ps_requirements", "requirements.txt", "explicit_replacement", "nlpyang/PreSumm requirements.txt", [
    C("torch==1.1.0", "import_torch_npu", "replace", True, "torch==2.1.0  # + torch-npu==2.1.0.post17 (CANN 8.3.RC1)",
      "no torch_npu wheel exists for torch 1.1.0 (oldest pairing is 1.5.0); the torch pin has to move to a "
      "torch_npu-supported version and torch-npu has to be added (matrix in torch-npu-migration.md section 1)"),
])

# ---------------------------------------------------------------- pointer_summarizer (atulkum/pointer_summarizer)
E("pg_config", "data_util/config.py", "explicit_replacement", "atulkum/pointer_summarizer data_util/config.py", [])

E("pg_batcher", "data_util/batcher.py", "explicit_replacement",
  "atulkum/pointer_summarizer data_util/batcher.py (numpy batching threads)", [])

E("pg_model", "training_ptr_gen/model.py", "explicit_replacement",
  "atulkum/pointer_summarizer training_ptr_gen/model.py (Encoder/Decoder/Model, use_cuda global)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "model.py is imported by train.py, decode.py and eval.py before their module-level use_cuda checks"),
    C("use_cuda = config.use_gpu and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_cuda = config.use_gpu and torch.npu.is_available()",
      "unported this is False on an NPU host and the model silently trains on CPU"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      SEED_NOTE),
    C("torch.cuda.manual_seed_all(123)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(123)",
      SEED_NOTE),
    C("encoder = encoder.cuda()", "tensor_to_device", "replace", True, "encoder = encoder.npu()", "module placement"),
    C("decoder = decoder.cuda()", "tensor_to_device", "replace", True, "decoder = decoder.npu()", "module placement"),
    C("reduce_state = reduce_state.cuda()", "tensor_to_device", "replace", True,
      "reduce_state = reduce_state.npu()", "module placement"),
])

_pg_moves = [
    ("enc_batch = enc_batch.cuda()", "enc_batch = enc_batch.npu()"),
    ("enc_padding_mask = enc_padding_mask.cuda()", "enc_padding_mask = enc_padding_mask.npu()"),
    ("enc_batch_extend_vocab = enc_batch_extend_vocab.cuda()", "enc_batch_extend_vocab = enc_batch_extend_vocab.npu()"),
    ("extra_zeros = extra_zeros.cuda()", "extra_zeros = extra_zeros.npu()"),
    ("c_t_1 = c_t_1.cuda()", "c_t_1 = c_t_1.npu()"),
    ("coverage = coverage.cuda()", "coverage = coverage.npu()"),
    ("dec_batch = dec_batch.cuda()", "dec_batch = dec_batch.npu()"),
    ("dec_padding_mask = dec_padding_mask.cuda()", "dec_padding_mask = dec_padding_mask.npu()"),
    ("dec_lens_var = dec_lens_var.cuda()", "dec_lens_var = dec_lens_var.npu()"),
    ("target_batch = target_batch.cuda()", "target_batch = target_batch.npu()"),
]
E("pg_train_util", "training_ptr_gen/train_util.py", "explicit_replacement",
  "atulkum/pointer_summarizer training_ptr_gen/train_util.py (get_input/output_from_batch)", [
    C(s, "tensor_to_device", "replace", True, p,
      "batch tensor moved under `if use_cuda:`; once use_cuda means 'NPU available', .cuda() raises")
    for s, p in _pg_moves
])

E("pg_train", "training_ptr_gen/train.py", "explicit_replacement",
  "atulkum/pointer_summarizer training_ptr_gen/train.py (Adagrad trainer)", [
    C("use_cuda = config.use_gpu and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_cuda = config.use_gpu and torch.npu.is_available()",
      "module-level switch that drives every batch move; unported -> silent CPU run with model on CPU"),
    C("state[k] = v.cuda()", "tensor_to_device", "replace", True, "state[k] = v.npu()",
      "Adagrad state restored from a checkpoint"),
])

E("pg_decode", "training_ptr_gen/decode.py", "explicit_replacement",
  "atulkum/pointer_summarizer training_ptr_gen/decode.py (beam search + ROUGE)", [
    C("use_cuda = config.use_gpu and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_cuda = config.use_gpu and torch.npu.is_available()",
      "decode-time switch; Model() itself uses model.py's flag, so a mismatch would put batches and weights on "
      "different devices"),
    C("y_t_1 = y_t_1.cuda()", "tensor_to_device", "replace", True, "y_t_1 = y_t_1.npu()", "beam token ids"),
])

E("pg_eval", "training_ptr_gen/eval.py", "explicit_replacement",
  "atulkum/pointer_summarizer training_ptr_gen/eval.py", [
    C("use_cuda = config.use_gpu and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_cuda = config.use_gpu and torch.npu.is_available()",
      "eval-time switch; must agree with model.py or weights (NPU) and batches (CPU) mismatch"),
])

E("pg_start", "start_train.sh", "explicit_replacement", "atulkum/pointer_summarizer start_train.sh", [
    C("export PYTHONPATH=`pwd`", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; needed unless the host/container profile already sources it (environment-dependent)"),
    C("export CUDA_VISIBLE_DEVICES=0", "env_var", "replace", False, "export ASCEND_RT_VISIBLE_DEVICES=0",
      "single process that uses the default device 0 anyway, so unported it changes nothing on an NPU host"),
])

# ---------------------------------------------------------------- BRIO (yixinL7/BRIO)
E("brio_main", "main.py", "explicit_replacement",
  "yixinL7/BRIO main.py (--cuda/--gpuid flags, mp.spawn + DDP, ranking + MLE training)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry point; torch.npu.* and the hccl backend need torch_npu loaded (spawned children re-import main.py)"),
    C("        model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
      "evaluation(): model placement under --cuda"),
    C("map_location=f'cuda:{args.gpuid[0]}'", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(os.path.join(\"./cache\", args.model_pt), map_location=f'npu:{args.gpuid[0]}'))",
      "checkpoint loaded straight onto a CUDA device string"),
    C("device = f'cuda:{args.gpuid[0]}'", "device_type", "replace", True, "device = f'npu:{args.gpuid[0]}'",
      "evaluation(): device for batches and generate() inputs"),
    C('device = f"cuda:{gpuid}"', "device_type", "replace", True, 'device = f"npu:{gpuid}"',
      "test(): device for validation batches and the metric all_reduce tensors"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)", SEED_NOTE),
    C("map_location=f'cuda:{gpuid}'", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(os.path.join(\"./cache\", args.model_pt), map_location=f'npu:{gpuid}'))",
      "run(): resume weights onto this rank's device"),
    C('dist.init_process_group("nccl", rank=rank, world_size=world_size)', "dist_backend", "replace", True,
      'dist.init_process_group("hccl", rank=rank, world_size=world_size)', "collective backend"),
    C("DistributedDataParallel(model.to(gpuid), [gpuid]", "tensor_to_device", "replace", True,
      "model = nn.parallel.DistributedDataParallel(model.to(f'npu:{gpuid}'), [gpuid], find_unused_parameters=False)",
      "a bare int passed to .to() means a CUDA ordinal (transfer_to_npu rewrites exactly this case); device_ids ints "
      "are fine for DDP on NPU"),
    C("model = model.cuda(gpuid)", "tensor_to_device", "replace", True, "model = model.npu(gpuid)",
      "single-device training path"),
    C("id = torch.FloatTensor([id]).to(gpuid)", "tensor_to_device", "replace", True,
      "id = torch.FloatTensor([id]).to(f'npu:{gpuid}')", "int ordinal -> CUDA; tensor then goes into an HCCL all_reduce"),
    C("id = torch.zeros(1).to(gpuid)", "tensor_to_device", "replace", True, "id = torch.zeros(1).to(f'npu:{gpuid}')",
      "same, non-master ranks"),
    C("to_cuda(batch, gpuid)", "tensor_to_device", "replace", True, 'to_cuda(batch, f"npu:{gpuid}")',
      "the helper does batch[n].to(gpuid); with an int that is a CUDA ordinal. Fixed at the call site (the other "
      "callers already pass a device string), so data_utils.to_cuda stays unlabelled"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "cache release between eval and training; on an NPU host the CUDA call is a silent no-op (performance/memory "
      "only)"),
    C("with torch.cuda.device(args.gpuid[0]):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(args.gpuid[0]):", "entering a CUDA device context initialises CUDA and fails"),
    C("with torch.cuda.device(gpu):", "torch_cuda_api", "replace", True, "with torch.npu.device(gpu):",
      "single-device training path"),
])

E("brio_data", "data_utils.py", "explicit_replacement",
  "yixinL7/BRIO data_utils.py (BrioDataset, collate_mp_brio, to_cuda helper)", [])
E("brio_model", "model.py", "explicit_replacement", "yixinL7/BRIO model.py (RankingLoss, BRIO wrapper)", [])
E("brio_config", "config.py", "explicit_replacement", "yixinL7/BRIO config.py (cnndm/xsum settings)", [])
E("brio_utils", "utils.py", "explicit_replacement", "yixinL7/BRIO utils.py (Recorder)", [])

# ---------------------------------------------------------------- fairseq BART summarization
E("fsq_summarize", "examples/bart/summarize.py", "explicit_replacement",
  "facebookresearch/fairseq examples/bart/summarize.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "standalone entry script; needed for torch.npu.*"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "unported the branch is skipped and the fp16 hub model silently runs on CPU"),
    C("bart = bart.cuda().half()", "tensor_to_device", "replace", True, "bart = bart.npu().half()",
      "hub interface placement; fp16 is fine on NPU"),
])

E("fsq_train_sh", "examples/bart/train_cnn_dm.sh", "explicit_replacement",
  "facebookresearch/fairseq examples/bart/README.summarization.md fine-tuning command as a launcher", [
    C("TOTAL_NUM_UPDATES=20000", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; environment-dependent (often already set by the container)"),
    C("CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 fairseq-train cnn_dm-bin", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 fairseq-train cnn_dm-bin \\",
      "lists every device of an 8-device node, so unported the visible set is the same"),
    C("CUDA_VISIBLE_DEVICES=0 python examples/bart/summarize.py", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0 python examples/bart/summarize.py \\",
      "device 0 is the default anyway"),
])

E("fsq_preprocess", "examples/bart/preprocess_cnndm.sh", "explicit_replacement",
  "facebookresearch/fairseq examples/bart BPE + binarize steps", [])

# ---------------------------------------------------------------- HF transformers summarization examples
E("hf_run_sum", "examples/pytorch/summarization/run_summarization.py", "device_branch_or_abstraction",
  "huggingface/transformers examples/pytorch/summarization/run_summarization.py (Seq2SeqTrainer)", [])
E("hf_no_trainer", "examples/pytorch/summarization/run_summarization_no_trainer.py", "device_branch_or_abstraction",
  "huggingface/transformers examples/pytorch/summarization/run_summarization_no_trainer.py (accelerate)", [])
E("hf_requirements", "examples/pytorch/summarization/requirements.txt", "device_branch_or_abstraction",
  "huggingface/transformers examples/pytorch/summarization/requirements.txt", [])

# ---------------------------------------------------------------- Longformer / LED (allenai/longformer)
E("lf_summarization", "scripts/summarization.py", "explicit_replacement",
  "allenai/longformer scripts/summarization.py (LED on arXiv, pytorch-lightning 0.8 + apex amp)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("'mem': torch.cuda.memory_allocated(loss.device)", "torch_cuda_api", "replace", False,
      "'mem': torch.npu.memory_allocated(loss.device) / 1024 ** 3 if torch.npu.is_available() else 0}",
      "logging only: unported it reports 0 GB on an NPU host"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_gpus = torch.npu.device_count()",
      "returns 0 on an NPU host -> ZeroDivisionError in the LR-schedule step count"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      SEED_NOTE),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)", SEED_NOTE),
    C("trainer = pl.Trainer(gpus=args.gpus, distributed_backend=", "distributed_framework", "replace", True,
      "trainer = pl.Trainer(accelerator='npu', devices=args.gpus, strategy=DDPStrategy(process_group_backend='hccl') if torch.npu.is_available() else None,",
      "gpus=N with no CUDA device is rejected by Lightning and its ddp backend defaults to NCCL; needs a Lightning "
      "with an NPU accelerator and an hccl process group (Lightning NPU support unconfirmed in knowledge)"),
    C("use_amp=not args.fp32, amp_level='O2',", "amp", "replace", False, "precision=32 if args.fp32 else 16,",
      "apex O2 through Lightning 0.8; Ascend apex does offer O2, so whether this line must change is unconfirmed; the "
      "explicit port uses native AMP"),
])
E("lf_requirements", "requirements.txt", "explicit_replacement", "allenai/longformer requirements.txt", [])
