# Labels for probe159: classic NLP / recommendation trainers (CUDA -> Ascend NPU).
# One entry per upstream file; one change per line a careful porter would edit.
# "required" is judged with the rest of the file already ported (i.e. a guarded branch is
# assumed to be reached on the NPU host once its device switch has been ported).

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = "entry script: torch_npu must be imported (registers the 'npu' device and torch.npu) before any device call; only optional with torch_npu>=2.5.1 autoload"
CFG_DEVICE_NOTE = "torch.cuda.is_available() is False on an NPU host, so config.device becomes cpu and the whole run silently trains on CPU"
PACK_NOTE = ("listed unsupported (✘) by Ascend's 2.7.1 API list and by msFmkTransplt, yet aten _pack_padded_sequence/_pad_packed_sequence "
             "have NPU kernels; failure mode unconfirmed, and dropping packing changes BiLSTM results")
GRU_DROPOUT_NOTE = "Ascend 2.7.1 API list: nn.GRU '不支持dropout参数' (dropout argument not supported); whether it errors or is ignored is unconfirmed"
PARAMLESS_NOTE = "module has no parameters or buffers, so .cuda() is a no-op even without CUDA; rename only for consistency"


# ----------------------------------------------------------------------------- Chinese-Text-Classification-Pytorch

E("textcls_run", "run.py", "explicit_replacement",
  "Chinese-Text-Classification-Pytorch run.py (fork with --gpu/--fp16 flags)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu',
        "the Ascend runtime ignores CUDA_VISIBLE_DEVICES: --gpu 2 would silently train on NPU 0"),
      C("torch.cuda.manual_seed_all(1)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(1)",
        "lazy no-op without CUDA: the NPU generator (dropout) stays unseeded; reproducibility only"),
      C("torch.backends.cudnn.deterministic = True", "torch_cuda_api", "replace", False,
        "torch.use_deterministic_algorithms(True)  # 保证每次结果一样",
        "cuDNN flag does not reach NPU kernels (silent no-op); the NPU determinism switch is unconfirmed in knowledge"),
  ])

E("textcls_train_eval", "train_eval.py", "explicit_replacement",
  "Chinese-Text-Classification-Pytorch train_eval.py with a torch.cuda.amp fork patch",
  [
      C("scaler = torch.cuda.amp.GradScaler(enabled=use_amp)", "amp", "replace", False,
        "scaler = torch.npu.amp.GradScaler(enabled=use_amp)",
        "without CUDA the CUDA scaler disables itself with a warning: --fp16 silently trains in fp32 (speed/memory only)"),
      C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=use_amp):",
        "cuda autocast is disabled with a warning when CUDA is absent; NPU ops run in fp32"),
      C("mem_mb = torch.cuda.max_memory_allocated() / 1024 / 1024", "torch_cuda_api", "replace", False,
        "mem_mb = torch.npu.max_memory_allocated() / 1024 / 1024",
        "returns 0 when CUDA was never initialised: the log shows 0MB, training unaffected"),
  ])

E("textcls_utils", "utils.py", "device_branch_or_abstraction",
  "Chinese-Text-Classification-Pytorch utils.py (vocab, DatasetIterater)",
  [])

E("textcls_textcnn", "models/TextCNN.py", "device_branch_or_abstraction",
  "Chinese-Text-Classification-Pytorch models/TextCNN.py (Config + Model)",
  [
      C("self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
        "self.device = torch.device('npu' if torch.npu.is_available() else 'cpu')   # 设备", CFG_DEVICE_NOTE),
  ])

E("textcls_textrnn_att", "models/TextRNN_Att.py", "device_branch_or_abstraction",
  "Chinese-Text-Classification-Pytorch models/TextRNN_Att.py",
  [
      C("self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
        "self.device = torch.device('npu' if torch.npu.is_available() else 'cpu')   # 设备", CFG_DEVICE_NOTE),
  ])

E("textcls_transformer", "models/Transformer.py", "device_branch_or_abstraction",
  "Chinese-Text-Classification-Pytorch models/Transformer.py (Positional_Encoding keeps a device)",
  [
      C("self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
        "self.device = torch.device('npu' if torch.npu.is_available() else 'cpu')   # 设备", CFG_DEVICE_NOTE),
  ])

# ----------------------------------------------------------------------------- NCRF++ (BiLSTM-CRF NER)

E("ncrfpp_crf", "model/crf.py", "explicit_replacement",
  "NCRF++ model/crf.py (batched CRF, viterbi and n-best decoding behind an HP_gpu flag)",
  [
      C("init_transitions = init_transitions.cuda()", "tensor_to_device", "replace", True,
        "init_transitions = init_transitions.npu()", "HP_gpu branch (ported to mean NPU): .cuda() raises without CUDA"),
      C("=pad_zero = pad_zero.cuda()", "tensor_to_device", "replace", True, "pad_zero = pad_zero.npu()",
        "viterbi back-pointer padding must live with the NPU back_points for torch.cat"),
      C("=decode_idx = decode_idx.cuda()", "tensor_to_device", "replace", True, "decode_idx = decode_idx.npu()",
        ".cuda() raises on an NPU host"),
      C("new_tags = new_tags.cuda()", "tensor_to_device", "replace", True, "new_tags = new_tags.npu()",
        "gold-path indices gathered from NPU scores"),
      C("pad_zero = pad_zero.cuda()  # (batch, tag_size, nbest)", "tensor_to_device", "replace", True,
        "pad_zero = pad_zero.npu()  # (batch, tag_size, nbest)", "n-best decoding path, same as viterbi"),
      C("decode_idx = decode_idx.cuda()  # (seq_len, batch, nbest)", "tensor_to_device", "replace", True,
        "decode_idx = decode_idx.npu()  # (seq_len, batch, nbest)", "n-best decoding path"),
  ])

E("ncrfpp_wordsequence", "model/wordsequence.py", "explicit_replacement",
  "NCRF++ model/wordsequence.py (LSTM/GRU/CNN word encoder moved with .cuda() per submodule)",
  [
      C("self.droplstm = self.droplstm.cuda()", "tensor_to_device", "replace", False,
        "self.droplstm = self.droplstm.npu()", PARAMLESS_NOTE + " (nn.Dropout)"),
      C("self.hidden2tag = self.hidden2tag.cuda()", "tensor_to_device", "replace", True,
        "self.hidden2tag = self.hidden2tag.npu()", "Linear weights must move; .cuda() raises without CUDA"),
      C("self.word2cnn = self.word2cnn.cuda()", "tensor_to_device", "replace", True,
        "self.word2cnn = self.word2cnn.npu()", "CNN extractor path"),
      C("self.cnn_list[idx] = self.cnn_list[idx].cuda()", "tensor_to_device", "replace", True,
        "self.cnn_list[idx] = self.cnn_list[idx].npu()", "Conv1d weights"),
      C("self.cnn_drop_list[idx] = self.cnn_drop_list[idx].cuda()", "tensor_to_device", "replace", False,
        "self.cnn_drop_list[idx] = self.cnn_drop_list[idx].npu()", PARAMLESS_NOTE + " (nn.Dropout)"),
      C("self.cnn_batchnorm_list[idx] = self.cnn_batchnorm_list[idx].cuda()", "tensor_to_device", "replace", True,
        "self.cnn_batchnorm_list[idx] = self.cnn_batchnorm_list[idx].npu()", "BatchNorm1d has weights and running stats"),
      C("self.lstm = self.lstm.cuda()", "tensor_to_device", "replace", True, "self.lstm = self.lstm.npu()",
        "LSTM/GRU weights"),
      C("=packed_words = pack_padded_sequence(word_represent, word_seq_lengths.cpu().numpy(), True)",
        "unsupported_op_workaround", "replace", False,
        "packed_words = word_represent  # no PackedSequence on NPU; padded steps are masked by the CRF", PACK_NOTE),
      C("lstm_out, _ = pad_packed_sequence(lstm_out)", "unsupported_op_workaround", "replace", False,
        "lstm_out = lstm_out.transpose(1, 0)  # already padded (batch_first) when packing is dropped", PACK_NOTE),
      C("True)  # sentence-level", "unsupported_op_workaround", "replace", False,
        "packed_words = word_represent  # sentence-level, no packing on NPU", PACK_NOTE),
  ])

E("ncrfpp_main", "main.py", "explicit_replacement",
  "NCRF++ main.py (batchify_with_label moving every batch tensor with .cuda())",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("word_seq_tensor = word_seq_tensor.cuda()", "tensor_to_device", "replace", True,
        "word_seq_tensor = word_seq_tensor.npu()", "batch tensors follow the model to the NPU"),
      C("feature_seq_tensors[idx] = feature_seq_tensors[idx].cuda()", "tensor_to_device", "replace", True,
        "feature_seq_tensors[idx] = feature_seq_tensors[idx].npu()", ".cuda() raises without CUDA"),
      C("word_seq_lengths = word_seq_lengths.cuda()", "tensor_to_device", "replace", True,
        "word_seq_lengths = word_seq_lengths.npu()", ".cuda() raises without CUDA"),
      C("word_seq_recover = word_seq_recover.cuda()", "tensor_to_device", "replace", True,
        "word_seq_recover = word_seq_recover.npu()", ".cuda() raises without CUDA"),
      C("label_seq_tensor = label_seq_tensor.cuda()", "tensor_to_device", "replace", True,
        "label_seq_tensor = label_seq_tensor.npu()", ".cuda() raises without CUDA"),
      C("char_seq_tensor = char_seq_tensor.cuda()", "tensor_to_device", "replace", True,
        "char_seq_tensor = char_seq_tensor.npu()", ".cuda() raises without CUDA"),
      C("char_seq_recover = char_seq_recover.cuda()", "tensor_to_device", "replace", True,
        "char_seq_recover = char_seq_recover.npu()", ".cuda() raises without CUDA"),
      C("=mask = mask.cuda()", "tensor_to_device", "replace", True, "mask = mask.npu()",
        "CRF mask must be on the same device as the emission scores"),
      C("char_seq_recover, mask) = [t.cuda() for t in", "tensor_to_device", "replace", True,
        "char_seq_recover, mask) = [t.npu() for t in (word_seq_tensor, word_seq_lengths, word_seq_recover,",
        "sentence-classification batchify, same move written as a comprehension"),
      C("feature_seq_tensors = [f.cuda() for f in feature_seq_tensors]", "tensor_to_device", "replace", True,
        "feature_seq_tensors = [f.npu() for f in feature_seq_tensors]", ".cuda() raises without CUDA"),
      C("data.HP_gpu = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "data.HP_gpu = torch.npu.is_available()",
        "False on an NPU host: every HP_gpu branch is skipped and NER trains silently on CPU"),
  ])

E("bilstm_crf", "bilstm_crf.py", "explicit_replacement",
  "batched BiLSTM-CRF NER derived from the PyTorch Bi-LSTM CRF tutorial (torch.cuda.FloatTensor in the forward algorithm)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("self.float_type = torch.cuda.FloatTensor if use_gpu else torch.FloatTensor", "torch_cuda_api", "replace", True,
        "self.float_type = torch.npu.FloatTensor if use_gpu else torch.FloatTensor",
        "legacy CUDA tensor type: .type(torch.cuda.FloatTensor) raises without CUDA"),
      C("self.long_type = torch.cuda.LongTensor if use_gpu else torch.LongTensor", "torch_cuda_api", "replace", True,
        "self.long_type = torch.npu.LongTensor if use_gpu else torch.LongTensor", "legacy CUDA tensor type"),
      C("h0, c0 = h0.cuda(), c0.cuda()", "tensor_to_device", "replace", True, "h0, c0 = h0.npu(), c0.npu()",
        "initial LSTM state must be on the LSTM's device"),
      C("init_alphas = torch.cuda.FloatTensor(batch_size, self.tagset_size).fill_(-10000.)", "torch_cuda_api", "replace",
        True, "init_alphas = torch.full((batch_size, self.tagset_size), -10000., device=feats.device)",
        "unconditional CUDA constructor in the CRF forward algorithm: fails on any non-CUDA host"),
      C("packed = nn.utils.rnn.pack_padded_sequence(embeds, lengths, batch_first=True)", "unsupported_op_workaround",
        "replace", False, "packed = embeds  # no PackedSequence on NPU; mask handles padding", PACK_NOTE),
      C("lstm_out, _ = nn.utils.rnn.pad_packed_sequence(lstm_out, batch_first=True,", "unsupported_op_workaround",
        "replace", False, "lstm_out = lstm_out  # already padded", PACK_NOTE),
      C("score = torch.zeros(batch_size).cuda()", "tensor_to_device", "replace", True,
        "score = torch.zeros(batch_size, device=feats.device)", "unconditional .cuda() in _score_sentence"),
      C("mask_f = mask.type(torch.cuda.FloatTensor)", "torch_cuda_api", "replace", True,
        "mask_f = mask.type(self.float_type)", "CUDA tensor type hard-coded, bypassing the use_gpu switch"),
      C("if feats.is_cuda:", "tensor_to_device", "replace", True, "if feats.is_npu:",
        "is_cuda is False for NPU tensors: init_vvars stays on CPU and the add with NPU transitions fails"),
      C("init_vvars = init_vvars.cuda()", "tensor_to_device", "replace", True, "init_vvars = init_vvars.npu()",
        ".cuda() raises without CUDA"),
      C("sentences = sentences.cuda()", "tensor_to_device", "replace", True, "sentences = sentences.npu()",
        "batch to device"),
      C("tags = tags.cuda()", "tensor_to_device", "replace", True, "tags = tags.npu()", "batch to device"),
      C("mask = mask.cuda()", "tensor_to_device", "replace", True, "mask = mask.npu()", "mask to device"),
      C("use_gpu = args.gpu and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "use_gpu = args.gpu and torch.npu.is_available()",
        "False on an NPU host: --gpu silently trains on CPU"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "model parameters to the NPU"),
  ])

# ----------------------------------------------------------------------------- Transformer NMT

E("annotated_transformer", "the_annotated_transformer.py", "explicit_replacement",
  "harvardnlp The Annotated Transformer (script export: Batch.cuda, LabelSmoothing, NoamOpt, MultiGPULossCompute, IWSLT run)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("self.src = self.src.cuda()", "tensor_to_device", "replace", True, "self.src = self.src.npu()",
        "Batch.cuda() body: tensor .cuda() raises without CUDA (the method name itself can stay)"),
      C("self.src_mask = self.src_mask.cuda()", "tensor_to_device", "replace", True,
        "self.src_mask = self.src_mask.npu()", "see Batch.cuda"),
      C("self.trg = self.trg.cuda()", "tensor_to_device", "replace", True, "self.trg = self.trg.npu()", "see Batch.cuda"),
      C("self.trg_y = self.trg_y.cuda()", "tensor_to_device", "replace", True, "self.trg_y = self.trg_y.npu()",
        "see Batch.cuda"),
      C("self.trg_mask = self.trg_mask.cuda()", "tensor_to_device", "replace", True,
        "self.trg_mask = self.trg_mask.npu()", "see Batch.cuda"),
      C("self.ntokens = self.ntokens.cuda()", "tensor_to_device", "replace", True,
        "self.ntokens = self.ntokens.npu()", "see Batch.cuda"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "model parameters to the NPU"),
      C("=criterion.cuda()", "tensor_to_device", "replace", False, "criterion.npu()",
        PARAMLESS_NOTE + " (LabelSmoothing keeps true_dist as a plain attribute)"),
      C("train_iter = MyIterator(train, batch_size=BATCH_SIZE, device=0,", "device_type", "replace", True,
        "train_iter = MyIterator(train, batch_size=BATCH_SIZE, device=torch.device('npu', 0),",
        "legacy torchtext reads int device as a CUDA ordinal (.cuda(0) in 0.2.x; 0.3+ warns and falls back to CPU)"),
      C("valid_iter = MyIterator(val, batch_size=BATCH_SIZE, device=0,", "device_type", "replace", True,
        "valid_iter = MyIterator(val, batch_size=BATCH_SIZE, device=torch.device('npu', 0),",
        "same; the final greedy_decode uses valid_iter batches directly, so a CPU batch meets an NPU model"),
      C("model_par = nn.DataParallel(model, device_ids=devices)", "distributed_framework", "replace", True,
        "model_par = model  # nn.DataParallel is unsupported on NPU; multi-card needs DDP + hccl",
        "torch.nn.DataParallel is ✘ in Ascend's API list and msFmkTransplt docs"),
      C("=MultiGPULossCompute(model.generator, criterion,", "distributed_framework", "replace", True,
        "SimpleLossCompute(model.generator, criterion, model_opt))",
        "nn.parallel.replicate/scatter/gather/parallel_apply are CUDA-only (torch.cuda.comm ✘); use the single-device loss"),
      C("MultiGPULossCompute(model.generator, criterion, devices=devices, opt=None))", "distributed_framework",
        "replace", True, "SimpleLossCompute(model.generator, criterion, None))", "validation call site, same reason"),
  ])

E("aiayn_train", "train.py", "explicit_replacement",
  "jadore801120/attention-is-all-you-need-pytorch train.py",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("device = torch.device('cuda' if opt.cuda else 'cpu')", "device_type", "replace", True,
        "device = torch.device('npu' if opt.cuda else 'cpu')",
        "'cuda' device: every .to(device) and BucketIterator(device=device) fails; the -no_cuda flag can keep its name"),
  ])

E("aiayn_translate", "translate.py", "explicit_replacement",
  "jadore801120/attention-is-all-you-need-pytorch translate.py",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("device = torch.device('cuda' if opt.cuda else 'cpu')", "device_type", "replace", True,
        "device = torch.device('npu' if opt.cuda else 'cpu')",
        "also the map_location of the checkpoint load, so a GPU-trained checkpoint lands on the NPU"),
  ])

# ----------------------------------------------------------------------------- Seq2Seq with attention

E("seq2seq_batched", "seq2seq-translation-batched.py", "explicit_replacement",
  "spro/practical-pytorch seq2seq-translation-batched (USE_CUDA flag, masked_cross_entropy, packed bidirectional GRU)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("input_var = input_var.cuda()", "tensor_to_device", "replace", True, "input_var = input_var.npu()",
        ".cuda() raises without CUDA"),
      C("target_var = target_var.cuda()", "tensor_to_device", "replace", True, "target_var = target_var.npu()",
        ".cuda() raises without CUDA"),
      C("if sequence_length.is_cuda:", "tensor_to_device", "replace", True, "if sequence_length.is_npu:",
        "is_cuda is False for NPU tensors: the range stays on CPU and the comparison with NPU lengths fails"),
      C("seq_range_expand = seq_range_expand.cuda()", "tensor_to_device", "replace", True,
        "seq_range_expand = seq_range_expand.npu()", ".cuda() raises without CUDA"),
      C("length = Variable(torch.LongTensor(length)).cuda()", "tensor_to_device", "replace", True,
        "length = torch.LongTensor(length).npu()", "unconditional .cuda() in the loss"),
      C("self.gru = nn.GRU(hidden_size, hidden_size, n_layers, dropout=self.dropout, bidirectional=True)",
        "unsupported_op_workaround", "replace", False,
        "self.gru = nn.GRU(hidden_size, hidden_size, n_layers, bidirectional=True)", GRU_DROPOUT_NOTE),
      C("packed = torch.nn.utils.rnn.pack_padded_sequence(embedded, input_lengths)", "unsupported_op_workaround",
        "replace", False, "packed = embedded  # no PackedSequence on NPU", PACK_NOTE),
      C("outputs, output_lengths = torch.nn.utils.rnn.pad_packed_sequence(outputs)", "unsupported_op_workaround",
        "replace", False, "output_lengths = input_lengths  # outputs already padded", PACK_NOTE),
      C("attn_energies = attn_energies.cuda()", "tensor_to_device", "replace", True,
        "attn_energies = attn_energies.npu()", ".cuda() raises without CUDA"),
      C("self.gru = nn.GRU(hidden_size, hidden_size, n_layers, dropout=dropout)", "unsupported_op_workaround",
        "replace", False, "self.gru = nn.GRU(hidden_size, hidden_size, n_layers)", GRU_DROPOUT_NOTE),
      C("=decoder_input = decoder_input.cuda()", "tensor_to_device", "replace", True,
        "decoder_input = decoder_input.npu()", ".cuda() raises without CUDA"),
      C("all_decoder_outputs = all_decoder_outputs.cuda()", "tensor_to_device", "replace", True,
        "all_decoder_outputs = all_decoder_outputs.npu()", ".cuda() raises without CUDA"),
      C("ec = torch.nn.utils.clip_grad_norm(encoder.parameters(), clip)", "unsupported_op_workaround", "replace", False,
        "ec = torch.nn.utils.clip_grad_norm_(encoder.parameters(), clip)",
        "deprecated alias listed ✘ in Ascend's 2.7.1 list while clip_grad_norm_ is ✔; likely works (unconfirmed)"),
      C("dc = torch.nn.utils.clip_grad_norm(decoder.parameters(), clip)", "unsupported_op_workaround", "replace", False,
        "dc = torch.nn.utils.clip_grad_norm_(decoder.parameters(), clip)", "same as the encoder clip"),
      C("input_batches = input_batches.cuda()", "tensor_to_device", "replace", True,
        "input_batches = input_batches.npu()", ".cuda() raises without CUDA"),
      C("decoder_input = decoder_input.cuda()  # single sentence", "tensor_to_device", "replace", True,
        "decoder_input = decoder_input.npu()  # single sentence", ".cuda() raises without CUDA"),
      C("if USE_CUDA: decoder_input = decoder_input.cuda()", "tensor_to_device", "replace", True,
        "if USE_CUDA: decoder_input = decoder_input.npu()", "greedy loop re-feeds the chosen word"),
      C("=encoder.cuda()", "tensor_to_device", "replace", True, "encoder.npu()", "model parameters to the NPU"),
      C("=decoder.cuda()", "tensor_to_device", "replace", True, "decoder.npu()", "model parameters to the NPU"),
  ])

E("keon_seq2seq_model", "model.py", "explicit_replacement",
  "keon/seq2seq model.py (Bahdanau-style attention GRU, hard-coded .cuda() in Seq2Seq.forward)",
  [
      C("dropout=dropout, bidirectional=True)", "unsupported_op_workaround", "replace", False,
        "bidirectional=True)", GRU_DROPOUT_NOTE + " (encoder GRU, 2 layers in train.py)"),
      C("n_layers, dropout=dropout)", "unsupported_op_workaround", "replace", False, "n_layers)",
        GRU_DROPOUT_NOTE + "; the decoder has n_layers=1, where dropout is inert anyway"),
      C("outputs = Variable(torch.zeros(max_len, batch_size, vocab_size)).cuda()", "tensor_to_device", "replace", True,
        "outputs = torch.zeros(max_len, batch_size, vocab_size, device=src.device)",
        "unconditional .cuda() inside the model"),
      C("output = Variable(trg.data[t] if is_teacher else top1).cuda()", "tensor_to_device", "replace", True,
        "output = (trg.data[t] if is_teacher else top1).to(src.device)", "unconditional .cuda() inside the model"),
  ])

E("keon_seq2seq_train", "train.py", "explicit_replacement",
  "keon/seq2seq train.py (assert torch.cuda.is_available())",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("src = src.data.cuda()", "tensor_to_device", "replace", True, "src = src.data.npu()",
        ".cuda() raises without CUDA"),
      C("trg = trg.data.cuda()", "tensor_to_device", "replace", True, "trg = trg.data.npu()",
        ".cuda() raises without CUDA"),
      C("src, trg = src.cuda(), trg.cuda()", "tensor_to_device", "replace", True, "src, trg = src.npu(), trg.npu()",
        ".cuda() raises without CUDA"),
      C("assert torch.cuda.is_available()", "torch_cuda_api", "replace", True, "assert torch.npu.is_available()",
        "assert fails on every NPU host"),
      C("seq2seq = Seq2Seq(encoder, decoder).cuda()", "tensor_to_device", "replace", True,
        "seq2seq = Seq2Seq(encoder, decoder).npu()", "model parameters to the NPU"),
  ])

# ----------------------------------------------------------------------------- session-based recommenders

E("srgnn_model", "pytorch_code/model.py", "device_branch_or_abstraction",
  "CRIPAC-DIG/SR-GNN pytorch_code/model.py (trans_to_cuda / trans_to_cpu helpers)",
  [
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "helper guard is False on an NPU host, so model and every batch silently stay on CPU"),
      C("return variable.cuda()", "tensor_to_device", "replace", True, "return variable.npu()",
        "reached once the guard is ported"),
      C("return variable.cpu() if torch.cuda.is_available() else variable", "torch_cuda_api", "replace", True,
        "return variable.cpu() if torch.npu.is_available() else variable",
        "after trans_to_cuda moves tensors to NPU this guard returns NPU tensors and .numpy() fails"),
  ])

E("dhcn_model", "DHCN/model.py", "device_branch_or_abstraction",
  "DHCN (self-supervised hypergraph session recommender) model.py: torch.sparse adjacency, torch.cuda.FloatTensor buffers",
  [
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "helper guard is False on an NPU host: everything silently stays on CPU"),
      C("return variable.cuda()", "tensor_to_device", "replace", True, "return variable.npu()",
        "reached once the guard is ported"),
      C("if variable.is_cuda:", "tensor_to_device", "replace", True, "if variable.is_npu:",
        "is_cuda is False for NPU tensors: scores come back on NPU and .numpy() fails"),
      C("item_embeddings = torch.sparse.mm(trans_to_cuda(adjacency), item_embeddings)", "unsupported_op_workaround",
        "replace", True,
        "item_embeddings = torch.sparse.mm(adjacency, item_embeddings.cpu()).to(embedding.device)",
        "sparse COO matmul has no NPU kernel and sparse ops without kernels raise instead of falling back (knowledge §3.8); "
        "keep the hypergraph adjacency on CPU (dense N x N is too big for Tmall/Nowplaying)"),
      C("zeros = torch.cuda.FloatTensor(1,self.emb_size).fill_(0)", "torch_cuda_api", "replace", True,
        "zeros = torch.zeros(1, self.emb_size, device=item_embedding.device)",
        "unconditional CUDA constructor (LineConv)"),
      C("zeros = torch.cuda.FloatTensor(1, self.emb_size).fill_(0)", "torch_cuda_api", "replace", True,
        "zeros = torch.zeros(1, self.emb_size, device=item_embedding.device)",
        "unconditional CUDA constructor (generate_sess_emb)"),
      C("seq_h = torch.cuda.FloatTensor(self.batch_size, list(reversed_sess_item.shape)[1], self.emb_size).fill_(0)",
        "torch_cuda_api", "replace", True,
        "seq_h = torch.zeros(self.batch_size, list(reversed_sess_item.shape)[1], self.emb_size, device=item_embedding.device)",
        "unconditional CUDA constructor"),
      C("one = torch.cuda.FloatTensor(neg1.shape[0]).fill_(1)", "torch_cuda_api", "replace", True,
        "one = torch.ones(neg1.shape[0], device=neg1.device)", "unconditional CUDA constructor in the SSL loss"),
  ])

E("gru4rec_main", "main.py", "explicit_replacement",
  "hungthanhpham94/GRU4REC-pytorch main.py (args.cuda flag, --gpu index)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("args.cuda = torch.cuda.is_available() and args.gpu >= 0", "torch_cuda_api", "replace", True,
        "args.cuda = torch.npu.is_available() and args.gpu >= 0",
        "False on an NPU host: use_cuda=False everywhere, silent CPU training (flag name can stay)"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
        "raises without CUDA once the flag is ported"),
      C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)",
        "lazy no-op: NPU generator unseeded (reproducibility only)"),
  ])

E("gru4rec_model", "lib/model.py", "device_branch_or_abstraction",
  "hungthanhpham94/GRU4REC-pytorch lib/model.py (self.device from use_cuda, one-hot buffer)",
  [
      C("self.device = torch.device('cuda' if use_cuda else 'cpu')", "device_type", "replace", True,
        "self.device = torch.device('npu' if use_cuda else 'cpu')",
        "with use_cuda now meaning 'NPU available' the 'cuda' device fails in self.to(self.device)"),
      C("self.gru = nn.GRU(self.embedding_dim, self.hidden_size, self.num_layers, dropout=self.dropout_hidden)",
        "unsupported_op_workaround", "replace", False,
        "self.gru = nn.GRU(self.embedding_dim, self.hidden_size, self.num_layers)",
        GRU_DROPOUT_NOTE + "; main.py defaults to 3 layers so dropout is live on GPU"),
      C("self.gru = nn.GRU(self.input_size, self.hidden_size, self.num_layers, dropout=self.dropout_hidden)",
        "unsupported_op_workaround", "replace", False,
        "self.gru = nn.GRU(self.input_size, self.hidden_size, self.num_layers)", GRU_DROPOUT_NOTE),
  ])

# ----------------------------------------------------------------------------- NCF / CTR

E("ncf_main", "main.py", "explicit_replacement",
  "guoyang9/NCF main.py (CUDA_VISIBLE_DEVICES from --gpu, cudnn.benchmark, .cuda() per batch)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu',
        "card selection via --gpu is silently ignored by the Ascend runtime"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "model parameters to the NPU"),
      C("user = user.cuda()", "tensor_to_device", "replace", True, "user = user.npu()", ".cuda() raises without CUDA"),
      C("item = item.cuda()", "tensor_to_device", "replace", True, "item = item.npu()", ".cuda() raises without CUDA"),
      C("label = label.float().cuda()", "tensor_to_device", "replace", True, "label = label.float().npu()",
        ".cuda() raises without CUDA"),
  ])

E("ncf_evaluate", "evaluate.py", "explicit_replacement",
  "guoyang9/NCF evaluate.py (HR/NDCG with .cuda() on each test batch)",
  [
      C("user = user.cuda()", "tensor_to_device", "replace", True, "user = user.npu()", ".cuda() raises without CUDA"),
      C("item = item.cuda()", "tensor_to_device", "replace", True, "item = item.npu()", ".cuda() raises without CUDA"),
  ])

E("ncf_dle", "ncf.py", "explicit_replacement",
  "NVIDIA DeepLearningExamples PyTorch/Recommendation/NCF ncf.py (21.x: FusedAdam, torch.cuda.amp, env:// + NCCL)",
  [
      C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", True,
        "from torch_npu.optim import NpuFusedAdam",
        "apex FusedAdam is a CUDA multi-tensor kernel; Ascend apex ships no FusedAdam (must be edited by hand)"),
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "synchronized_timestamp(): torch.cuda.synchronize initialises CUDA and raises on an NPU host"),
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.local_rank)", "raises without CUDA; every rank would also default to NPU 0"),
      C("torch.distributed.init_process_group(backend='nccl',", "dist_backend", "replace", True,
        "torch.distributed.init_process_group(backend='hccl',", "NCCL backend is unavailable on Ascend; HCCL is the collective library"),
      C('torch.distributed.broadcast(torch.tensor([1], device="cuda"), 0)', "device_type", "replace", True,
        'torch.distributed.broadcast(torch.tensor([1], device="npu"), 0)', "'cuda' device string"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op when CUDA is not initialised; only affects allocator behaviour"),
      C("optimizer = FusedAdam(model.parameters(), lr=args.learning_rate,", "fused_optimizer", "replace", True,
        "optimizer = NpuFusedAdam(model.parameters(), lr=args.learning_rate,", "follows the import change"),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "model parameters to the NPU"),
      C("criterion = criterion.cuda()", "tensor_to_device", "replace", False, "criterion = criterion.npu()",
        PARAMLESS_NOTE + " (BCEWithLogitsLoss without weight/pos_weight)"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", False,
        "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
        "CUDA scaler disables itself without CUDA: --amp silently runs fp32 (speed only)"),
      C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=args.amp):", "cuda autocast is disabled with a warning on an NPU host"),
  ])

E("ncf_dle_dataloading", "dataloading.py", "explicit_replacement",
  "NVIDIA DeepLearningExamples NCF dataloading.py (whole dataset resident on the GPU, negatives sampled on device)",
  [
      C("chunk_data = torch.load(path_to_load, map_location=torch.device('cuda:{}'.format(self.local_rank)))",
        "device_type", "replace", True,
        "chunk_data = torch.load(path_to_load, map_location=torch.device('npu:{}'.format(self.local_rank)))",
        "'cuda:N' map_location fails on an NPU host"),
      C("dtype=item_features.dtype, device=self.local_rank)", "device_type", "replace", True,
        "dtype=item_features.dtype, device='npu:{}'.format(self.local_rank))",
        "a bare int device in a factory call means a CUDA ordinal (msFmkTransplt and transfer_to_npu both rewrite int device= to 'npu:N')"),
      C("dtype=label_features.dtype, device='cuda:{}'.format(self.local_rank))", "device_type", "replace", True,
        "dtype=label_features.dtype, device='npu:{}'.format(self.local_rank))", "'cuda:N' device string"),
      C("permutation = torch.randperm(self.length_after_augmentation, device='cuda:{}'.format(self.local_rank))",
        "device_type", "replace", True,
        "permutation = torch.randperm(self.length_after_augmentation, device='npu:{}'.format(self.local_rank))",
        "'cuda:N' device string"),
  ])

E("deepctr_basemodel", "deepctr_torch/models/basemodel.py", "device_branch_or_abstraction",
  "shenweichen/DeepCTR-Torch models/basemodel.py (device string + gpus list, DataParallel in fit)",
  [
      C("model = torch.nn.DataParallel(model, device_ids=self.gpus)", "distributed_framework", "replace", True,
        "model = model  # nn.DataParallel is unsupported on NPU; multi-card needs DDP + hccl",
        "✘ in Ascend's API list; reached whenever gpus= is passed"),
  ])

E("deepctr_example", "examples/run_classification_criteo.py", "explicit_replacement",
  "DeepCTR-Torch examples/run_classification_criteo.py (use_cuda / 'cuda:0' device pick)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("if use_cuda and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if use_cuda and torch.npu.is_available():", "False on an NPU host: model silently built on 'cpu'"),
      C("device = 'cuda:0'", "device_type", "replace", True, "device = 'npu:0'",
        "device string handed to BaseModel, .to(device) and torch.zeros(device=...)"),
  ])

E("wdl_train", "criteo_wdl/train.py", "explicit_replacement",
  "multi-GPU Wide&Deep Criteo trainer (apex amp, sparse embeddings + SparseAdam, CUDA-stream prefetcher, NVTX, torch.distributed.launch)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "lazy no-op without CUDA: NPU RNG unseeded"),
      C("self.wide_embeddings = nn.ModuleList([nn.Embedding(n, 1, sparse=sparse) for n in field_dims])",
        "unsupported_op_workaround", "replace", False,
        "self.wide_embeddings = nn.ModuleList([nn.Embedding(n, 1) for n in field_dims])",
        "--sparse path: sparse gradients need sparse kernels on NPU (those without kernels raise); SparseAdam is ✔ in "
        "Ascend's list, so whether this fails is unconfirmed"),
      C("self.deep_embeddings = nn.ModuleList([nn.Embedding(n, embedding_dim, sparse=sparse) for n in field_dims])",
        "unsupported_op_workaround", "replace", False,
        "self.deep_embeddings = nn.ModuleList([nn.Embedding(n, embedding_dim) for n in field_dims])",
        "same as the wide embeddings"),
      C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "self.stream = torch.npu.Stream()",
        "CUDA stream creation raises without CUDA"),
      C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True, "with torch.npu.stream(self.stream):",
        "stream context"),
      C("self.next_dense = self.next_dense.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "self.next_dense = self.next_dense.npu(non_blocking=True)", "H2D copy"),
      C("self.next_cat = self.next_cat.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "self.next_cat = self.next_cat.npu(non_blocking=True)", "H2D copy"),
      C("self.next_label = self.next_label.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "self.next_label = self.next_label.npu(non_blocking=True)", "H2D copy"),
      C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
        "torch.npu.current_stream().wait_stream(self.stream)", "stream sync"),
      C("dense.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
        "dense.record_stream(torch.npu.current_stream())", "caching-allocator stream bookkeeping"),
      C("cat.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
        "cat.record_stream(torch.npu.current_stream())", "caching-allocator stream bookkeeping"),
      C("label.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
        "label.record_stream(torch.npu.current_stream())", "caching-allocator stream bookkeeping"),
      C("return [torch.optim.SparseAdam(sparse_params, lr=args.lr),", "unsupported_op_workaround", "replace", False,
        "return [torch.optim.Adam(sparse_params, lr=args.lr),",
        "goes with dense embeddings (SparseAdam rejects dense grads); unconfirmed whether the sparse path fails"),
      C("dense = dense.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "dense = dense.npu(non_blocking=True)", "eval batch to device"),
      C("cat = cat.cuda(non_blocking=True)", "tensor_to_device", "replace", True, "cat = cat.npu(non_blocking=True)",
        "eval batch to device"),
      C("labels.append(label.cuda(non_blocking=True))", "tensor_to_device", "replace", True,
        "labels.append(label.npu(non_blocking=True))", "eval labels to device"),
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.local_rank)", "raises without CUDA; ranks would also pile on NPU 0"),
      C("os.environ.setdefault('NCCL_ASYNC_ERROR_HANDLING', '1')", "env_var", "replace", False,
        "os.environ.setdefault('HCCL_ASYNC_ERROR_HANDLING', '1')",
        "NCCL_* is ignored by HCCL; HCCL_ASYNC_ERROR_HANDLING is the torch_npu watchdog switch (reportedly on by default)"),
      C("dist.init_process_group(backend='nccl', init_method='env://')", "dist_backend", "replace", True,
        "dist.init_process_group(backend='hccl', init_method='env://')", "NCCL backend unavailable on Ascend"),
      C("sparse=args.sparse).cuda()", "tensor_to_device", "replace", True, "sparse=args.sparse).npu()",
        "model parameters to the NPU"),
      C("model, optimizers = amp.initialize(model, optimizers, opt_level=args.opt_level, loss_scale=loss_scale)", "amp",
        "replace", False,
        "model, optimizers = amp.initialize(model, optimizers, opt_level=args.opt_level, loss_scale=loss_scale, combine_grad=True)",
        "runs unchanged once Ascend apex is installed (requirements change); combine_grad is the NPU performance option"),
      C("ckpt = torch.load(args.resume, map_location=lambda storage, loc: storage.cuda(args.local_rank))",
        "tensor_to_device", "replace", True,
        "ckpt = torch.load(args.resume, map_location='npu:{}'.format(args.local_rank))",
        "storage.cuda() in map_location raises without CUDA"),
      C("torch.cuda.get_device_name(args.local_rank)))", "torch_cuda_api", "replace", True,
        "torch.npu.get_device_name(args.local_rank)))", "initialises CUDA and raises on an NPU host"),
      C("torch.cuda.synchronize()  # start the clock", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # start the clock after the first H2D copy has landed", "raises without CUDA"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "throughput log: raises without CUDA"),
      C("torch.cuda.nvtx.range_push('step_%d' % step)", "torch_cuda_api", "replace", True,
        "rng = torch_npu.npu.mstx.range_start('step_%d' % step)",
        "--profile: torch.cuda.nvtx raises on non-CUDA builds; mstx is the NPU marker API (exact signature unconfirmed)"),
      C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True, "torch_npu.npu.mstx.range_end(rng)",
        "--profile path"),
      C("torch.cuda.max_memory_allocated() / 2 ** 20))", "torch_cuda_api", "replace", False,
        "torch.npu.max_memory_allocated() / 2 ** 20))", "returns 0 without CUDA: log only"),
  ])

E("wdl_run8p", "criteo_wdl/scripts/run_8p.sh", "explicit_replacement",
  "run_8p.sh-style single-node 8-GPU launcher (torch.distributed.launch, NCCL env)",
  [
      C("=#!/bin/bash", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN libraries and paths must be in the environment before python imports torch_npu"),
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
        "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
        "lists all 8 cards, which is the runtime default, so ignoring it changes nothing here"),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=3",
        "NCCL_* is ignored by HCCL; CANN log level is the nearest knob (logging only)"),
      C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
        "single node: the NIC choice only matters for multi-node root-info negotiation"),
      C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "no HCCL counterpart; silently ignored"),
      C("export OMP_NUM_THREADS=4", "env_var", "npu_only_addition", False, "export TASK_QUEUE_ENABLE=1",
        "msFmkTransplt's standard NPU performance setting (task queue); speed only"),
      C("nvidia-smi -L | tee ${log_dir}/devices.txt", "device_capability_check", "replace", False,
        "npu-smi info | tee ${log_dir}/devices.txt",
        "nvidia-smi is absent on an NPU host: 'command not found', the launch still proceeds"),
  ])

E("wdl_requirements", "criteo_wdl/requirements.txt", "explicit_replacement",
  "requirements.txt pinning a cu111 PyTorch wheel and NVIDIA apex",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu111", "device_type", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheel index; torch_npu runs on the CPU torch build (x86 from whl/cpu, aarch64 from plain PyPI)"),
      C("torch==1.9.1+cu111", "device_type", "replace", True, "torch==2.1.0",
        "+cu111 build, and no torch_npu release pairs with torch 1.9.1"),
      C("numpy>=1.19.5", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
        "torch-npu pin matching the torch version (wheel = torch version + .postN)"),
      C("apex @ git+https://github.com/NVIDIA/apex.git@22.03", "amp", "replace", True,
        "# apex: build Ascend/apex (NPU patch applied to NVIDIA apex) and pip install the resulting wheel",
        "NVIDIA apex targets CUDA; Ascend's patched apex provides amp O1/O2 on NPU"),
  ])

E("ncf_dle_docker", "Dockerfile", "explicit_replacement",
  "DeepLearningExamples NCF Dockerfile (NGC PyTorch base image)",
  [
      C("ARG FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:21.04-py3", "device_type", "replace", True,
        "ARG FROM_IMAGE_NAME=swr.cn-south-1.myhuaweicloud.com/ascendhub/ascend-pytorch:24.0.0-A2-2.1.0-ubuntu22.04",
        "NGC image = CUDA/cuDNN/NCCL + CUDA torch; needs a CANN + torch + torch_npu base (tag illustrative)"),
      C("ENV NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "ENV HCCL_ASYNC_ERROR_HANDLING=1",
        "NCCL_* ignored by HCCL; watchdog behaviour only"),
  ])

E("nmt_env", "environment.yml", "explicit_replacement",
  "conda environment.yml for the Annotated Transformer / seq2seq experiments (pytorch channel + cudatoolkit)",
  [
      C("- pytorch=1.0.1", "device_type", "replace", True, "- pytorch=2.1.0",
        "CUDA build from the pytorch channel, and no torch_npu exists for torch 1.0.1"),
      C("- cudatoolkit=10.0", "device_type", "replace", True, "- cpuonly",
        "CUDA runtime package; torch_npu needs the CPU torch build"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post10",
        "torch-npu pin matching the torch version"),
  ])

E("opennmt_config", "config/transformer_wmt_ende.yaml", "explicit_replacement",
  "OpenNMT-py v2 Transformer-base training config (fp16, fusedadam, 4 GPUs)",
  [
      C('optim: "fusedadam"', "fused_optimizer", "replace", True, 'optim: "adam"',
        "OpenNMT maps fusedadam to apex FusedAdam (CUDA kernel) with apex amp; plain adam keeps fp16 via native amp"),
  ])
