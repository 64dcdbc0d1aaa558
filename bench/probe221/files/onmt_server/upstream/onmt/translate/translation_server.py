#!/usr/bin/env python
"""REST Translation server."""
import codecs
import os
import sys
import threading
import time
import traceback
from itertools import islice

import torch

from onmt.constants import DefaultTokens
from onmt.translate.translator import build_translator
from onmt.utils.logging import init_logger
from onmt.utils.misc import check_model_config, set_random_seed
from onmt.utils.parse import ArgumentParser


def critical(func):
    """Decorator for critical section (mutually exclusive code)"""

    def wrapper(server_model, *args, **kwargs):
        if sys.version_info[0] == 3:
            if not server_model.running_lock.acquire(True, 120):
                raise ServerModelError(
                    "Model %d running lock timeout" % server_model.model_id
                )
        else:
            # semaphore doesn't have a timeout arg in Python 2.7
            server_model.running_lock.acquire(True)
        try:
            o = func(server_model, *args, **kwargs)
        except (Exception, RuntimeError):
            server_model.running_lock.release()
            raise
        server_model.running_lock.release()
        return o

    return wrapper


class Timer:
    def __init__(self, start=False):
        self.stime = -1
        self.prev = -1
        self.times = {}
        if start:
            self.start()

    def start(self):
        self.stime = time.time()
        self.prev = self.stime
        self.times = {}

    def tick(self, name=None, tot=False):
        t = time.time()
        if not tot:
            elapsed = t - self.prev
        else:
            elapsed = t - self.stime
        self.prev = t

        if name is not None:
            self.times[name] = elapsed
        return elapsed


class ServerModelError(Exception):
    pass


class CTranslate2Translator(object):
    """This class wraps the ctranslate2.Translator object to
    reproduce the onmt.translate.translator API."""

    def __init__(
        self,
        model_path,
        ct2_translator_args,
        ct2_translate_batch_args,
        target_prefix=False,
        preload=False,
    ):
        import ctranslate2

        self.translator = ctranslate2.Translator(model_path, **ct2_translator_args)
        self.ct2_translate_batch_args = ct2_translate_batch_args
        self.target_prefix = target_prefix
        if preload:
            # perform a first request to initialize everything
            dummy_translation = self.translate(["a"])
            print(
                "Performed a dummy translation to initialize the model",
                dummy_translation,
            )
            time.sleep(1)
            self.translator.unload_model(to_cpu=True)

    @staticmethod
    def convert_onmt_to_ct2_opts(ct2_translator_args, ct2_translate_batch_args, opt):
        def setdefault_if_exists_must_match(obj, name, value):
            if name in obj:
                assert value == obj[name], (
                    f"{name} is different in"
                    " OpenNMT-py config and in CTranslate2 config"
                    f" ({value} vs {obj[name]})"
                )
            else:
                obj.setdefault(name, value)

        default_for_translator = {
            "inter_threads": 1,
            "intra_threads": torch.get_num_threads(),
            "compute_type": "default",
        }
        for name, value in default_for_translator.items():
            ct2_translator_args.setdefault(name, value)

        onmt_for_translator = {
            "device": "cuda" if opt.cuda else "cpu",
            "device_index": opt.gpu if opt.cuda else 0,
        }
        for name, value in onmt_for_translator.items():
            setdefault_if_exists_must_match(ct2_translator_args, name, value)

        onmt_for_translate_batch_enforce = {
            "beam_size": opt.beam_size,
            "max_batch_size": opt.batch_size,
            "num_hypotheses": opt.n_best,
            "max_decoding_length": opt.max_length,
            "min_decoding_length": opt.min_length,
        }
        for name, value in onmt_for_translate_batch_enforce.items():
            setdefault_if_exists_must_match(ct2_translate_batch_args, name, value)

    def translate(self, examples, batch_size=8, tgt=None):
        batch = [ex.split(" ") for ex in examples]
        if self.target_prefix:
            target_prefix = [ex.split(" ") for ex in tgt]
        else:
            target_prefix = None
        preds = self.translator.translate_batch(
            batch, target_prefix=target_prefix, **self.ct2_translate_batch_args
        )
        scores = [list(ex.scores) for ex in preds]
        predictions = [[" ".join(item) for item in ex.hypotheses] for ex in preds]
        return scores, predictions

    def to_cpu(self):
        self.translator.unload_model(to_cpu=True)

    def to_gpu(self):
        self.translator.load_model()


class ServerModel(object):
    """Wrap a model with server functionality.

    Args:
        opt (dict): Options for the Translator
        model_id (int): Model ID
        preprocess_opt (list): Options for preprocess processus or None
        tokenizer_opt (dict): Options for the tokenizer or None
        postprocess_opt (list): Options for postprocess processus or None
        custom_opt (dict): Custom options, can be used within preprocess or
            postprocess, default None
        load (bool): whether to load the model during :func:`__init__()`
        timeout (int): Seconds before running :func:`do_timeout()`
            Negative values means no timeout
        on_timeout (str): Options are ["to_cpu", "unload"]. Set what to do on
            timeout (see :func:`do_timeout()`.)
        model_root (str): Path to the model directory
            it must contain the model and tokenizer file
    """

    def __init__(
        self,
        opt,
        model_id,
        preprocess_opt=None,
        tokenizer_opt=None,
        postprocess_opt=None,
        custom_opt=None,
        load=False,
        timeout=-1,
        on_timeout="to_cpu",
        model_root="./",
        ct2_model=None,
        ct2_translator_args=None,
        ct2_translate_batch_args=None,
    ):
        self.model_root = model_root
        self.opt = self.parse_opt(opt)
        self.custom_opt = custom_opt

        self.model_id = model_id
        self.preprocess_opt = preprocess_opt
        self.tokenizers_opt = tokenizer_opt
        self.postprocess_opt = postprocess_opt
        self.timeout = timeout
        self.on_timeout = on_timeout

        self.ct2_model = (
            os.path.join(model_root, ct2_model) if ct2_model is not None else None
        )
        self.ct2_translator_args = ct2_translator_args or {}
        self.ct2_translate_batch_args = ct2_translate_batch_args or {}

        self.unload_timer = None
        self.user_opt = opt
        self.tokenizers = None

        if len(self.opt.log_file) > 0:
            log_file = os.path.join(model_root, self.opt.log_file)
        else:
            log_file = None
        self.logger = init_logger(log_file=log_file, log_file_level=self.opt.log_file_level, rotate=True)

        self.loading_lock = threading.Event()
        self.loading_lock.set()
        self.running_lock = threading.Semaphore(value=1)

        set_random_seed(self.opt.seed, self.opt.cuda)

        if self.ct2_model is not None:
            CTranslate2Translator.convert_onmt_to_ct2_opts(
                self.ct2_translator_args, self.ct2_translate_batch_args, self.opt
            )

        if load:
            self.load(preload=True)
            self.stop_unload_timer()

    def parse_opt(self, opt):
        """Parse the option set passed by the user using `onmt.opts`

        Args:
           opt (dict): Options passed by the user

        Returns:
           opt (argparse.Namespace): full set of options for the Translator
        """
        prec_argv = sys.argv
        sys.argv = sys.argv[:1]
        parser = ArgumentParser()
        from onmt.opts import translate_opts

        translate_opts(parser)

        models = opt["models"]
        if not isinstance(models, (list, tuple)):
            models = [models]
        opt["models"] = [os.path.join(self.model_root, model) for model in models]
        opt["src"] = "dummy_src"

        for k, v in opt.items():
            if k == "models":
                sys.argv += ["-model"]
                sys.argv += [str(model) for model in v]
            elif type(v) == bool:
                sys.argv += ["-%s" % k]
            else:
                sys.argv += ["-%s" % k, str(v)]

        opt = parser.parse_args()
        ArgumentParser.validate_translate_opts(opt)
        opt.cuda = opt.gpu > -1

        sys.argv = prec_argv
        return opt

    @property
    def loaded(self):
        return hasattr(self, "translator")

    def load(self, preload=False):
        self.loading_lock.clear()

        timer = Timer()
        self.logger.info("Loading model %d" % self.model_id)
        timer.start()

        try:
            if self.ct2_model is not None:
                self.translator = CTranslate2Translator(
                    self.ct2_model,
                    ct2_translator_args=self.ct2_translator_args,
                    ct2_translate_batch_args=self.ct2_translate_batch_args,
                    target_prefix=self.opt.tgt_file_prefix,
                    preload=preload,
                )
            else:
                self.translator = build_translator(
                    self.opt,
                    report_score=False,
                    out_file=codecs.open(os.devnull, "w", "utf-8"),
                )
        except RuntimeError as e:
            raise ServerModelError("Runtime Error: %s" % str(e))

        timer.tick("model_loading")
        self.load_time = timer.tick()
        self.reset_unload_timer()
        self.loading_lock.set()

    def do_timeout(self):
        """Timeout function that frees GPU memory.

        Moves the model to CPU or unloads it; depending on
        attr`self.on_timemout` value
        """
        if self.on_timeout == "unload":
            self.logger.info("Timeout: unloading model %d" % self.model_id)
            self.unload()
        if self.on_timeout == "to_cpu":
            self.logger.info("Timeout: sending model %d to CPU" % self.model_id)
            self.to_cpu()

    @critical
    def unload(self):
        self.logger.info("Unloading model %d" % self.model_id)
        del self.translator
        if self.opt.cuda:
            torch.cuda.empty_cache()
        self.stop_unload_timer()
        self.unload_timer = None

    def stop_unload_timer(self):
        if self.unload_timer is not None:
            self.unload_timer.cancel()

    def reset_unload_timer(self):
        if self.timeout < 0:
            return

        self.stop_unload_timer()
        self.unload_timer = threading.Timer(self.timeout, self.do_timeout)
        self.unload_timer.start()

    @critical
    def to_cpu(self):
        """Move the model to CPU and clear CUDA cache."""
        if type(self.translator) == CTranslate2Translator:
            self.translator.to_cpu()
        else:
            self.translator.model.cpu()
            if self.opt.cuda:
                torch.cuda.empty_cache()  # give the memory back to other models

    def to_gpu(self):
        """Move the model to GPU."""
        if type(self.translator) == CTranslate2Translator:
            self.translator.to_gpu()
        else:
            torch.cuda.set_device(self.opt.gpu)
            self.translator.model.cuda()
